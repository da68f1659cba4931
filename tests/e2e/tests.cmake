# End-to-end tests. A fixture generates the test models once (scripts/gen_test_models.py:
# ResNet-50, MobileNetV2, BERT-style encoder + inputs + PyTorch outputs) into ${build}/models;
# e2e.models imports and runs them on the reference executor. e2e.cli runs the real `kiln`
# binary on the small importer cases (fixture from tests/frontend/tests.cmake).
include("${CMAKE_CURRENT_LIST_DIR}/../frontend/fixture_gtest.cmake")
# A failed generation is reported here and makes e2e.models skip with the reason (GTEST_SKIP).
add_test(NAME e2e.gen_test_models
         COMMAND sh -c "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/scripts/gen_test_models.py' --out '${PROJECT_BINARY_DIR}/models' || echo 'gen_test_models.py failed: e2e.models will skip'")
set_tests_properties(e2e.gen_test_models PROPERTIES FIXTURES_SETUP test_models TIMEOUT 900)
kiln_add_fixture_gtest(e2e.models "${CMAKE_CURRENT_LIST_DIR}/models_e2e.cc" test_models 900)
kiln_add_fixture_gtest(e2e.cli "${CMAKE_CURRENT_LIST_DIR}/cli_e2e.cc" onnx_cases 300)
kiln_add_fixture_gtest(e2e.compile_models "${CMAKE_CURRENT_LIST_DIR}/compile_models_e2e.cc" test_models 1800)
# The convolution family's whole models (scripts/gen_conv_models.py: ConvTranspose decoders,
# 1-D and 3-D convolutions, pooling at every rank) against PyTorch, reference and compiled.
add_test(NAME e2e.gen_conv_models
         COMMAND sh -c "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/scripts/gen_conv_models.py' --out '${PROJECT_BINARY_DIR}/conv_models' && /usr/bin/python3 '${CMAKE_CURRENT_LIST_DIR}/make_conv_cases.py' '${PROJECT_BINARY_DIR}/conv_models' || echo 'conv model/case generation failed: e2e.conv_models will skip'")
set_tests_properties(e2e.gen_conv_models PROPERTIES FIXTURES_SETUP conv_models TIMEOUT 600)
kiln_add_fixture_gtest(e2e.conv_models "${CMAKE_CURRENT_LIST_DIR}/conv_models_e2e.cc" conv_models 900)

# Control flow (If/Loop/Scan): models from tests/e2e/make_control_flow_models.py, reference and compiled.
add_test(NAME e2e.make_control_flow_models
         COMMAND sh -c "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/tests/e2e/make_control_flow_models.py' '${PROJECT_BINARY_DIR}/control_flow_models' || { echo 'make_control_flow_models.py failed: e2e.control_flow will skip'; rm -rf '${PROJECT_BINARY_DIR}/control_flow_models'; }")
set_tests_properties(e2e.make_control_flow_models PROPERTIES FIXTURES_SETUP control_flow_models TIMEOUT 300)
kiln_add_fixture_gtest(e2e.control_flow "${CMAKE_CURRENT_LIST_DIR}/control_flow_e2e.cc" control_flow_models 600)
