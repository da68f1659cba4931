# Optional per-layer dependencies of libkiln.
# ONNX frontend (src/frontend/onnx/): Debian's libonnx_proto + protobuf (ONNX's own schema; the
# checker and shape inference of libonnx are not used). Protobuf must be found before ONNX's CMake
# config; the onnx_proto target carries -DONNX_ML=1 -DONNX_NAMESPACE=onnx, the include directories
# and protobuf. Linked PRIVATE: only src/frontend/onnx/onnx_model.cc includes their headers.
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG REQUIRED)
target_link_libraries(kiln PRIVATE onnx_proto protobuf::libprotobuf)
# Auto-tuning measurement (issue 15): kiln_tune_measure (src/tune_measure/, runtime-side, added from
# the top-level CMakeLists.txt) is built into libkiln there, as object files plus the tuner side of
# the Redis measurer, and links hiredis PRIVATE.
