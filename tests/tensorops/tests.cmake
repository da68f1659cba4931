# Whole-model cases of the indexing / scan / selection / einsum operators (Einsum forms, MatMul
# batch broadcasting, DETR-style top-k post-processing, a GPT-style generation step, pixel-shuffle
# super-resolution, a spatial transformer). A CTest fixture writes them once into
# ${build}/tensorops_models (tests/tensorops/make_tensorops_models.py: onnx.helper + numpy, and
# PyTorch exports); without onnx/torch it says so and the test skips.
include("${CMAKE_CURRENT_LIST_DIR}/../frontend/fixture_gtest.cmake")
add_test(NAME tensorops.make_models
         COMMAND sh -c "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/tests/tensorops/make_tensorops_models.py' '${PROJECT_BINARY_DIR}/tensorops_models' || { echo 'make_tensorops_models.py failed: the tests needing its models will skip'; rm -rf '${PROJECT_BINARY_DIR}/tensorops_models'; }")
set_tests_properties(tensorops.make_models PROPERTIES FIXTURES_SETUP tensorops_models TIMEOUT 300)
kiln_add_fixture_gtest(tensorops.models_e2e "${CMAKE_CURRENT_LIST_DIR}/tensorops_models_e2e.cc" tensorops_models 900)
