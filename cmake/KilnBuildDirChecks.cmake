# Build-directory traps, checked before project() so that nothing (compiler detection, caches of
# checks) is written into the wrong place first. Each gives one message with the fix.
# An in-source build, which litters the tree and breaks out-of-tree builds afterwards.
get_filename_component(_kiln_src "${CMAKE_SOURCE_DIR}" REALPATH)
get_filename_component(_kiln_bin "${CMAKE_BINARY_DIR}" REALPATH)
if(_kiln_src STREQUAL _kiln_bin)
  message(FATAL_ERROR
    "Kiln does not build in its source directory (${_kiln_src}).\n"
    "Fix: remove CMakeCache.txt and CMakeFiles/ there, then 'cmake -S . -B build' "
    "or 'make' (which builds in ./build or $KILN_BUILD_DIR).")
endif()

# A build directory given as a relative path that resolves somewhere else than meant:
# KILN_BUILD_DIR (read by the Makefile and scripts) is relative to the source tree, while a
# relative `cmake -B` is relative to the current directory. Refuse when they disagree.
if(DEFINED ENV{KILN_BUILD_DIR} AND NOT "$ENV{KILN_BUILD_DIR}" STREQUAL "")
  set(_kiln_env_dir "$ENV{KILN_BUILD_DIR}")
  if(NOT IS_ABSOLUTE "${_kiln_env_dir}")
    get_filename_component(_kiln_env_abs "${_kiln_env_dir}" ABSOLUTE BASE_DIR "${CMAKE_SOURCE_DIR}")
    get_filename_component(_kiln_env_abs "${_kiln_env_abs}" REALPATH)
    if(NOT _kiln_env_abs STREQUAL _kiln_bin)
      message(FATAL_ERROR
        "KILN_BUILD_DIR='${_kiln_env_dir}' is a relative path: Kiln resolves it against the "
        "source tree to ${_kiln_env_abs}, but this configure runs in ${_kiln_bin}.\n"
        "Fix: set KILN_BUILD_DIR to an absolute path (e.g. KILN_BUILD_DIR=$PWD/${_kiln_env_dir}) "
        "or configure with -B ${_kiln_env_abs}.")
    endif()
  endif()
endif()
