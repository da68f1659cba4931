#!/usr/bin/env bash
# The README's second command: installs what is missing, builds, and runs every test (CTest, then
# pytest once Python tests exist). Needs only bash; `make check` and .ci/run call this.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
bash "$root/scripts/run-tests.sh" "$(bash "$root/scripts/build-dir.sh")"
