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

# One artifact shared by many threads: bit-identical outputs, no RSS growth, allocation failure
# an error (tests/hardening/load_shared_module.cc; the 32 x 1,000 run and the soak: scripts/soak.sh).
add_executable(kiln_load_test "${CMAKE_CURRENT_LIST_DIR}/load_shared_module.cc")
target_link_libraries(kiln_load_test PRIVATE kiln_runtime Threads::Threads)
add_test(NAME hardening.load_artifact
         COMMAND "$<TARGET_FILE:kiln_cli>" compile --example tiny-cnn -o "${PROJECT_BINARY_DIR}/hardening_load.so")
set_tests_properties(hardening.load_artifact PROPERTIES FIXTURES_SETUP hardening_load TIMEOUT 300)
add_test(NAME hardening.load_shared_module
         COMMAND kiln_load_test "${PROJECT_BINARY_DIR}/hardening_load.so" --threads 8 --runs 100 --oom)
set_tests_properties(hardening.load_shared_module PROPERTIES FIXTURES_REQUIRED hardening_load TIMEOUT 300)
