# Fuzz regressions (issue 14, docs/reliability.md): every input a libFuzzer target crashed on
# (tests/fuzz_regressions/TARGET/) and the committed seed corpus (fuzz/seeds/TARGET/) are replayed
# through the target's own checks: fuzz/fuzz_TARGET.cc built with fuzz/replay_main.cc in the
# ordinary build (no libFuzzer, no sanitizer unless KILN_SANITIZE is set), linked with libkiln.
foreach(_target IN ITEMS onnx_import ir_text npy)
  add_executable(fuzz_replay_${_target} "${PROJECT_SOURCE_DIR}/fuzz/fuzz_${_target}.cc"
                                        "${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc")
  target_link_libraries(fuzz_replay_${_target} PRIVATE kiln kiln_runtime)
  set(_inputs "")
  foreach(_dir IN ITEMS "${CMAKE_CURRENT_LIST_DIR}/${_target}" "${PROJECT_SOURCE_DIR}/fuzz/seeds/${_target}")
    file(GLOB _any CONFIGURE_DEPENDS "${_dir}/*")
    if(_any)
      list(APPEND _inputs "${_dir}")
    endif()
  endforeach()
  if(_inputs)
    add_test(NAME fuzz_regressions.${_target} COMMAND fuzz_replay_${_target} ${_inputs})
    set_tests_properties(fuzz_regressions.${_target} PROPERTIES TIMEOUT 120)
  endif()
endforeach()
