# kiln_add_fixture_gtest(NAME SOURCE FIXTURE TIMEOUT): a GoogleTest binary registered as one CTest
# test that requires a CTest fixture (generated models). Used by tests/frontend and tests/e2e.
include_guard(GLOBAL)
function(kiln_add_fixture_gtest name source fixture timeout)
  add_executable(${name} "${source}")
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/tests" "${PROJECT_SOURCE_DIR}/tools")
  target_compile_definitions(${name} PRIVATE
    KILN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    KILN_BINARY_DIR="${PROJECT_BINARY_DIR}"
    KILN_CLI_PATH="$<TARGET_FILE:kiln_cli>")
  target_link_libraries(${name} PRIVATE kiln kiln_runtime GTest::gtest_main)
  add_dependencies(${name} kiln_cli)
  add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${fixture} TIMEOUT ${timeout})
endfunction()
