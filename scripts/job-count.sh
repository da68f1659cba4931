#!/usr/bin/env bash
# Prints the parallel build job count: min(cores, available memory / per-job estimate).
# A translation unit that includes LLVM's headers peaks near 1.5 GiB with g++ -O2; the estimate
# (KILN_MEM_PER_JOB_MB, default 2048) keeps a 2-core, 4 GiB machine from swapping.
set -euo pipefail
cores=$(nproc 2>/dev/null || echo 1)
per_job_mb=${KILN_MEM_PER_JOB_MB:-2048}
avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
by_mem=$(( avail_kb / 1024 / per_job_mb ))
[ "$by_mem" -ge 1 ] || by_mem=1
jobs=$(( cores < by_mem ? cores : by_mem ))
echo "$jobs"
