#!/usr/bin/env bash
# Configures a build directory once; later builds reuse it (the generator re-runs CMake when a
# CMakeLists.txt changes). Usage: configure.sh ABSOLUTE_BUILD_DIR [cmake args]
# Extra cmake args force a re-configure of an existing directory.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$1; shift
case "$build_dir" in
  /*) ;;
  *) echo "error: configure.sh: build directory '$build_dir' is relative; pass an absolute path" >&2
     echo "hint: scripts/build-dir.sh resolves \$KILN_BUILD_DIR against the source tree" >&2
     exit 2 ;;
esac
if [ -f "$build_dir/CMakeCache.txt" ] && [ $# -eq 0 ]; then
  exit 0
fi
generator=()
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
# Python_EXECUTABLE: Debian's Python (with numpy/onnx/torch) even when another python3 is first
# on PATH (see ../shared/docs/TOOLCHAIN.md); used once the Python module exists.
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DPython_EXECUTABLE=/usr/bin/python3 --no-warn-unused-cli "$@"
