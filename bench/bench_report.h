// Counters shared by the benchmark files of kiln_bench_kernels (defined in kiln_bench_kernels.cc):
// the measured single-thread FMA peak and the GFLOPS / pct_peak / GFLOPS_cpu report.
#ifndef KILN_BENCH_BENCH_REPORT_H_
#define KILN_BENCH_BENCH_REPORT_H_

#include <benchmark/benchmark.h>

namespace kiln_bench {
double peak_gflops();
double thread_cpu_seconds();
void report(benchmark::State& state, double flops_per_iteration, double seconds, int threads, double cpu_seconds);
}  // namespace kiln_bench

#endif  // KILN_BENCH_BENCH_REPORT_H_
