# The tuner's tests (tests/tune/tuner_test.cc, tune_cli_test.cc) measure with the local measurer
# (kiln_tune_measure, src/tune_measure/: internal to libkiln) and run the built `kiln`.
target_link_libraries(tune_tuner_test PRIVATE kiln_tune_measure)
add_dependencies(tune_tune_cli_test kiln_cli)
target_link_libraries(tune_layer_choice_test PRIVATE kiln_tune_measure)
target_link_libraries(tune_model_check_test PRIVATE kiln_tune_measure)
