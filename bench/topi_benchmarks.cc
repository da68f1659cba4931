// Operator-library kernels in kiln_bench_kernels (default schedules, knobs from the host target):
//   BM_TopiMatmul            matmul op 1024^3 (B packed inside the kernel, every call)
//   BM_TopiConv2dNchwc/case  ResNet-50 convolutions, blocked conv on pre-packed weights with an
//                            NCHW[ob]c output (what a compiled model runs: constant weights are
//                            packed at compile time and the blocked layout flows to the next op)
//   BM_TopiConv2dOp/case     the same through the conv2d op kernel (NCHW in/out: pads the input,
//                            packs the weights and unpacks the output on every call)
//   BM_TopiDepthwise         MobileNetV2's depthwise 3x3 on 112x112x32 (memory-bound: GB/s)
#include <chrono>
#include <cstdlib>
#include <string>
#include <random>

#include "bench_report.h"
#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/ndarray.h"
#include "kiln/runtime/c_api.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/schedule.h"
#include "kiln/topi/build.h"
#include "kiln/topi/nn.h"
#include "kiln/topi/schedule.h"

namespace {

using kiln::codegen::host_target;
using kiln::codegen::JitModule;
using kiln::codegen::KernelFunction;
using kiln::codegen::LLVMModule;
using kiln::ir::DType;
using kiln::ir::NDArray;
using kiln::ir::TensorType;

struct ConvCase {
  const char* name;
  int64_t c, h, m, k, stride, pad;
};
// ResNet-50 (batch 1).
const ConvCase kConvs[] = {{"3x3_64_64_56", 64, 56, 64, 3, 1, 1},
                           {"1x1_256_64_56", 256, 56, 64, 1, 1, 0},
                           {"3x3_256_256_14", 256, 14, 256, 3, 1, 1},
                           {"1x1_1024_2048_14_s2", 1024, 14, 2048, 1, 2, 0}};

struct Arrays {
  std::vector<NDArray> arrays;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DLTensor> args;
  explicit Arrays(const std::vector<TensorType>& types) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1, 1);
    shapes.resize(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      arrays.push_back(NDArray::empty(types[i].dtype, types[i].shape));
      auto data = arrays.back().mutable_data<float>();
      for (float& v : data) v = dist(rng);
      shapes[i] = types[i].shape;
      DLTensor t{};
      t.data = arrays.back().mutable_raw_data();
      t.device = {kDLCPU, 0};
      t.ndim = static_cast<int32_t>(shapes[i].size());
      t.dtype = {kDLFloat, 32, 1};
      t.shape = shapes[i].data();
      args.push_back(t);
    }
  }
};

void time_kernel(benchmark::State& state, const kiln::tir::PrimFunc& f, const std::vector<TensorType>& types,
                 double flops, int threads, const std::string& label) {
  LLVMModule module(host_target(), "topi_bench");
  module.add_prim_func(f);
  JitModule jit(std::move(module));
  Arrays a(types);
  kiln_set_num_threads(threads);
  KernelFunction fn = jit.kernel(f->name);
  const int32_t n = static_cast<int32_t>(a.args.size());
  if (fn(a.args.data(), n) != 0) state.SkipWithError(kiln_get_last_error());
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = kiln_bench::thread_cpu_seconds();
  for (auto _ : state) fn(a.args.data(), n);
  const double cpu = kiln_bench::thread_cpu_seconds() - c0;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  state.SetLabel(label);
  kiln_bench::report(state, flops, s, threads, cpu);
  kiln_set_num_threads(1);
}

void BM_TopiMatmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const std::vector<TensorType> in = {{DType::kF32, {n, n}}, {DType::kF32, {n, n}}};
  kiln::topi::OpKernelOptions options;
  if (std::getenv("KILN_BENCH_KNOBS")) {
    using namespace kiln::tir;  // NOLINT
    Tensor a = placeholder({n, n}, DType::kF32, "a"), b = placeholder({n, n}, DType::kF32, "b");
    options.knobs = kiln_bench::with_knob_overrides(kiln::topi::default_knobs(
        kiln::topi::compute_op("matmul", {a, b}, {}, kiln::topi::layout_hints(host_target())), host_target()));
  }
  kiln::tir::PrimFunc f = kiln::topi::build_op_kernel("matmul", in, {}, host_target(), options);
  std::vector<TensorType> types = in;
  types.push_back({DType::kF32, {n, n}});
  time_kernel(state, f, types, 2.0 * n * n * n, threads, "matmul op, default schedule (B packed per call)");
}
BENCHMARK(BM_TopiMatmul)->Args({1024, 1})->Args({1024, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

kiln::ir::Attrs conv_attrs(const ConvCase& c) {
  return kiln::ir::Attrs()
      .set("strides", std::vector<int64_t>{c.stride, c.stride})
      .set("pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad});
}

double conv_flops(const ConvCase& c, int64_t oh) { return 2.0 * c.m * oh * oh * c.c * c.k * c.k; }

void BM_TopiConv2dNchwc(benchmark::State& state) {
  const ConvCase& c = kConvs[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1;
  const TensorType out{DType::kF32, {1, c.m, oh, oh}};
  const kiln::topi::LayoutHints hints = kiln::topi::layout_hints(host_target());
  const int64_t ob = std::getenv("KILN_BENCH_OC_BLOCK") ? std::atoll(std::getenv("KILN_BENCH_OC_BLOCK"))
                                                        : kiln::topi::conv2d_oc_block(c.m, oh, hints);
  using namespace kiln::tir;  // NOLINT
  Tensor x = placeholder({1, c.c, c.h, c.h}, DType::kF32, "x");
  const int64_t icb = kiln::topi::conv2d_ic_block(c.c, hints);
  Tensor wp = placeholder({c.m / ob, c.c / icb, c.k, c.k, icb, ob}, DType::kF32, "w_packed");
  kiln::topi::Conv2dParams p;
  p.stride_h = p.stride_w = c.stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = c.pad;
  kiln::topi::ComputeResult r = kiln::topi::conv2d_nchwc(x, wp, p, out, ob, hints);
  const kiln::topi::Knobs knobs = kiln_bench::with_knob_overrides(kiln::topi::default_knobs(r, host_target()));
  Schedule s(r.outputs);
  kiln::topi::apply_schedule(s, r, knobs);
  PrimFunc f = lower(s, {x, wp, r.outputs[0]}, "conv_nchwc");
  const std::vector<TensorType> types = {{DType::kF32, x.shape()}, {DType::kF32, wp.shape()},
                                         {DType::kF32, r.outputs[0].shape()}};
  time_kernel(state, f, types, conv_flops(c, oh), threads, std::string(c.name) + " " + knobs.to_string());
}
BENCHMARK(BM_TopiConv2dNchwc)
    ->ArgsProduct({{0, 1, 2, 3}, {1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_TopiConv2dOp(benchmark::State& state) {
  const ConvCase& c = kConvs[state.range(0)];
  const int threads = static_cast<int>(state.range(1));
  const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1;
  const std::vector<TensorType> in = {{DType::kF32, {1, c.c, c.h, c.h}}, {DType::kF32, {c.m, c.c, c.k, c.k}}};
  kiln::tir::PrimFunc f = kiln::topi::build_op_kernel("conv2d", in, conv_attrs(c), host_target());
  std::vector<TensorType> types = in;
  types.push_back({DType::kF32, {1, c.m, oh, oh}});
  time_kernel(state, f, types, conv_flops(c, oh), threads, std::string(c.name) + " NCHW op (packs per call)");
}
BENCHMARK(BM_TopiConv2dOp)->ArgsProduct({{0, 1, 2, 3}, {1}})->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TopiDepthwise(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t c = 32, h = 112;
  const std::vector<TensorType> in = {{DType::kF32, {1, c, h, h}}, {DType::kF32, {c, 1, 3, 3}}};
  const kiln::ir::Attrs attrs = kiln::ir::Attrs()
                                    .set("pads", std::vector<int64_t>{1, 1, 1, 1})
                                    .set("groups", c);
  kiln::tir::PrimFunc f = kiln::topi::build_op_kernel("conv2d", in, attrs, host_target());
  std::vector<TensorType> types = in;
  types.push_back({DType::kF32, {1, c, h, h}});
  time_kernel(state, f, types, 2.0 * c * h * h * 9, threads, "depthwise 3x3 112x112x32, pad 1");
  // Compulsory traffic: read the input and the weights, write the output.
  const double bytes = 4.0 * (2 * c * h * h + c * 9);
  state.counters["GB_per_s"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_TopiDepthwise)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

kiln::topi::Knobs kiln_bench::with_knob_overrides(kiln::topi::Knobs k) {
  const char* env = std::getenv("KILN_BENCH_KNOBS");
  std::string text = env ? env : "";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    const size_t eq = item.find('=');
    if (eq != std::string::npos) k.set(item.substr(0, eq), std::atoll(item.c_str() + eq + 1));
    pos = end + 1;
  }
  return k;
}
