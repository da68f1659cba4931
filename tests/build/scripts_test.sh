#!/bin/sh
# The build scripts' rules: scripts/build-dir.sh resolves KILN_BUILD_DIR against the source tree
# (never the current directory), scripts/job-count.sh applies max(1, min(cores, MB available /
# KILN_MEM_PER_JOB_MB)) and reports a bad KILN_MEM_PER_JOB_MB, configure.sh refuses a relative
# build directory. Usage: scripts_test.sh SOURCE_DIR
set -u
src=$(cd "$1" && pwd)
failures=0
expect_eq() {  # NAME ACTUAL EXPECTED
  if [ "$2" = "$3" ]; then echo "PASS: $1: $2"; else echo "FAIL: $1: got '$2', expected '$3'"; failures=$((failures + 1)); fi
}

expect_eq "default build dir" "$(cd / && env -u KILN_BUILD_DIR bash "$src/scripts/build-dir.sh")" "$src/build"
expect_eq "relative KILN_BUILD_DIR is relative to the tree, not the cwd" \
  "$(cd /tmp && KILN_BUILD_DIR=out/../b2 bash "$src/scripts/build-dir.sh")" "$src/b2"
expect_eq "absolute KILN_BUILD_DIR is kept" "$(KILN_BUILD_DIR=/tmp/x//y/ bash "$src/scripts/build-dir.sh")" "/tmp/x/y"

cores=$(nproc)
avail_mb=$(( $(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) / 1024 ))
expect_eq "memory-bound job count never below 1" "$(KILN_MEM_PER_JOB_MB=100000000 bash "$src/scripts/job-count.sh")" 1
expect_eq "core-bound job count" "$(KILN_MEM_PER_JOB_MB=1 bash "$src/scripts/job-count.sh")" "$cores"
# Two thirds of the available memory per job: 1.5 jobs fit, rounded down to 1 (the margin keeps the
# check true while other tests running beside it change the available memory by up to a third).
per_job=$(( avail_mb * 2 / 3 ))
expect_eq "memory rule rounds down" "$(KILN_MEM_PER_JOB_MB=$per_job bash "$src/scripts/job-count.sh")" 1
out=$(KILN_MEM_PER_JOB_MB=lots bash "$src/scripts/job-count.sh" --explain 2>&1)
echo "$out" | grep -q "ignoring KILN_MEM_PER_JOB_MB='lots'" && echo "$out" | grep -q "MB available / 2048 MB per job" &&
  echo "PASS: bad KILN_MEM_PER_JOB_MB reported, 2048 used" ||
  { echo "FAIL: bad KILN_MEM_PER_JOB_MB: $out"; failures=$((failures + 1)); }

out=$(bash "$src/scripts/configure.sh" relative/dir 2>&1); rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "build directory 'relative/dir' is relative" &&
  echo "PASS: configure.sh refuses a relative build directory" ||
  { echo "FAIL: configure.sh relative: rc=$rc $out"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "PASS"
