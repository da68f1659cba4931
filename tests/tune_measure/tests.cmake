# Measurement tests (issue 15, src/tune_measure/): the GoogleTest suites link kiln_tune_measure and
# compile a tiny artifact with the built kiln.
target_link_libraries(tune_measure_measure_artifact_test PRIVATE kiln_tune_measure)
add_dependencies(tune_measure_measure_artifact_test kiln_cli)
