# examples/c: a C program that links only libkiln_runtime runs a real artifact (strict C11).
add_executable(kiln_example_run_model "${PROJECT_SOURCE_DIR}/examples/c/run_model.c")
set_target_properties(kiln_example_run_model PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(kiln_example_run_model PRIVATE -Wpedantic -Werror)
target_link_libraries(kiln_example_run_model PRIVATE kiln_runtime)

# Writes the test artifact (needs the compiler: libkiln) and prints the expected output.
add_executable(kiln_make_test_artifact "${CMAKE_CURRENT_LIST_DIR}/make_test_artifact_main.cc")
target_include_directories(kiln_make_test_artifact PRIVATE "${PROJECT_SOURCE_DIR}/src")
target_link_libraries(kiln_make_test_artifact PRIVATE kiln kiln_runtime)

add_test(NAME examples.c_program_runs_artifact
  COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/c_example_test.sh" $<TARGET_FILE:kiln_make_test_artifact>
          $<TARGET_FILE:kiln_example_run_model> "${PROJECT_BINARY_DIR}/test-work/c-example")
