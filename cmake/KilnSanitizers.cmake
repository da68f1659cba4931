# KILN_SANITIZE: build every target with these sanitizers, e.g. "address,undefined" or "thread"
# (scripts/check.sh --sanitize LIST configures its own build directory with it; docs/reliability.md).
# UBSan findings abort (-fno-sanitize-recover=all) so a test that triggers one fails.
include_guard(GLOBAL)
set(KILN_SANITIZE "" CACHE STRING "Sanitizers for every target: address,undefined or thread (empty: none)")
if(KILN_SANITIZE)
  if(KILN_SANITIZE MATCHES "thread" AND KILN_SANITIZE MATCHES "address")
    message(FATAL_ERROR "KILN_SANITIZE=${KILN_SANITIZE}: ThreadSanitizer cannot be combined with AddressSanitizer; use two build directories")
  endif()
  message(STATUS "Kiln: sanitizers ${KILN_SANITIZE}")
  # -O1 -g1 (after the build type's -O3, so they win): what the sanitizers' own docs recommend, with
  # line tables for the reports; a Release -O3 -g instrumented build of libkiln took several times
  # as long to compile on 2 cores.
  add_compile_options(-fsanitize=${KILN_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all -O1 -g1)
  add_link_options(-fsanitize=${KILN_SANITIZE})
endif()
