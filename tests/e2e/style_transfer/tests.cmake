# Whole-model test of the spatial normalizations: the fast-neural-style TransformerNet exported from
# PyTorch (opsets 11 and 17), compiled by the `kiln` CLI and compared with PyTorch in float64
# (style_transfer_e2e.py states the tolerance). Skips (77) when torch is absent.
add_test(NAME e2e.style_transfer
         COMMAND /usr/bin/python3 "${CMAKE_CURRENT_LIST_DIR}/style_transfer_e2e.py"
                 --kiln "$<TARGET_FILE:kiln_cli>" --out "${PROJECT_BINARY_DIR}/style_transfer")
set_tests_properties(e2e.style_transfer PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
