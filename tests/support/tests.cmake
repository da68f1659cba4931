# KILN_LOG is read from the environment once per process: each setting runs as its own process.
add_executable(support_log_env "${CMAKE_CURRENT_LIST_DIR}/log_env_main.cc")
target_link_libraries(support_log_env PRIVATE kiln)

# Only codegen's debug message and ir's warning (the default level) pass KILN_LOG=codegen=debug.
add_test(NAME support.log_env_filters_per_component
  COMMAND sh -c "out=$(\"$0\" 2>&1); echo \"$out\"; [ \"$out\" = \"$1\" ]"
          $<TARGET_FILE:support_log_env>
          "[kiln codegen debug] codegen debug message\n[kiln ir warning] ir warning message")
set_tests_properties(support.log_env_filters_per_component PROPERTIES ENVIRONMENT "KILN_LOG=codegen=debug")

# A malformed KILN_LOG is reported once and the default filter is used.
add_test(NAME support.log_env_malformed_is_reported
  COMMAND sh -c "out=$(\"$0\" 2>&1); echo \"$out\"; [ \"$out\" = \"$1\" ]"
          $<TARGET_FILE:support_log_env>
          "[kiln] warning: ignoring KILN_LOG: KILN_LOG: unknown log level 'loud' in 'ir=loud'\n[kiln ir warning] ir warning message")
set_tests_properties(support.log_env_malformed_is_reported PROPERTIES ENVIRONMENT "KILN_LOG=ir=loud")
