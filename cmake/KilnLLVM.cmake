# Finds LLVM through llvm-config, checks it, and defines the interface target kiln_llvm that the
# compiler library (and only it) links.
#
# Checks, each turning a classic trap into one message with the fix:
#   - no llvm-config found, or the one given does not run;
#   - an unsupported LLVM version (Kiln is written against LLVM 19's C++ API);
#   - an include directory without llvm/IR/IRBuilder.h (runtime package without -dev headers);
#   - missing static archives when KILN_LLVM_STATIC=ON (checked here, not after the whole compile).
set(KILN_LLVM_SUPPORTED_MAJORS 19)
set(_kiln_llvm_fix "Fix: 'apt-get install llvm-19-dev libzstd-dev' (scripts/install-deps.sh does it), or pass -DKILN_LLVM_CONFIG=/usr/lib/llvm-19/bin/llvm-config")

if(KILN_LLVM_CONFIG)
  if(NOT EXISTS "${KILN_LLVM_CONFIG}")
    message(FATAL_ERROR "KILN_LLVM_CONFIG='${KILN_LLVM_CONFIG}' does not exist.\n${_kiln_llvm_fix}")
  endif()
else()
  foreach(_m IN LISTS KILN_LLVM_SUPPORTED_MAJORS)
    find_program(_kiln_llvm_config_${_m} NAMES llvm-config-${_m}
                 PATHS /usr/lib/llvm-${_m}/bin NO_CACHE)
    if(_kiln_llvm_config_${_m})
      set(KILN_LLVM_CONFIG "${_kiln_llvm_config_${_m}}" CACHE FILEPATH "Path of llvm-config" FORCE)
      break()
    endif()
  endforeach()
  if(NOT KILN_LLVM_CONFIG)
    find_program(_kiln_llvm_config_plain NAMES llvm-config NO_CACHE)
    if(_kiln_llvm_config_plain)
      set(KILN_LLVM_CONFIG "${_kiln_llvm_config_plain}")
    else()
      message(FATAL_ERROR "No llvm-config found: Kiln needs LLVM ${KILN_LLVM_SUPPORTED_MAJORS}.\n${_kiln_llvm_fix}")
    endif()
  endif()
endif()

function(_kiln_llvm_query flag out)
  execute_process(COMMAND "${KILN_LLVM_CONFIG}" ${flag} OUTPUT_VARIABLE _v RESULT_VARIABLE _rc
                  ERROR_VARIABLE _err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "'${KILN_LLVM_CONFIG} ${flag}' failed (${_rc}): ${_err}\n${_kiln_llvm_fix}")
  endif()
  set(${out} "${_v}" PARENT_SCOPE)
endfunction()

_kiln_llvm_query(--version KILN_LLVM_VERSION)
string(REGEX MATCH "^[0-9]+" KILN_LLVM_MAJOR "${KILN_LLVM_VERSION}")
if(NOT KILN_LLVM_MAJOR IN_LIST KILN_LLVM_SUPPORTED_MAJORS)
  message(FATAL_ERROR
    "${KILN_LLVM_CONFIG} is LLVM ${KILN_LLVM_VERSION}, which Kiln does not support "
    "(supported: LLVM ${KILN_LLVM_SUPPORTED_MAJORS}).\n${_kiln_llvm_fix}")
endif()
_kiln_llvm_query(--includedir KILN_LLVM_INCLUDE_DIR)
_kiln_llvm_query(--cmakedir KILN_LLVM_CMAKE_DIR)
if(NOT EXISTS "${KILN_LLVM_INCLUDE_DIR}/llvm/IR/IRBuilder.h")
  message(FATAL_ERROR
    "LLVM ${KILN_LLVM_VERSION} at ${KILN_LLVM_CONFIG} has no headers: "
    "${KILN_LLVM_INCLUDE_DIR}/llvm/IR/IRBuilder.h is missing (the -dev package is not installed).\n"
    "${_kiln_llvm_fix}")
endif()

find_package(LLVM ${KILN_LLVM_VERSION} EXACT REQUIRED CONFIG PATHS "${KILN_LLVM_CMAKE_DIR}" NO_DEFAULT_PATH)
message(STATUS "Kiln: LLVM ${LLVM_PACKAGE_VERSION} from ${KILN_LLVM_CONFIG} (static: ${KILN_LLVM_STATIC})")

# The components Kiln's code generator uses: IR, the O3 pipeline, ORC JIT, and the x86-64 and
# AArch64 back ends (AArch64 for cross-compiled artifacts).
set(KILN_LLVM_COMPONENTS
  Core Support TargetParser Passes Analysis TransformUtils IPO Vectorize InstCombine ScalarOpts
  OrcJIT Object MC Target CodeGen AsmParser Linker BitWriter
  X86CodeGen X86AsmParser X86Desc X86Info
  AArch64CodeGen AArch64AsmParser AArch64Desc AArch64Info)

add_library(kiln_llvm INTERFACE)
target_include_directories(kiln_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
separate_arguments(_kiln_llvm_defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(kiln_llvm INTERFACE ${_kiln_llvm_defs})
target_compile_definitions(kiln_llvm INTERFACE KILN_LLVM_STATIC_LINK=$<BOOL:${KILN_LLVM_STATIC}>)

if(KILN_LLVM_STATIC)
  llvm_map_components_to_libnames(_kiln_llvm_libs ${KILN_LLVM_COMPONENTS})
  # Walk the imported targets and their dependencies; every archive must exist now, not at the
  # final link after the whole compile.
  set(_kiln_seen "")
  set(_kiln_missing "")
  set(_kiln_todo ${_kiln_llvm_libs})
  while(_kiln_todo)
    list(POP_FRONT _kiln_todo _lib)
    if(_lib IN_LIST _kiln_seen OR NOT TARGET ${_lib})
      continue()
    endif()
    list(APPEND _kiln_seen ${_lib})
    # Distributions export only some configurations (Debian: RELWITHDEBINFO only), so check the
    # location of every configuration the target has, plus the configuration-less one.
    get_target_property(_cfgs ${_lib} IMPORTED_CONFIGURATIONS)
    set(_locs "")
    foreach(_prop IMPORTED_LOCATION IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO)
      get_target_property(_loc ${_lib} ${_prop})
      if(_loc)
        list(APPEND _locs "${_loc}")
      endif()
    endforeach()
    if(_cfgs)
      foreach(_cfg IN LISTS _cfgs)
        string(TOUPPER "${_cfg}" _cfg)
        get_target_property(_loc ${_lib} IMPORTED_LOCATION_${_cfg})
        if(_loc)
          list(APPEND _locs "${_loc}")
        endif()
      endforeach()
    endif()
    if(NOT _locs)
      list(APPEND _kiln_missing "${_lib} (the LLVM CMake package names no file for it)")
    endif()
    list(REMOVE_DUPLICATES _locs)
    foreach(_loc IN LISTS _locs)
      if(NOT EXISTS "${_loc}")
        list(APPEND _kiln_missing "${_loc}")
      endif()
    endforeach()
    get_target_property(_deps ${_lib} INTERFACE_LINK_LIBRARIES)
    if(_deps)
      foreach(_d IN LISTS _deps)
        if(_d MATCHES "^LLVM")
          list(APPEND _kiln_todo ${_d})
        endif()
      endforeach()
    endif()
  endwhile()
  if(_kiln_missing)
    list(JOIN _kiln_missing "\n  " _kiln_missing_text)
    message(FATAL_ERROR
      "KILN_LLVM_STATIC=ON but these LLVM static libraries are missing:\n  ${_kiln_missing_text}\n"
      "${_kiln_llvm_fix}; or build with -DKILN_LLVM_STATIC=OFF to link the shared libLLVM.")
  endif()
  target_link_libraries(kiln_llvm INTERFACE ${_kiln_llvm_libs})
else()
  target_link_libraries(kiln_llvm INTERFACE LLVM)
endif()
