# Post-training quantization (kiln quantize, src/driver/quantize*.cc): a fixture trains a small CNN
# on scikit-learn's digits and exports it and an MLP (tests/driver/make_quantize_cases.py, a few
# seconds); driver.quantize quantizes them and checks accuracy, the error report and the errors;
# driver.quantize_accuracy checks --equalize and --bias-correction on the inverted-residual nets.
include("${CMAKE_CURRENT_LIST_DIR}/../frontend/fixture_gtest.cmake")
add_test(NAME driver.make_quantize_cases
         COMMAND sh -c "/usr/bin/python3 '${CMAKE_CURRENT_LIST_DIR}/make_quantize_cases.py' '${PROJECT_BINARY_DIR}/quantize_cases' || { echo 'make_quantize_cases.py failed (needs torch, onnx, sklearn): driver.quantize will skip'; rm -rf '${PROJECT_BINARY_DIR}/quantize_cases'; }")
set_tests_properties(driver.make_quantize_cases PROPERTIES FIXTURES_SETUP quantize_cases TIMEOUT 300)
kiln_add_fixture_gtest(driver.quantize "${CMAKE_CURRENT_LIST_DIR}/quantize_e2e.cc" quantize_cases 600)
kiln_add_fixture_gtest(driver.quantize_accuracy "${CMAKE_CURRENT_LIST_DIR}/quantize_accuracy_e2e.cc" quantize_cases 300)
