# Edge deployment (docs/deploy.md): AArch64 artifacts run under qemu-user, and the .deb packages.
# deploy.build_runtime_aarch64 cross-builds libkiln_runtime + kiln-run-npy into
# ${build}/aarch64-runtime (scripts/build-runtime-aarch64.sh); without the cross compiler it
# prints why and the AArch64 tests skip with the same advice.
include("${CMAKE_CURRENT_LIST_DIR}/../frontend/fixture_gtest.cmake")
add_test(NAME deploy.build_runtime_aarch64
         COMMAND sh -c "if command -v aarch64-linux-gnu-g++ >/dev/null; then bash '${PROJECT_SOURCE_DIR}/scripts/build-runtime-aarch64.sh' '${PROJECT_BINARY_DIR}/aarch64-runtime'; else echo 'aarch64-linux-gnu-g++ not found (scripts/install-deps.sh installs it): the AArch64 tests will skip'; fi")
set_tests_properties(deploy.build_runtime_aarch64 PROPERTIES FIXTURES_SETUP aarch64_runtime TIMEOUT 900)
kiln_add_fixture_gtest(deploy.aarch64_node_tests "${CMAKE_CURRENT_LIST_DIR}/aarch64_node_tests_e2e.cc" aarch64_runtime 1200)
kiln_add_fixture_gtest(deploy.aarch64_models "${CMAKE_CURRENT_LIST_DIR}/aarch64_models_e2e.cc" aarch64_runtime 1800)
set_tests_properties(deploy.aarch64_models PROPERTIES FIXTURES_REQUIRED "aarch64_runtime;test_models")
# The .deb packages installed into a scratch root (tests/deploy/packages_test.sh). Not under
# KILN_SANITIZE: the packaged runtime would depend on libasan/libubsan, which the package's
# dependency check rightly refuses.
if(NOT KILN_SANITIZE)
  add_test(NAME deploy.packages
           COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/packages_test.sh" "${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}"
                   "${PROJECT_BINARY_DIR}/test-work/deploy-packages")
  set_tests_properties(deploy.packages PROPERTIES FIXTURES_REQUIRED "aarch64_runtime;test_models" TIMEOUT 1200
                       SKIP_RETURN_CODE 77)
endif()
