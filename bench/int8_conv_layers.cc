// Int8 kernels against the machine's measured int8 peak (codegen/int8_peak.h), single thread:
// ResNet-50-like convolutions (1x1 and 3x3 at 56/28/14/7, u8 NCHW16c input, weights pre-packed
// as at compile time), MobileNetV2-like 3x3 depthwise convolutions and int8 matmuls, each in the
// narrow form (weights in [-64, 64]: one vpmaddubsw on AVX2) and the exact form (full s8 weights:
// two), plus the f32 FMA peak for scale.
//
//   build/bin/kiln_bench_int8 [repeats=10] [threads=1]
//   layer                      GOP/s   % int8 peak  (narrow | exact)
//
// GOP/s counts 2 ops per u8 x s8 multiply-add (2 * N * M * OH * OW * C * KH * KW per conv).
// Each figure is the best of `repeats` runs of ~20 ms of process CPU time (not wall time: the
// machine may be shared; CPU time does not count waiting for a core).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "kiln/codegen/fma_peak.h"
#include "kiln/codegen/int8_peak.h"
#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/ndarray.h"
#include "kiln/runtime/c_api.h"
#include "kiln/tir/lower.h"
#include "kiln/topi/int8.h"

namespace {

using kiln::ir::DType;
using kiln::ir::NDArray;
namespace int8 = kiln::topi::int8;
namespace tir = kiln::tir;

DLTensor view(NDArray& a) {
  DLTensor t{};
  t.data = a.mutable_raw_data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(a.shape().size());
  const bool f = a.dtype() == DType::kF32;
  const bool u = a.dtype() == DType::kU8;
  t.dtype = DLDataType{static_cast<uint8_t>(f ? kDLFloat : (u ? kDLUInt : kDLInt)),
                       static_cast<uint8_t>(kiln::ir::dtype_size(a.dtype()) * 8), 1};
  t.shape = const_cast<int64_t*>(a.shape().data());
  return t;
}

NDArray filled(DType dt, const std::vector<int64_t>& shape, std::mt19937& rng, int lo, int hi) {
  NDArray a = NDArray::empty(dt, shape);
  std::uniform_int_distribution<int> d(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, dt == DType::kF32 ? 1e-4 : d(rng));
  return a;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Seconds per call of `fn`: the smallest process CPU time over `repeats` runs of ~20 ms. On a
// loaded machine wall time mostly measures the other processes; CPU time (all threads of this
// process) does not count the time this one waits for a core.
template <typename F>
double time_call(F fn, int repeats) {
  fn();
  const double t0 = process_cpu_seconds();
  fn();
  const double once = process_cpu_seconds() - t0;
  const int calls = std::max(1, static_cast<int>(0.02 / std::max(once, 1e-6)));
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const double s = process_cpu_seconds();
    for (int c = 0; c < calls; ++c) fn();
    best = std::min(best, (process_cpu_seconds() - s) / calls);
  }
  return best;
}

// Seconds per call of the kernel `f` (JIT on the host) on `arrays` (its parameters, in order).
double time_kernel(const tir::PrimFunc& f, std::vector<NDArray>& arrays, int repeats) {
  kiln::codegen::LLVMModule module(kiln::codegen::host_target(), f->name);
  module.add_prim_func(f);
  kiln::codegen::JitModule jit(std::move(module));
  std::vector<DLTensor> args;
  for (NDArray& a : arrays) args.push_back(view(a));
  return time_call([&] { jit.run(f->name, args); }, repeats);
}

struct ConvLayer {
  int64_t c, h, m, k, stride;
};

double bench_conv(const ConvLayer& l, bool narrow, int repeats) {
  const int64_t ob = 16, ib = 16, pad = l.k / 2;
  const int8::ConvKnobs knobs{ob, l.h / l.stride <= 7 ? 7 : 4, narrow};
  const int8::Conv2dGeometry g{l.stride, l.stride, pad, pad, pad, pad, 1, 1};
  const int64_t oh = (l.h + 2 * pad - l.k) / l.stride + 1;
  tir::Tensor X = tir::placeholder({1, l.c / ib, l.h, l.h, ib}, DType::kU8, "x");
  tir::Tensor PW = tir::placeholder({l.m / ob, (l.c + 3) / 4, l.k, l.k, ob}, DType::kI32, "packed_w");
  tir::Tensor CS = tir::placeholder({l.m}, DType::kI32, "colsum");
  tir::Tensor B = tir::placeholder({l.m}, DType::kI32, "bias");
  tir::Tensor S = tir::placeholder({l.m}, DType::kF32, "scale");
  int8::Int8Conv2d conv = int8::int8_conv2d(X, PW, CS, B, S, l.k, l.k, g, {128, 0, 0, 255}, knobs);
  tir::Schedule s({conv.out});
  int8::schedule_int8_conv2d(s, conv, knobs);
  std::mt19937 rng(1);
  // Timing only: the values do not matter.
  std::vector<NDArray> arrays = {filled(DType::kU8, X->shape, rng, 0, 255), filled(DType::kI32, PW->shape, rng, 0, 0x3F3F3F3F),
                                 filled(DType::kI32, {l.m}, rng, -100, 100), filled(DType::kI32, {l.m}, rng, -100, 100),
                                 filled(DType::kF32, {l.m}, rng, 0, 0), NDArray::empty(DType::kU8, {1, l.m / ob, oh, oh, ob})};
  const double sec = time_kernel(tir::lower(s, {X, PW, CS, B, S, conv.out}, "int8_conv"), arrays, repeats);
  return 2.0 * l.m * oh * oh * l.c * l.k * l.k / sec / 1e9;
}

double bench_depthwise(int64_t c, int64_t h, int64_t stride, int repeats) {
  const int64_t b = 16;
  const int8::Conv2dGeometry g{stride, stride, 1, 1, 1, 1, 1, 1};
  const int64_t oh = (h + 2 - 3) / stride + 1;
  tir::Tensor X = tir::placeholder({1, c / b, h, h, b}, DType::kU8, "x");
  tir::Tensor W = tir::placeholder({c / b, 3, 3, b}, DType::kI8, "packed_w");
  tir::Tensor CS = tir::placeholder({c}, DType::kI32, "colsum");
  tir::Tensor B = tir::placeholder({c}, DType::kI32, "bias");
  tir::Tensor S = tir::placeholder({c}, DType::kF32, "scale");
  int8::Int8Depthwise dw = int8::int8_depthwise_conv2d(X, W, CS, B, S, g, {128, 0, 0, 255});
  tir::Schedule s({dw.out});
  int8::schedule_int8_depthwise(s, dw, oh <= 7 ? 7 : 8);
  std::mt19937 rng(3);
  std::vector<NDArray> arrays = {filled(DType::kU8, X->shape, rng, 0, 255), filled(DType::kI8, W->shape, rng, -100, 100),
                                 filled(DType::kI32, {c}, rng, -100, 100), filled(DType::kI32, {c}, rng, -100, 100),
                                 filled(DType::kF32, {c}, rng, 0, 0), NDArray::empty(DType::kU8, {1, c / b, oh, oh, b})};
  const double sec = time_kernel(tir::lower(s, {X, W, CS, B, S, dw.out}, "int8_dw"), arrays, repeats);
  return 2.0 * c * oh * oh * 9 / sec / 1e9;
}

double bench_matmul(int64_t m, int64_t k, int64_t n, bool narrow, int repeats) {
  const int8::MatmulKnobs knobs{16, 4, narrow};
  tir::Tensor A = tir::placeholder({m, k}, DType::kU8, "a");
  tir::Tensor P = tir::placeholder({(n + 15) / 16, (k + 3) / 4, 16}, DType::kI32, "panels");
  tir::Tensor CS = tir::placeholder({n}, DType::kI32, "colsum");
  tir::Tensor B = tir::placeholder({n}, DType::kI32, "bias");
  tir::Tensor S = tir::placeholder({n}, DType::kF32, "scale");
  int8::Int8Matmul mm = int8::int8_matmul(A, P, CS, B, S, n, {128, 0, 0, 255}, knobs);
  tir::Schedule s({mm.out});
  int8::schedule_int8_matmul(s, mm, knobs);
  std::mt19937 rng(2);
  std::vector<NDArray> arrays = {filled(DType::kU8, {m, k}, rng, 0, 255), filled(DType::kI32, P->shape, rng, 0, 0x3F3F3F3F),
                                 filled(DType::kI32, {n}, rng, -100, 100), filled(DType::kI32, {n}, rng, -100, 100),
                                 filled(DType::kF32, {n}, rng, 0, 0), NDArray::empty(DType::kU8, {m, n})};
  const double sec = time_kernel(tir::lower(s, {A, P, CS, B, S, mm.out}, "int8_mm"), arrays, repeats);
  return 2.0 * m * k * n / sec / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  kiln_set_num_threads(threads);
  const auto peak = kiln::codegen::measure_int8_peak(20);
  const auto fma = kiln::codegen::measure_fma_peak(20);
  std::printf("int8 peak: %s\nf32 peak:  %s\nthreads: %d (%% of peak x threads)\n\n", peak.describe().c_str(),
              fma.describe().c_str(), threads);
  std::printf("%-34s %9s %7s | %9s %7s\n", "layer", "narrow", "%peak", "exact", "%peak");
  const double p = peak.gops * threads;
  const ConvLayer layers[] = {{64, 56, 256, 1, 1}, {64, 56, 64, 3, 1},   {128, 28, 512, 1, 1}, {128, 28, 128, 3, 1},
                              {256, 14, 1024, 1, 1}, {256, 14, 256, 3, 1}, {512, 7, 2048, 1, 1}, {512, 7, 512, 3, 1}};
  for (const ConvLayer& l : layers) {
    const double a = bench_conv(l, true, repeats), b = bench_conv(l, false, repeats);
    char name[64];
    std::snprintf(name, sizeof name, "conv %ldx%ld %ld->%ld @%ld", static_cast<long>(l.k), static_cast<long>(l.k),
                  static_cast<long>(l.c), static_cast<long>(l.m), static_cast<long>(l.h));
    std::printf("%-34s %9.1f %6.1f%% | %9.1f %6.1f%%\n", name, a, 100 * a / p, b, 100 * b / p);
  }
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{128, 768, 768}, {128, 768, 3072}, {1, 2048, 1000}}) {
    const double a = bench_matmul(m, k, n, true, repeats), b = bench_matmul(m, k, n, false, repeats);
    char name[64];
    std::snprintf(name, sizeof name, "matmul %ldx%ldx%ld", static_cast<long>(m), static_cast<long>(k), static_cast<long>(n));
    std::printf("%-34s %9.1f %6.1f%% | %9.1f %6.1f%%\n", name, a, 100 * a / p, b, 100 * b / p);
  }
  // Depthwise (MobileNetV2-like 3x3): no dot product, i16 products summed in i32 (one form).
  for (auto [c, h, stride] : std::vector<std::array<int64_t, 3>>{{96, 112, 2}, {144, 56, 1}, {192, 28, 1}, {384, 14, 1}, {960, 7, 1}}) {
    const double a = bench_depthwise(c, h, stride, repeats);
    char name[64];
    std::snprintf(name, sizeof name, "depthwise 3x3 %ld @%ld /%ld", static_cast<long>(c), static_cast<long>(h), static_cast<long>(stride));
    std::printf("%-34s %9.1f %6.1f%%\n", name, a, 100 * a / p);
  }
  return 0;
}
