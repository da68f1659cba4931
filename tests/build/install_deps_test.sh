#!/bin/sh
# scripts/install-deps.sh: idempotent when everything is present, and a clear `error:` + `hint:`
# (exit 1) when it cannot install: no apt-get, not root without password-less sudo, apt failing.
# The failure paths run with a missing fake package (KILN_DEPS_EXTRA_PACKAGES) and a PATH of
# stand-ins, so nothing on the system is installed or changed.
# Usage: install_deps_test.sh SOURCE_DIR WORK_DIR
set -u
src=$1
work=$2
script="$src/scripts/install-deps.sh"
failures=0
rm -rf "$work"
mkdir -p "$work"

# check NAME EXPECTED_RC EXPECTED_TEXT -- COMMAND...
check() {
  name=$1; want_rc=$2; want_text=$3; shift 4
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! echo "$out" | grep -qF -- "$want_text"; then
    echo "FAIL: $name: exit $rc (expected $want_rc), output:"; echo "$out"
    echo "  expected to contain: $want_text"
    failures=$((failures + 1))
  else
    echo "PASS: $name: $(echo "$out" | grep -F -- "$want_text" | head -1)"
  fi
}

# A PATH with only the tools the script needs, plus fakes.
tools() {  # DIR
  mkdir -p "$1"
  for t in dpkg-query grep find head id; do ln -sf "$(command -v $t)" "$1/$t"; done
}

# 1. Everything present (make check ran it just before): no apt call, exit 0. Run twice.
check "all present" 0 "install-deps: all " -- bash "$script"
check "all present again" 0 "install-deps: all " -- bash "$script"

# 2. A package is missing and there is no apt-get.
tools "$work/no-apt"
check "no apt-get" 1 "error: install-deps: apt-get not found" -- \
  env PATH="$work/no-apt" KILN_DEPS_EXTRA_PACKAGES=kiln-test-no-such-package /bin/bash "$script"

# 3. Not root, and sudo needs a password.
tools "$work/not-root"
printf '#!/bin/sh\n[ "$1" = "-u" ] && echo 1000 || exec /usr/bin/id "$@"\n' > "$work/not-root/id"
printf '#!/bin/sh\necho "sudo: a password is required" >&2\nexit 1\n' > "$work/not-root/sudo"
printf '#!/bin/sh\necho "fake apt-get must not be called here" >&2\nexit 100\n' > "$work/not-root/apt-get"
chmod +x "$work/not-root/id" "$work/not-root/sudo" "$work/not-root/apt-get"
check "not root" 1 "error: install-deps: not root and no password-less sudo: cannot install kiln-test-no-such-package" -- \
  env PATH="$work/not-root" KILN_DEPS_EXTRA_PACKAGES=kiln-test-no-such-package /bin/bash "$script"

# 4. Root (or sudo) but apt-get cannot install the package.
tools "$work/apt-fails"
printf '#!/bin/sh\n[ "$1" = "-u" ] && echo 0 || exec /usr/bin/id "$@"\n' > "$work/apt-fails/id"
printf '#!/bin/sh\ncase "$*" in *update*) exit 0 ;; esac\necho "E: Unable to locate package kiln-test-no-such-package" >&2\nexit 100\n' > "$work/apt-fails/apt-get"
chmod +x "$work/apt-fails/id" "$work/apt-fails/apt-get"
check "apt fails" 1 "error: install-deps: apt-get could not install: kiln-test-no-such-package" -- \
  env PATH="$work/apt-fails" KILN_DEPS_EXTRA_PACKAGES=kiln-test-no-such-package /bin/bash "$script"

rm -rf "$work"
[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
echo "PASS"
