# Optional per-layer dependencies of libkiln.
# ONNX frontend (src/frontend/onnx/): Debian's libonnx + protobuf. Protobuf must be found before
# ONNX's CMake config; the `onnx` target carries -DONNX_ML=1 -DONNX_NAMESPACE=onnx and the include
# directories. Linked PRIVATE: only src/frontend/onnx/*.cc include their headers.
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG REQUIRED)
target_link_libraries(kiln PRIVATE onnx onnx_proto protobuf::libprotobuf)
target_compile_definitions(kiln PRIVATE ONNX_ML=1 ONNX_NAMESPACE=onnx)
