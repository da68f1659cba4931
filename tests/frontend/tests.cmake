# ONNX importer tests that need generated models. A CTest fixture builds small ONNX models
# (onnx.helper) with numpy/PyTorch expected outputs into ${build}/onnx_cases once; the GoogleTest
# binaries below (sources not named *_test.cc, so they are registered here, not discovered) require
# it. kiln_add_fixture_gtest is also used by tests/e2e/tests.cmake.
function(kiln_add_fixture_gtest name source fixture timeout)
  add_executable(${name} "${source}")
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/tests")
  target_compile_definitions(${name} PRIVATE
    KILN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    KILN_BINARY_DIR="${PROJECT_BINARY_DIR}"
    KILN_CLI_PATH="$<TARGET_FILE:kiln_cli>")
  target_link_libraries(${name} PRIVATE kiln kiln_runtime GTest::gtest_main)
  add_dependencies(${name} kiln_cli)
  add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${fixture} TIMEOUT ${timeout})
endfunction()

add_test(NAME frontend.make_onnx_cases
         COMMAND /usr/bin/python3 "${PROJECT_SOURCE_DIR}/tests/frontend/make_onnx_cases.py" "${PROJECT_BINARY_DIR}/onnx_cases")
set_tests_properties(frontend.make_onnx_cases PROPERTIES FIXTURES_SETUP onnx_cases TIMEOUT 300)
kiln_add_fixture_gtest(frontend.onnx_import_cases "${CMAKE_CURRENT_LIST_DIR}/onnx_import_cases.cc" onnx_cases 300)
