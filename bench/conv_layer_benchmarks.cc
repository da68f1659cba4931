// Every distinct convolution of ResNet-50 (batch 1) as the compiled model runs it at -O3: one
// fused group kernel (build_group_kernel) of conv2d_nchwc on an NCHW{b}c input with weights
// pre-packed as [M/b, C/b, kh, kw, b, b] and a bias, then (bottleneck output convs) the residual
// add, then ReLU where the model has one; b = AlterOpLayout's channel block (two vectors of the
// target's f32 lanes when they divide the channels).
//
//   BM_ResNet50Conv/layer/threads   GFLOPS and pct_peak per layer; the label names the shape, the
//                                   number of times ResNet-50 runs it and the knobs.
//
//   BM_SmallConv/layer/threads      the same for small outputs (7x7, 14x14) and grouped convs
//                                   (RegNetY-400MF, ResNeXt-50 32x4d) in their models' blocks.
//
// KILN_BENCH_KNOBS="tile_ow=6,oc_tile=2" overrides knob values; KILN_BENCH_DUMP=1 prints each
// kernel's loop IR to stderr.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "bench_report.h"
#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/ndarray.h"
#include "kiln/ir/op.h"
#include "kiln/runtime/c_api.h"
#include "kiln/tir/printer.h"
#include "kiln/topi/build.h"
#include "kiln/topi/schedule.h"

namespace {

using kiln::codegen::host_target;
using kiln::ir::DType;
using kiln::ir::NDArray;
using kiln::ir::TensorType;
using kiln::topi::GroupMember;
using kiln::topi::ValueRef;

struct Layer {
  int64_t c, h, m, k, stride, pad;
  bool residual, relu;
  int count;  // occurrences in ResNet-50
};
// Stem, then per stage: reduce 1x1, 3x3 (stride on the first block), expand 1x1 + add + relu,
// the strided projection 1x1 (no relu), as torchvision's ResNet-50 v1.5.
const Layer kLayers[] = {
    {3, 224, 64, 7, 2, 3, false, true, 1},
    {64, 56, 64, 1, 1, 0, false, true, 1},      {64, 56, 64, 3, 1, 1, false, true, 3},
    {64, 56, 256, 1, 1, 0, true, true, 3},      {64, 56, 256, 1, 1, 0, false, false, 1},
    {256, 56, 64, 1, 1, 0, false, true, 2},     {256, 56, 128, 1, 1, 0, false, true, 1},
    {128, 56, 128, 3, 2, 1, false, true, 1},    {128, 28, 512, 1, 1, 0, true, true, 4},
    {256, 56, 512, 1, 2, 0, false, false, 1},   {512, 28, 128, 1, 1, 0, false, true, 3},
    {128, 28, 128, 3, 1, 1, false, true, 3},    {512, 28, 256, 1, 1, 0, false, true, 1},
    {256, 28, 256, 3, 2, 1, false, true, 1},    {256, 14, 1024, 1, 1, 0, true, true, 6},
    {512, 28, 1024, 1, 2, 0, false, false, 1},  {1024, 14, 256, 1, 1, 0, false, true, 5},
    {256, 14, 256, 3, 1, 1, false, true, 5},    {1024, 14, 512, 1, 1, 0, false, true, 1},
    {512, 14, 512, 3, 2, 1, false, true, 1},    {512, 7, 2048, 1, 1, 0, true, true, 3},
    {1024, 14, 2048, 1, 2, 0, false, false, 1}, {2048, 7, 512, 1, 1, 0, false, true, 2},
    {512, 7, 512, 3, 1, 1, false, true, 2},
};

int64_t largest_divisor_at_most(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// One layer as a compiled model runs it: input NCHW{xb}c, weights [M/ob, (C/g)/xb, k, k, xb, ob].
struct LayerSpec {
  int64_t c, h, m, k, stride, pad, groups, xb, ob;
  bool residual, relu;
  int count;
};

void run_layer(benchmark::State& state, const LayerSpec& l, int threads) {
  const int64_t oh = (l.h + 2 * l.pad - l.k) / l.stride + 1;
  const kiln::ir::Attrs attrs = kiln::ir::OpRegistry::global().validate_attrs(
      kiln::ir::OpRegistry::global().get("conv2d_nchwc"),
      kiln::ir::Attrs()
          .set("strides", std::vector<int64_t>{l.stride, l.stride})
          .set("pads", std::vector<int64_t>{l.pad, l.pad, l.pad, l.pad})
          .set("groups", l.groups));
  const int64_t xb = l.xb, ob = l.ob;
  std::vector<TensorType> in = {{DType::kF32, {1, l.c / xb, l.h, l.h, xb}},
                                {DType::kF32, {l.m / ob, l.c / l.groups / xb, l.k, l.k, xb, ob}},
                                {DType::kF32, {l.m}}};
  std::vector<GroupMember> members = {
      {"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, attrs}};
  if (l.residual) {
    in.push_back({DType::kF32, {1, l.m / ob, oh, oh, ob}});
    members.push_back({"add", {ValueRef::member(0), ValueRef::input(3)}, {}});
  }
  if (l.relu) members.push_back({"relu", {ValueRef::member(static_cast<int>(members.size()) - 1)}, {}});
  const TensorType out{DType::kF32, {1, l.m / ob, oh, oh, ob}};
  kiln::topi::OpKernelOptions options;
  {
    // The default knobs of the group (as build_group_kernel derives them), then the overrides.
    std::vector<kiln::tir::Tensor> ph;
    for (size_t i = 0; i < in.size(); ++i) {
      ph.push_back(kiln::tir::placeholder(in[i].shape, in[i].dtype, "in" + std::to_string(i)));
    }
    const kiln::topi::ComputeResult r = kiln::topi::compute_op("conv2d_nchwc", {ph[0], ph[1], ph[2]}, attrs,
                                                               kiln::topi::layout_hints(host_target()));
    options.knobs = kiln_bench::with_knob_overrides(kiln::topi::default_knobs(r, host_target()));
  }
  const kiln::tir::PrimFunc f = kiln::topi::build_group_kernel(
      members, in, {ValueRef::member(static_cast<int>(members.size()) - 1)}, host_target(), -1, options);
  if (std::getenv("KILN_BENCH_DUMP")) std::cerr << f << "\n";
  kiln::codegen::LLVMModule module(host_target(), "conv_layer_bench");
  module.add_prim_func(f);
  kiln::codegen::JitModule jit(std::move(module));
  std::vector<TensorType> types = in;
  types.push_back(out);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<NDArray> arrays;
  std::vector<std::vector<int64_t>> shapes(types.size());
  std::vector<DLTensor> args;
  for (size_t i = 0; i < types.size(); ++i) {
    arrays.push_back(NDArray::empty(types[i].dtype, types[i].shape));
    for (float& v : arrays.back().mutable_data<float>()) v = dist(rng);
    shapes[i] = types[i].shape;
    DLTensor t{};
    t.data = arrays.back().mutable_raw_data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shapes[i].size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shapes[i].data();
    args.push_back(t);
  }
  kiln_set_num_threads(threads);
  kiln::codegen::KernelFunction fn = jit.kernel(f->name);
  const int32_t n = static_cast<int32_t>(args.size());
  if (fn(args.data(), n) != 0) state.SkipWithError(kiln_get_last_error());
  // KILN_BENCH_COLD=1: evict the caches (write 64 MiB) before each run, as in a whole model whose
  // 100 MiB of weights pass through L3 between two runs of a layer; the eviction is not timed.
  std::vector<char> evict(std::getenv("KILN_BENCH_COLD") ? 64 << 20 : 0);
  double cpu = 0, s = 0;
  for (auto _ : state) {
    if (!evict.empty()) {
      for (size_t i = 0; i < evict.size(); i += 64) evict[i] = static_cast<char>(evict[i] + 1);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = kiln_bench::thread_cpu_seconds();
    fn(args.data(), n);
    cpu += kiln_bench::thread_cpu_seconds() - c0;
    s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double flops = 2.0 * l.m * oh * oh * (l.c / l.groups) * l.k * l.k;
  state.SetLabel(std::to_string(l.k) + "x" + std::to_string(l.k) + " " + std::to_string(l.c) + "->" +
                 std::to_string(l.m) + (l.groups > 1 ? " g" + std::to_string(l.groups) : "") + " s" + std::to_string(l.stride) + " " + std::to_string(oh) + "x" +
                 std::to_string(oh) + (l.residual ? " +add" : "") + (l.relu ? " +relu" : "") + " x" +
                 std::to_string(l.count) + " b" + std::to_string(xb) + "/" + std::to_string(ob) + " " + options.knobs->to_string());
  kiln_bench::report(state, flops, s, threads, cpu);
  kiln_set_num_threads(1);
}
void BM_ResNet50Conv(benchmark::State& state) {
  const Layer& l = kLayers[state.range(0)];
  const int64_t lanes = kiln::topi::layout_hints(host_target()).vector_lanes_f32;
  // AlterOpLayout's channel block: two vectors when they divide the channels, else the largest
  // divisor <= one vector.
  auto block = [&](int64_t ch) { return ch % (2 * lanes) == 0 ? 2 * lanes : largest_divisor_at_most(ch, lanes); };
  run_layer(state, {l.c, l.h, l.m, l.k, l.stride, l.pad, 1, block(l.c), block(l.m), l.residual, l.relu, l.count},
            static_cast<int>(state.range(1)));
}
BENCHMARK(BM_ResNet50Conv)
    ->ArgsProduct({benchmark::CreateDenseRange(0, static_cast<int64_t>(std::size(kLayers)) - 1, 1), {1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Small outputs and grouped convs (issue 18) in the blocks AlterOpLayout gives them in the models:
// RegNetY-400MF's stage 3/4 1x1 and grouped 3x3 convs (groups of 8; 440 channels padded to 448
// for the 1x1 outputs), ResNeXt-50 32x4d's grouped 3x3 convs (groups of 4 and 8).
const LayerSpec kSmallLayers[] = {
    {448, 7, 448, 1, 1, 0, 1, 16, 16, false, true, 5},    // RegNetY stage 4: 1x1 + relu
    {440, 7, 448, 1, 1, 0, 1, 8, 16, true, true, 5},      // 1x1 after the grouped conv + add + relu
    {440, 7, 440, 3, 1, 1, 55, 8, 8, false, true, 5},     // grouped 3x3, 55 groups of 8
    {440, 14, 440, 3, 2, 1, 55, 8, 8, false, true, 1},    // its stride-2 first block
    {208, 14, 208, 1, 1, 0, 1, 16, 16, false, true, 5},   // stage 3: 1x1 + relu
    {208, 14, 208, 1, 1, 0, 1, 8, 16, true, true, 5},     // 1x1 after the grouped conv + add + relu
    {208, 14, 208, 3, 1, 1, 26, 8, 8, false, true, 5},    // grouped 3x3, 26 groups of 8
    {104, 28, 104, 3, 1, 1, 13, 8, 8, false, true, 2},    // stage 2 grouped 3x3
    {128, 56, 128, 3, 1, 1, 32, 4, 4, false, true, 3},    // ResNeXt-50 32x4d stage 1: groups of 4
    {256, 28, 256, 3, 1, 1, 32, 8, 8, false, true, 3},    // stage 2: groups of 8
    {512, 14, 512, 3, 1, 1, 32, 16, 16, false, true, 5},  // stage 3: groups of 16
    {1024, 7, 1024, 3, 1, 1, 32, 16, 16, false, true, 2}, // stage 4: groups of 32
};

void BM_SmallConv(benchmark::State& state) {
  run_layer(state, kSmallLayers[state.range(0)], static_cast<int>(state.range(1)));
}
BENCHMARK(BM_SmallConv)
    ->ArgsProduct({benchmark::CreateDenseRange(0, static_cast<int64_t>(std::size(kSmallLayers)) - 1, 1), {1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
