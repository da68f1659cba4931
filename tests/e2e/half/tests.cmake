# float16/bfloat16 models end to end: a fixture exports PyTorch models and stores them in half
# precision (make_half_models.py); e2e.half_models compiles each and compares with the float32
# PyTorch output. Without torch/torchvision the fixture says so and the test skips.
include("${CMAKE_CURRENT_LIST_DIR}/../../frontend/fixture_gtest.cmake")
add_test(NAME e2e.make_half_models
         COMMAND sh -c "/usr/bin/python3 '${CMAKE_CURRENT_LIST_DIR}/make_half_models.py' '${PROJECT_BINARY_DIR}/half_models' || { echo 'make_half_models.py failed: e2e.half_models will skip'; rm -rf '${PROJECT_BINARY_DIR}/half_models'; }")
set_tests_properties(e2e.make_half_models PROPERTIES FIXTURES_SETUP half_models TIMEOUT 600)
kiln_add_fixture_gtest(e2e.half_models "${CMAKE_CURRENT_LIST_DIR}/half_models_e2e.cc" half_models 1200)
