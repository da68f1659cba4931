# Recurrent layers end to end (LSTM/GRU/RNN): a fixture makes ONNX cases with expected outputs from
# a numpy oracle of the ONNX equations and from PyTorch (make_recurrent_cases.py); e2e.recurrent
# runs each on the reference executor and compiled. Without onnx/torch the fixture says so and the
# test skips.
include("${CMAKE_CURRENT_LIST_DIR}/../../frontend/fixture_gtest.cmake")
add_test(NAME e2e.make_recurrent_cases
         COMMAND sh -c "/usr/bin/python3 '${CMAKE_CURRENT_LIST_DIR}/make_recurrent_cases.py' '${PROJECT_BINARY_DIR}/recurrent_cases' || { echo 'make_recurrent_cases.py failed: e2e.recurrent will skip'; rm -rf '${PROJECT_BINARY_DIR}/recurrent_cases'; }")
set_tests_properties(e2e.make_recurrent_cases PROPERTIES FIXTURES_SETUP recurrent_cases TIMEOUT 300)
kiln_add_fixture_gtest(e2e.recurrent "${CMAKE_CURRENT_LIST_DIR}/recurrent_e2e.cc" recurrent_cases 1200)
