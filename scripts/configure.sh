#!/usr/bin/env bash
# Configures a build directory (once; later builds reuse it). Usage: configure.sh BUILD_DIR [cmake args]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$1; shift
case "$build_dir" in
  /*) ;;
  *) echo "error: configure.sh: build directory '$build_dir' is relative; pass an absolute path" >&2; exit 2 ;;
esac
if [ -f "$build_dir/build.ninja" ] && [ $# -eq 0 ]; then
  exit 0
fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ -f "$build_dir/CMakeCache.txt" ]; then generator=(); fi
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DPython_EXECUTABLE=/usr/bin/python3 "$@"
