# Optional per-layer dependencies of libkiln.
# ONNX frontend (src/frontend/onnx/): Debian's libonnx_proto + protobuf (ONNX's own schema; the
# checker and shape inference of libonnx are not used). Protobuf must be found before ONNX's CMake
# config; the onnx_proto target carries -DONNX_ML=1 -DONNX_NAMESPACE=onnx, the include directories
# and protobuf. Linked PRIVATE: only src/frontend/onnx/onnx_model.cc includes their headers.
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG REQUIRED)
target_link_libraries(kiln PRIVATE onnx_proto protobuf::libprotobuf)

# Auto-tuning (src/tune/, issue 15): the records database is one SQLite file (Debian's
# libsqlite3-dev) and the cost model is XGBoost's C API (Debian's libxgboost-dev 1.7.4; its CMake
# package config is not relied on, the header and library are found directly). Both PRIVATE: only
# src/tune/sqlite_db.cc and src/tune/cost_model_xgboost.cc include their headers.
find_package(SQLite3 REQUIRED)
target_link_libraries(kiln PRIVATE SQLite::SQLite3)
find_path(KILN_XGBOOST_INCLUDE_DIR NAMES xgboost/c_api.h REQUIRED)
find_library(KILN_XGBOOST_LIBRARY NAMES xgboost REQUIRED)
target_include_directories(kiln PRIVATE "${KILN_XGBOOST_INCLUDE_DIR}")
target_link_libraries(kiln PRIVATE "${KILN_XGBOOST_LIBRARY}")

# Auto-tuning measurement (issue 15): kiln_tune_measure (src/tune_measure/, runtime-side, added from
# the top-level CMakeLists.txt) is built into libkiln there, as object files plus the tuner side of
# the Redis measurer, and links hiredis PRIVATE.
