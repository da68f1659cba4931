# Graph passes on the generated models (needs the test_models fixture from tests/e2e/tests.cmake).
include("${CMAKE_CURRENT_LIST_DIR}/../frontend/fixture_gtest.cmake")
kiln_add_fixture_gtest(pass.models "${CMAKE_CURRENT_LIST_DIR}/models_passes.cc" test_models 1800)
