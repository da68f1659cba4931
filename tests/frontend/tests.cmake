# ONNX importer tests that need generated models. A CTest fixture builds small ONNX models
# (onnx.helper) with numpy/PyTorch expected outputs into ${build}/onnx_cases once; the GoogleTest
# binaries below (sources not named *_test.cc, so they are registered here, not discovered) require
# it.
include("${CMAKE_CURRENT_LIST_DIR}/fixture_gtest.cmake")

# When the models cannot be made (no onnx/torch for /usr/bin/python3) the fixture says so and the
# tests that need them skip with that reason instead of failing.
add_test(NAME frontend.make_onnx_cases
         COMMAND sh -c "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/tests/frontend/make_onnx_cases.py' '${PROJECT_BINARY_DIR}/onnx_cases' || { echo 'make_onnx_cases.py failed: the tests needing its models will skip'; rm -rf '${PROJECT_BINARY_DIR}/onnx_cases'; }")
set_tests_properties(frontend.make_onnx_cases PROPERTIES FIXTURES_SETUP onnx_cases TIMEOUT 300)
kiln_add_fixture_gtest(frontend.onnx_import_cases "${CMAKE_CURRENT_LIST_DIR}/onnx_import_cases.cc" onnx_cases 300)

# Old opsets (7..10) and other exporters' graph forms: models from make_onnx_opset_cases.py, run on
# the reference executor and compiled.
add_test(NAME frontend.make_onnx_opset_cases
         COMMAND sh -c "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/tests/frontend/make_onnx_opset_cases.py' '${PROJECT_BINARY_DIR}/onnx_opset' || { echo 'make_onnx_opset_cases.py failed: the tests needing its models will skip'; rm -rf '${PROJECT_BINARY_DIR}/onnx_opset'; }")
set_tests_properties(frontend.make_onnx_opset_cases PROPERTIES FIXTURES_SETUP onnx_opset_cases TIMEOUT 300)
kiln_add_fixture_gtest(frontend.onnx_opset_cases "${CMAKE_CURRENT_LIST_DIR}/onnx_opset_cases.cc" onnx_opset_cases 900)

# Pre-quantized models (QDQ CNN, QLinearConv, DynamicQuantizeLinear + ConvInteger, bad parameters):
# models from make_quant_cases.py, run on the reference executor and compiled (docs/int8.md).
add_test(NAME frontend.make_quant_cases
         COMMAND sh -c "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/tests/frontend/make_quant_cases.py' '${PROJECT_BINARY_DIR}/onnx_quant' || { echo 'make_quant_cases.py failed: the tests needing its models will skip'; rm -rf '${PROJECT_BINARY_DIR}/onnx_quant'; }")
set_tests_properties(frontend.make_quant_cases PROPERTIES FIXTURES_SETUP onnx_quant_cases TIMEOUT 300)
kiln_add_fixture_gtest(frontend.onnx_quant_cases "${CMAKE_CURRENT_LIST_DIR}/onnx_quant_cases.cc" onnx_quant_cases 300)

# Models with symbolic input dimensions and data sets at several sizes (a hand-built PyTorch-style
# shape computation, a PyTorch encoder exported with dynamic batch and seq): models from
# make_dynamic_cases.py, imported once symbolically and checked at every size (docs/dynamic.md).
add_test(NAME frontend.make_dynamic_cases
         COMMAND sh -c "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/tests/frontend/make_dynamic_cases.py' '${PROJECT_BINARY_DIR}/onnx_dynamic' || { echo 'make_dynamic_cases.py failed: the tests needing its models will skip'; rm -rf '${PROJECT_BINARY_DIR}/onnx_dynamic'; }")
set_tests_properties(frontend.make_dynamic_cases PROPERTIES FIXTURES_SETUP onnx_dynamic_cases TIMEOUT 300)
kiln_add_fixture_gtest(frontend.onnx_dynamic_cases "${CMAKE_CURRENT_LIST_DIR}/onnx_dynamic_cases.cc" onnx_dynamic_cases 600)
