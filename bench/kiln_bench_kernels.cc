// kiln_bench_kernels: the machine's own single-thread f32 FMA peak, measured with a JIT-generated
// kernel of independent FMA chains at the host's full vector width (AVX-512 where present, else
// AVX2), and Kiln's generated kernels reported against it (counters GFLOPS and pct_peak).
//
//   kiln_bench_kernels [--benchmark_filter=...]
//
// pct_peak = GFLOPS / (single-thread peak x threads) x 100. Numbers are measured, never assumed.
#include <benchmark/benchmark.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>

#include "kiln/codegen/fma_peak.h"
#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/runtime/c_api.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/schedule.h"
#include "loop_builders.h"
#include "test_util.h"

namespace {

using kiln::codegen::host_target;
using kiln::codegen::JitModule;
using kiln::codegen::KernelFunction;
using kiln::codegen::LLVMModule;
using kiln::codegen::testing::Buffer;
using kiln::codegen::testing::f32_type;

using kiln::codegen::FmaPeakKernel;

// The probe of kiln/codegen/fma_peak.h, built once.
FmaPeakKernel& peak_kernel() {
  static FmaPeakKernel k(host_target());
  return k;
}

// Single-thread peak in GFLOPS: the best of several timed runs (kiln::codegen::measure_fma_peak).
double peak_gflops() {
  static const double peak = kiln::codegen::measure_fma_peak(20).gflops;
  return peak;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// GFLOPS and pct_peak from wall-clock time. On a shared machine wall-clock time includes time
// other processes took the core; for one thread GFLOPS_cpu (from this thread's CPU time) shows
// the kernel's own speed.
void report(benchmark::State& state, double flops_per_iteration, double seconds, int threads, double cpu_seconds) {
  const double flops = flops_per_iteration * static_cast<double>(state.iterations());
  const double gflops = flops / seconds / 1e9;
  state.counters["GFLOPS"] = gflops;
  state.counters["pct_peak"] = 100.0 * gflops / (peak_gflops() * threads);
  state.counters["threads"] = threads;
  if (threads == 1) state.counters["GFLOPS_cpu"] = flops / cpu_seconds / 1e9;
}

void BM_FmaPeak(benchmark::State& state) {
  FmaPeakKernel& k = peak_kernel();
  state.SetLabel(host_target().cpu + ", " + std::to_string(k.lanes() * 32) + "-bit vectors, " +
                 std::to_string(k.chains()) + " chains");
  const double c0 = thread_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) k.call();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = thread_cpu_seconds() - c0;
  report(state, k.flops_per_call(), s, 1, cpu);
}
BENCHMARK(BM_FmaPeak)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_MatmulF32(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const int lanes = host_target().vector_lanes(32);
  const int nv = lanes == 16 ? 4 : 2;  // 6 x nv accumulator vectors fill the register file
  LLVMModule module(host_target(), "matmul");
  module.add_prim_func(kiln::codegen::testing::matmul("matmul", n, n, n, lanes, 6, nv, /*parallel=*/true));
  JitModule jit(std::move(module));
  Buffer<float> a({n, n}, f32_type()), b({n, n}, f32_type()), c({n, n}, f32_type());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = dist(rng);
  for (size_t i = 0; i < b.size(); ++i) b[i] = dist(rng);
  kiln_set_num_threads(threads);
  KernelFunction fn = jit.kernel("matmul");
  const DLTensor args[3] = {a.tensor(), b.tensor(), c.tensor()};
  if (fn(args, 3) != 0) state.SkipWithError(kiln_get_last_error());
  const double c0 = thread_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) fn(args, 3);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = thread_cpu_seconds() - c0;
  state.SetLabel("hand-built loop IR: 6x" + std::to_string(nv) + " vectors register block, no packing");
  report(state, 2.0 * n * n * n, s, threads, cpu);
  kiln_set_num_threads(1);
}
BENCHMARK(BM_MatmulF32)->Args({1024, 1})->Args({1024, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_MatmulF32Packed(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const int64_t kc = state.range(2);
  const int lanes = host_target().vector_lanes(32);
  const int nv = lanes == 16 ? 4 : 2;
  const int mr = 6;
  const int64_t m = n;
  LLVMModule module(host_target(), "matmul_packed");
  module.add_prim_func(kiln::codegen::testing::matmul_packed("matmul_packed", m, n, n, lanes, mr, nv, kc, true));
  JitModule jit(std::move(module));
  Buffer<float> a({m, n}, f32_type()), b({n, n}, f32_type()), c({m, n}, f32_type());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = dist(rng);
  for (size_t i = 0; i < b.size(); ++i) b[i] = dist(rng);
  kiln_set_num_threads(threads);
  KernelFunction fn = jit.kernel("matmul_packed");
  const DLTensor args[3] = {a.tensor(), b.tensor(), c.tensor()};
  if (fn(args, 3) != 0) state.SkipWithError(kiln_get_last_error());
  const double c0 = thread_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) fn(args, 3);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = thread_cpu_seconds() - c0;
  state.SetLabel("hand-built loop IR: B packed, k blocks of " + std::to_string(kc) + ", 6x" +
                 std::to_string(nv) + " vectors register block, M=" + std::to_string(m));
  report(state, 2.0 * m * n * n, s, threads, cpu);
  kiln_set_num_threads(1);
}
BENCHMARK(BM_MatmulF32Packed)
    ->Args({1024, 1, 256})
    ->Args({1024, 1, 1024})
    ->Args({1024, 2, 256})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The same matmul written as a tensor expression and scheduled with the tir primitives: B packed
// into panels by a compute stage (Bp[jo, k, jj] = B[k, jo*nb + jj]), C tiled into mr x nb tiles
// accumulated in registers through cache_write, k outermost in the tile, rows parallel.
kiln::tir::PrimFunc te_matmul(int64_t n, int lanes, int mr, int nv, bool pack) {
  using namespace kiln::tir;  // NOLINT
  const int64_t nb = int64_t{nv} * lanes;
  Tensor a = placeholder({n, n}, DType::kF32, "A");
  Tensor b = placeholder({n, n}, DType::kF32, "B");
  IterVar k = reduce_axis(n, "k");
  Tensor bp;
  Tensor c;
  if (pack) {
    bp = compute({n / nb, n, nb}, [&](const std::vector<Var>& i) { return b(i[1], i[0] * nb + i[2]); }, "Bp",
                 {"jo", "k", "jj"});
    c = compute({n, n}, [&](const std::vector<Var>& i) {
      return sum(a(i[0], k) * bp(floordiv(i[1], nb), k, floormod(i[1], nb)), {k});
    }, "C", {"i", "j"});
  } else {
    c = compute({n, n}, [&](const std::vector<Var>& i) { return sum(a(i[0], k) * b(k, i[1]), {k}); }, "C", {"i", "j"});
  }
  Schedule s({c});
  Tensor cl = s.cache_write(c);
  Stage sc = s[c];
  auto [io, ii] = sc.split(sc.axis(0), mr);
  auto [jo, ji] = sc.split(sc.axis(1), nb);
  sc.reorder({io, jo, ii, ji});
  sc.parallel(io);
  sc.vectorize(ji);
  Stage sl = s[cl];
  sl.compute_at(sc, jo);
  sl.reorder({sl.reduce_axis(0), sl.axis(0), sl.axis(1)});
  sl.unroll(sl.axis(0));
  sl.vectorize(sl.axis(1));
  if (pack) {
    Stage sp = s[bp];
    sp.parallel(sp.axis(0));
    sp.vectorize(sp.axis(2));
  }
  return lower(s, {a, b, c}, pack ? "te_matmul_packed" : "te_matmul");
}

void BM_MatmulF32Te(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const bool pack = state.range(2) != 0;
  const int lanes = host_target().vector_lanes(32);
  const int nv = lanes == 16 ? 4 : 2;
  const int mr = 4;  // divides 1024: no guarded tail tiles
  LLVMModule module(host_target(), "te_matmul");
  kiln::tir::PrimFunc f = te_matmul(n, lanes, mr, nv, pack);
  module.add_prim_func(f);
  JitModule jit(std::move(module));
  Buffer<float> a({n, n}, f32_type()), b({n, n}, f32_type()), c({n, n}, f32_type());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = dist(rng);
  for (size_t i = 0; i < b.size(); ++i) b[i] = dist(rng);
  kiln_set_num_threads(threads);
  KernelFunction fn = jit.kernel(f->name);
  const DLTensor args[3] = {a.tensor(), b.tensor(), c.tensor()};
  if (fn(args, 3) != 0) state.SkipWithError(kiln_get_last_error());
  const double c0 = thread_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) fn(args, 3);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = thread_cpu_seconds() - c0;
  state.SetLabel(std::string("tensor expression + schedule: ") + (pack ? "B packed, " : "") +
                 std::to_string(mr) + "x" + std::to_string(nv) + " vectors cache_write tile");
  report(state, 2.0 * n * n * n, s, threads, cpu);
  kiln_set_num_threads(1);
}
BENCHMARK(BM_MatmulF32Te)
    ->Args({1024, 1, 0})
    ->Args({1024, 1, 1})
    ->Args({1024, 2, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

// Shared with the program's other benchmark files (bench_report.h).
namespace kiln_bench {
double peak_gflops() { return ::peak_gflops(); }
double thread_cpu_seconds() { return ::thread_cpu_seconds(); }
void report(benchmark::State& state, double flops_per_iteration, double seconds, int threads, double cpu_seconds) {
  ::report(state, flops_per_iteration, seconds, threads, cpu_seconds);
}
}  // namespace kiln_bench

BENCHMARK_MAIN();
