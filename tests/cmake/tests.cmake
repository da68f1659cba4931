# Configure-time checks: one CTest per build trap, each a fresh `cmake` configure that must stop
# at the check with its message (tests/cmake/configure_trap_test.sh builds the fakes).
foreach(_trap llvm_version llvm_headers llvm_static no_cxx20 relative_build_dir in_source)
  add_test(NAME cmake.configure_trap_${_trap}
    COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/configure_trap_test.sh" ${_trap}
            "${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}/test-tmp/configure-trap-${_trap}")
  set_tests_properties(cmake.configure_trap_${_trap} PROPERTIES TIMEOUT 120)
endforeach()
