// Counters shared by the benchmark files of kiln_bench_kernels (defined in kiln_bench_kernels.cc):
// the measured single-thread FMA peak and the GFLOPS / pct_peak / GFLOPS_cpu report.
#ifndef KILN_BENCH_BENCH_REPORT_H_
#define KILN_BENCH_BENCH_REPORT_H_

#include <benchmark/benchmark.h>

#include "kiln/topi/schedule.h"

namespace kiln_bench {
double peak_gflops();
double thread_cpu_seconds();
void report(benchmark::State& state, double flops_per_iteration, double seconds, int threads, double cpu_seconds);
// KILN_BENCH_KNOBS="tile_ow=7,rows_outer=1" overrides knob values (for trying schedules by hand;
// defined in topi_benchmarks.cc).
kiln::topi::Knobs with_knob_overrides(kiln::topi::Knobs k);
}  // namespace kiln_bench

#endif  // KILN_BENCH_BENCH_REPORT_H_
