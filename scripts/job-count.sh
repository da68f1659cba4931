#!/usr/bin/env bash
# Prints the parallel build job count: max(1, min(cores, available memory / per-job estimate)).
# A translation unit that includes LLVM's headers peaks near 1.5 GiB with g++ -O2; the estimate
# (KILN_MEM_PER_JOB_MB, default 2048) keeps a 2-core, 4 GiB machine from swapping. `kiln doctor`
# reports the same number (src/driver/doctor_facts.cc implements the same rule).
# Usage: job-count.sh [--explain]   (--explain also prints the inputs on stderr)
set -euo pipefail
cores=$(nproc 2>/dev/null || echo 1)
per_job_mb=${KILN_MEM_PER_JOB_MB:-2048}
case "$per_job_mb" in
  ''|*[!0-9]*|0) echo "job-count: ignoring KILN_MEM_PER_JOB_MB='$per_job_mb' (expected a positive number of MB); using 2048" >&2
     per_job_mb=2048 ;;
esac
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || true)
avail_mb=$(( ${avail_kb:-0} / 1024 ))
by_mem=$(( avail_mb / per_job_mb ))
jobs=$(( cores < by_mem ? cores : by_mem ))
[ "$jobs" -ge 1 ] || jobs=1
if [ "${1:-}" = "--explain" ]; then
  echo "kiln: $jobs parallel jobs = max(1, min($cores cores, $avail_mb MB available / $per_job_mb MB per job))" >&2
fi
echo "$jobs"
