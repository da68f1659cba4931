# Runtime tests beyond the GoogleTest suites (which tests/CMakeLists.txt registers).

# The C API from C: compiled as strict C11, linked against libkiln_runtime only.
add_executable(runtime_c_api_c_test "${CMAKE_CURRENT_LIST_DIR}/c_api_test.c")
set_target_properties(runtime_c_api_c_test PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
                                                      C_EXTENSIONS OFF)
target_compile_options(runtime_c_api_c_test PRIVATE -Wpedantic -Werror)
target_link_libraries(runtime_c_api_c_test PRIVATE kiln_runtime)
add_test(NAME runtime.c_api_from_c COMMAND runtime_c_api_c_test)

# KILN_NUM_THREADS is read once per process, so each setting runs as its own process.
add_executable(runtime_num_threads_env "${CMAKE_CURRENT_LIST_DIR}/num_threads_env_main.cc")
target_link_libraries(runtime_num_threads_env PRIVATE kiln_runtime)
add_test(NAME runtime.num_threads_env_honoured COMMAND runtime_num_threads_env 3)
set_tests_properties(runtime.num_threads_env_honoured PROPERTIES ENVIRONMENT "KILN_NUM_THREADS=3")
# An invalid value is reported (not silently ignored) and one thread per core is used.
add_test(NAME runtime.num_threads_env_invalid_warns
  COMMAND sh -c "out=$(\"$0\" $1 2>&1); rc=$?; echo \"$out\"; [ $rc -eq 0 ] && echo \"$out\" | grep -q \"warning: ignoring KILN_NUM_THREADS='lots'\""
          $<TARGET_FILE:runtime_num_threads_env> cores)
set_tests_properties(runtime.num_threads_env_invalid_warns PROPERTIES ENVIRONMENT "KILN_NUM_THREADS=lots")

# libkiln_runtime stays small (issue 6: at most 1 MB), checked on optimized builds (a Debug build
# carries debug information and is not what ships, nor is a sanitizer build).
if(CMAKE_BUILD_TYPE MATCHES "^(Release|MinSizeRel)$" AND NOT KILN_SANITIZE)  # sanitizers grow it
  add_test(NAME runtime.library_size_at_most_1MB
    COMMAND sh -c "size=$(stat -L -c %s \"$0\"); echo \"libkiln_runtime: $size bytes (limit 1048576)\"; [ \"$size\" -le 1048576 ]"
            $<TARGET_FILE:kiln_runtime>)
endif()

# The profiler's report and the trace's JSON are internal to libkiln_runtime (hidden symbols):
# their tests compile them in.
target_sources(runtime_profile_report_test PRIVATE "${PROJECT_SOURCE_DIR}/src/runtime/profile_report.cc")
target_sources(runtime_trace_json_test PRIVATE "${PROJECT_SOURCE_DIR}/src/runtime/trace_json.cc")
