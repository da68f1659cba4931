# kiln-run-npy (examples/c/run_npy.c): runs an artifact on .npy inputs and writes .npy outputs,
# linking libkiln_runtime only. Built in every configuration (the device package ships it; the
# AArch64 tests run it under qemu-aarch64).
#
# In a cross build the runtime's public headers still include <dlpack/dlpack.h>, which the cross
# compiler does not look for in the host's /usr/include: the header (architecture-independent,
# Debian's libdlpack-dev) is staged into the build tree.
if(CMAKE_CROSSCOMPILING)
  find_file(KILN_HOST_DLPACK_HEADER dlpack/dlpack.h PATHS /usr/include /usr/local/include
            NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  if(NOT KILN_HOST_DLPACK_HEADER)
    message(FATAL_ERROR "dlpack/dlpack.h not found on the build machine: install libdlpack-dev "
                        "(scripts/install-deps.sh)")
  endif()
  file(COPY "${KILN_HOST_DLPACK_HEADER}" DESTINATION "${CMAKE_BINARY_DIR}/staged-include/dlpack")
  target_include_directories(kiln_runtime SYSTEM PUBLIC "$<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/staged-include>")
endif()

add_executable(kiln_run_npy "${PROJECT_SOURCE_DIR}/examples/c/run_npy.c")
set_target_properties(kiln_run_npy PROPERTIES OUTPUT_NAME kiln-run-npy
  C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(kiln_run_npy PRIVATE -Wpedantic -Werror)
target_link_libraries(kiln_run_npy PRIVATE kiln_runtime)
