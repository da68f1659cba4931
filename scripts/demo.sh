#!/usr/bin/env bash
# Kiln's main job on a built-in example. Until model compilation lands, that job is `kiln doctor`:
# the report of what this installation is made of and whether it can compile for this machine.
set -euo pipefail
build_dir=$1
"$build_dir/bin/kiln" doctor
