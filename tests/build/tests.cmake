# The static, hidden LLVM link and the runtime's isolation, checked on the built libraries. Not
# under KILN_SANITIZE: an instrumented runtime links libasan/libubsan, and the dependency
# allow-list is for the libraries that ship.
if(NOT KILN_SANITIZE)
  add_test(NAME build.library_inspection
    COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/library_inspection_test.sh"
            $<TARGET_FILE:kiln> $<TARGET_FILE:kiln_runtime> "${PROJECT_SOURCE_DIR}" ${KILN_LLVM_STATIC}
            ${KILN_HIDE_PRIVATE_SYMBOLS})
endif()

# scripts/install-deps.sh: idempotent, and each "cannot install" path gives its message.
add_test(NAME build.install_deps_script
  COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/install_deps_test.sh" "${PROJECT_SOURCE_DIR}"
          "${PROJECT_BINARY_DIR}/test-tmp/install-deps")

# The scripts' build-directory and job-count rules.
add_test(NAME build.scripts_rules
  COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/scripts_test.sh" "${PROJECT_SOURCE_DIR}")
