# A real, end-to-end runtime ABI mismatch for `kiln doctor`: a test-only libkiln_runtime built
# from the same sources with KILN_RUNTIME_ABI_OVERRIDE=99 into its own directory. Its soname is
# the real one (libkiln_runtime.so.1), so with LD_LIBRARY_PATH pointing there the dynamic loader
# picks it instead of the build tree's (kiln's RUNPATH is searched after LD_LIBRARY_PATH), and
# doctor must report the mismatch and exit non-zero. The test also checks which file was loaded,
# so it fails if the loader kept the normal runtime.
file(GLOB _kiln_runtime_sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/runtime/*.cc")
add_library(kiln_runtime_abi99 SHARED EXCLUDE_FROM_ALL ${_kiln_runtime_sources})
target_include_directories(kiln_runtime_abi99 PRIVATE "${PROJECT_SOURCE_DIR}/include")
target_compile_definitions(kiln_runtime_abi99 PRIVATE
  KILN_RUNTIME_BUILDING KILN_VERSION_STRING="${PROJECT_VERSION}" KILN_RUNTIME_ABI_OVERRIDE=99)
target_link_libraries(kiln_runtime_abi99 PRIVATE Threads::Threads)
set_target_properties(kiln_runtime_abi99 PROPERTIES
  OUTPUT_NAME kiln_runtime
  LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/test-lib/runtime-abi99"
  VERSION ${PROJECT_VERSION} SOVERSION ${KILN_RUNTIME_ABI_VERSION}
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_link_options(kiln_runtime_abi99 PRIVATE
  "-Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/kiln_runtime_exports.map")
# EXCLUDE_FROM_ALL: only the test build (through the dependency below) makes it.
add_dependencies(tools_cli_test kiln_runtime_abi99)

add_test(NAME tools.doctor_detects_runtime_abi_mismatch
  COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/doctor_mismatch_test.sh" $<TARGET_FILE:kiln_cli>
          "${PROJECT_BINARY_DIR}/test-lib/runtime-abi99")

# kiln_node_suite (tools/node_suite) on a few node tests: run, report, Markdown splice.
add_test(NAME tools.node_suite_smoke
  COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/node_suite_test.sh" $<TARGET_FILE:kiln_node_suite> "${PROJECT_SOURCE_DIR}"
          "${PROJECT_BINARY_DIR}/test_data/node_suite")
set_tests_properties(tools.node_suite_smoke PROPERTIES TIMEOUT 300 SKIP_REGULAR_EXPRESSION "SKIP: ")
