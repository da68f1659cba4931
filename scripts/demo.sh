#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs Kiln's main job on a
# built-in example. Until model compilation lands, that job is `kiln doctor`: the report of what
# this installation is made of and whether it can compile for this machine (exit 1 on a problem).
# Needs only bash (make is not required); `make demo` calls this.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
build_dir=$(bash "$root/scripts/build-dir.sh")
"$build_dir/bin/kiln" doctor
