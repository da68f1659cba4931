# Measurement tests (issue 15, src/tune_measure/): the GoogleTest suites link kiln_tune_measure and
# measure the tiny-cnn example, compiled once at build time by the built kiln (every test case
# runs as its own process; compiling in each would cost seconds apiece). redis_measurer_test also
# starts redis-server and kiln-tune-worker processes.
set(_tiny "${PROJECT_BINARY_DIR}/tests/tune_measure_tiny.so")
add_custom_command(OUTPUT "${_tiny}"
  COMMAND "$<TARGET_FILE:kiln_cli>" compile --example tiny-cnn -o "${_tiny}" > /dev/null
  DEPENDS kiln_cli
  COMMENT "Compiling the tiny-cnn example for the measurement tests")
add_custom_target(tune_measure_tiny_artifact DEPENDS "${_tiny}")
foreach(_t tune_measure_measure_artifact_test tune_measure_redis_measurer_test)
  target_link_libraries(${_t} PRIVATE kiln_tune_measure)
  add_dependencies(${_t} kiln_tune_worker tune_measure_tiny_artifact)
  target_compile_definitions(${_t} PRIVATE KILN_TUNE_WORKER_PATH="$<TARGET_FILE:kiln_tune_worker>"
                                           KILN_TUNE_TINY_ARTIFACT="${_tiny}")
endforeach()
