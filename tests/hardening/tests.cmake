# Hardening tests that need generated hostile models (issue 14, docs/reliability.md): a CTest
# fixture writes them with onnx.helper; without onnx for /usr/bin/python3 the tests skip.
include("${PROJECT_SOURCE_DIR}/tests/frontend/fixture_gtest.cmake")
add_test(NAME hardening.make_hostile_models
         COMMAND sh -c "/usr/bin/python3 '${CMAKE_CURRENT_LIST_DIR}/make_hostile_models.py' '${PROJECT_BINARY_DIR}/hostile_models' || { echo 'make_hostile_models.py failed: the tests needing its models will skip'; rm -rf '${PROJECT_BINARY_DIR}/hostile_models'; }")
set_tests_properties(hardening.make_hostile_models PROPERTIES FIXTURES_SETUP hostile_models TIMEOUT 300)
kiln_add_fixture_gtest(hardening.hostile_models "${CMAKE_CURRENT_LIST_DIR}/hostile_models.cc" hostile_models 300)

# A measuring tool, not a test: the whole-file checksum's share of an artifact's load time.
add_executable(kiln_time_checksum "${CMAKE_CURRENT_LIST_DIR}/time_checksum.cc")
target_link_libraries(kiln_time_checksum PRIVATE kiln_runtime)
