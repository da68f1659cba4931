#!/bin/sh
# Configure-time checks: each classic build trap must stop `cmake` early with its own message.
# Usage: configure_trap_test.sh TRAP SOURCE_DIR WORK_DIR
# TRAP is one of: llvm_version llvm_headers llvm_static no_cxx20 relative_build_dir in_source.
# Each case builds its fake (an llvm-config script, a compiler wrapper, a copy of the top-level
# CMake files) under WORK_DIR, runs a fresh configure, and expects failure plus the message.
set -u
trap_name=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
real_llvm_config=$(command -v llvm-config-19 || echo /usr/lib/llvm-19/bin/llvm-config)

# expect_failure EXPECTED_TEXT CMAKE_ARGS... : configure must fail and print EXPECTED_TEXT.
expect_failure() {
  expected=$1; shift
  start=$(date +%s)
  out=$(cmake "$@" 2>&1)
  rc=$?
  secs=$(( $(date +%s) - start ))
  echo "$out" | sed -n '/CMake Error/,$p' | head -30
  if [ "$rc" -eq 0 ]; then echo "FAIL: configure succeeded; expected: $expected"; exit 1; fi
  # CMake wraps messages at spaces: compare with all whitespace runs collapsed to one space.
  flat=$(echo "$out" | tr '\n' ' ' | tr -s ' ')
  if ! echo "$flat" | grep -qF -- "$expected"; then
    echo "FAIL: configure failed without the expected message: $expected"; exit 1
  fi
  echo "PASS: '$trap_name' stopped configure in ${secs}s with: $expected"
}

fake_llvm_config() {  # VERSION INCLUDEDIR CMAKEDIR
  cat > "$work/llvm-config" <<EOS
#!/bin/sh
case "\$1" in
  --version) echo "$1" ;;
  --includedir) echo "$2" ;;
  --cmakedir) echo "$3" ;;
  *) exec "$real_llvm_config" "\$@" ;;
esac
EOS
  chmod +x "$work/llvm-config"
}

case "$trap_name" in
  llvm_version)
    # An llvm-config from an unsupported LLVM (Debian 12's default llvm-config is 14).
    fake_llvm_config 14.0.6 /usr/lib/llvm-14/include /usr/lib/llvm-14/lib/cmake/llvm
    expect_failure "is LLVM 14.0.6, which Kiln does not support (supported: LLVM 19)" \
      -S "$src" -B "$work/build" -DKILN_LLVM_CONFIG="$work/llvm-config"
    ;;
  llvm_headers)
    # The right LLVM version without its -dev headers: an include directory lacking IRBuilder.h.
    mkdir -p "$work/empty-include"
    fake_llvm_config "$("$real_llvm_config" --version)" "$work/empty-include" "$("$real_llvm_config" --cmakedir)"
    expect_failure "$work/empty-include/llvm/IR/IRBuilder.h is missing (the -dev package is not installed)" \
      -S "$src" -B "$work/build" -DKILN_LLVM_CONFIG="$work/llvm-config"
    ;;
  llvm_static)
    # An LLVM installation with headers, CMake package, tools and shared libraries but without
    # the static archives (as Fedora's llvm-devel without llvm-static): a prefix whose CMake
    # files are copies of the real ones (so the exported targets point into this prefix), with
    # bin/ and lib/*.so* linked to the real ones and no lib/*.a.
    real_cmakedir=$("$real_llvm_config" --cmakedir)
    real_prefix=$("$real_llvm_config" --prefix)
    mkdir -p "$work/prefix/lib/cmake"
    cp -r "$real_cmakedir" "$work/prefix/lib/cmake/llvm"
    ln -s "$real_prefix/bin" "$work/prefix/bin"
    for f in "$real_prefix"/lib/*.so*; do ln -s "$f" "$work/prefix/lib/"; done
    fake_llvm_config "$("$real_llvm_config" --version)" "$("$real_llvm_config" --includedir)" "$work/prefix/lib/cmake/llvm"
    expect_failure "KILN_LLVM_STATIC=ON but these LLVM static libraries are missing:" \
      -S "$src" -B "$work/build" -DKILN_LLVM_CONFIG="$work/llvm-config"
    echo "$flat" | grep -qF "$work/prefix/lib/libLLVMCore.a" || { echo "FAIL: libLLVMCore.a not named"; exit 1; }
    echo "$flat" | grep -qF -- "-DKILN_LLVM_STATIC=OFF" || { echo "FAIL: no mention of the shared alternative"; exit 1; }
    ;;
  no_cxx20)
    # A C++ compiler that rejects C++20 (like g++ 9): a wrapper that refuses -std=c++20.
    cat > "$work/cxx-without-cxx20" <<'EOS'
#!/bin/sh
for a in "$@"; do
  case "$a" in
    -std=c++20|-std=gnu++20|-std=c++2a|-std=gnu++2a)
      echo "cc1plus: error: unrecognized command-line option '$a'" >&2; exit 1 ;;
  esac
done
exec g++ "$@"
EOS
    chmod +x "$work/cxx-without-cxx20"
    expect_failure "Kiln needs a C++20 compiler: $work/cxx-without-cxx20" \
      -S "$src" -B "$work/build" -DCMAKE_CXX_COMPILER="$work/cxx-without-cxx20"
    ;;
  relative_build_dir)
    # KILN_BUILD_DIR=build-rel means <source>/build-rel to Kiln, but cmake was pointed elsewhere.
    KILN_BUILD_DIR=build-rel expect_failure \
      "KILN_BUILD_DIR='build-rel' is a relative path: Kiln resolves it against the source tree" \
      -S "$src" -B "$work/elsewhere"
    [ ! -e "$work/elsewhere/CMakeFiles/CMakeOutput.log" ] || { echo "FAIL: compiler checks ran before the build-dir check"; exit 1; }
    ;;
  in_source)
    # Configure in the source directory itself: on a copy of the top-level CMake files, so the
    # real tree stays clean (the check runs before anything under src/ is read).
    mkdir -p "$work/tree"
    cp "$src/CMakeLists.txt" "$work/tree/"
    cp -r "$src/cmake" "$work/tree/"
    expect_failure "Kiln does not build in its source directory ($work/tree)" \
      -S "$work/tree" -B "$work/tree"
    ;;
  *)
    echo "unknown trap '$trap_name'"; exit 2 ;;
esac
rm -rf "$work"
