#!/usr/bin/env bash
# Installs every Debian package that Kiln's build, tests, benchmarks and demo need.
# Idempotent: packages already present are skipped, and apt is not touched when nothing is missing.
# Fails with a clear message when it cannot install (not root and no sudo, no apt-get).
set -euo pipefail

PACKAGES=(
  # build
  cmake ninja-build g++ make ccache lld pkg-config
  # compiler library: LLVM 19 (static archives) and what LLVM's CMake config needs
  llvm-19-dev libzstd-dev zlib1g-dev libxml2-dev libedit-dev libffi-dev
  # ONNX frontend
  libonnx-dev libprotobuf-dev protobuf-compiler
  # runtime and tools
  libdlpack-dev libcli11-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # Python module, test-model generation and Python tests
  python3 python3-dev python3-numpy python3-onnx python3-pytest pybind11-dev
  # `pip install .` of the Python package, offline (docs/python.md)
  python3-venv python3-pip python3-setuptools python3-wheel
  python3-torch python3-torchvision
  # int8 accuracy test (tests/driver/make_quantize_cases.py trains on scikit-learn's digits)
  python3-sklearn
  # fuzzing (libFuzzer) and the sanitizer builds: scripts/fuzz.sh, scripts/check.sh --sanitize
  clang-19 libclang-rt-19-dev
  # edge deployment (docs/deploy.md): AArch64 cross toolchain for the runtime and artifact links,
  # qemu-user to run AArch64 artifacts in the tests, lintian for the .deb packages
  # (~250 MB installed, ~1 min; the tests that need them skip with a message when absent)
  g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user lintian dpkg-dev
  # auto-tuning (docs/tuning.md): the records database (SQLite), the cost model (XGBoost's C
  # API), measurement on remote devices through Redis streams (hiredis client; redis-server for
  # the tests and the broker)
  libsqlite3-dev libxgboost-dev libhiredis-dev redis-server
)

# Test hook (tests/build/install_deps_test.sh): extra package names to require, e.g. one that
# does not exist, to drive the failure paths without touching the system.
if [ -n "${KILN_DEPS_EXTRA_PACKAGES:-}" ]; then
  read -r -a extra <<< "$KILN_DEPS_EXTRA_PACKAGES"
  PACKAGES+=("${extra[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: install-deps: apt-get not found: Kiln's dependency script supports Debian 12 (and derivatives) only" >&2
  echo "hint: install the packages listed above with your system's package manager" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "error: install-deps: not root and no password-less sudo: cannot install ${missing[*]}" >&2
    echo "hint: run 'sudo scripts/install-deps.sh' once, or install those packages yourself" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only when they are missing or older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -n1)" ]; then
  $SUDO apt-get update -qq
fi
if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
  echo "error: install-deps: apt-get could not install: ${missing[*]}" >&2
  echo "hint: run 'apt-get update' and retry; check that Debian's main archive is reachable" >&2
  exit 1
fi
echo "install-deps: done"
