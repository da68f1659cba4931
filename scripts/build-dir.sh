#!/usr/bin/env bash
# Prints the absolute build directory: $KILN_BUILD_DIR if set (a relative path is taken relative
# to the source tree, never to the current directory), else <source>/build.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${KILN_BUILD_DIR:-build}
case "$dir" in
  /*) ;;
  *) dir="$root/$dir" ;;
esac
realpath -m "$dir"
