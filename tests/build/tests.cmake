# The static, hidden LLVM link and the runtime's isolation, checked on the built libraries.
add_test(NAME build.library_inspection
  COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/library_inspection_test.sh"
          $<TARGET_FILE:kiln> $<TARGET_FILE:kiln_runtime> "${PROJECT_SOURCE_DIR}" ${KILN_LLVM_STATIC}
          ${KILN_HIDE_PRIVATE_SYMBOLS})
