// The int8 kernels (topi::int8, docs/int8.md "Integer kernels") equal plain C++ integer
// references bit for bit, on the host (AVX2: the exact and the narrow vpmaddubsw forms):
// - matmul: u8 A x s8 W with the weights packed into i32 panels and the requantize epilogue (data
//   zero point via column sums, bias, per-column f32 scale rounded half to even, output zero
//   point, clamp, optional u8 residual add), at sizes with K and N tails (K % 4, N % nb) and a
//   ReLU clamp; the loop-IR interpreter agrees on small cases;
// - blocked convolution: 1x1, 3x3 (padded, strided, dilated, asymmetric pads), the 7x7 stride-2
//   stem on 3 channels, NCHW and NCHW4c/8c/16c inputs (words read from the blocks, padded or in
//   place), channel tails (C % 4), column tails (OW % tile),
//   a residual add + ReLU in the epilogue;
// - depthwise convolution on NCHW[b]c: 3x3 pad 1, 5x5 stride 2 with asymmetric pads, ReLU clamp;
// - the graph ops' reference executor: qnn_conv2d + requantize (src/ir/ops/quantize*.cc, per-channel
//   x_scale, bias, ReLU clamp) equal the blocked kernel given scale = x_scale / y_scale; with
//   dequantize_linear after them, the kernel's dequantized f32 output (Requantize::dequantize)
//   equals it bit for bit, both clamps engaged.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/ndarray.h"
#include "kiln/ir/op.h"
#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "kiln/topi/int8.h"
#include "topi/topi_test_util.h"

namespace kiln::topi::int8 {
namespace {

using ir::NDArray;
using tir::DType;

// Runs the kernel `f` (JIT on the host) on `arrays`, its parameters in order.
void run_on_host(const tir::PrimFunc& f, const std::vector<NDArray*>& arrays) {
  codegen::LLVMModule module(codegen::host_target(), f->name);
  module.add_prim_func(f);
  codegen::JitModule jit(std::move(module));
  std::vector<std::vector<int64_t>> shapes(arrays.size());
  std::vector<DLTensor> args;
  for (size_t i = 0; i < arrays.size(); ++i) args.push_back(testing::dl_view(*arrays[i], shapes[i]));
  jit.run(f->name, args);
}

struct Case {
  int64_t m, k, n;
  bool narrow;
  Requantize rq;
  bool residual = false;  // a u8 [M, N] residual with zero point 100 and scale 0.75
};

constexpr int32_t kResZeroPoint = 100;
constexpr float kResScale = 0.75f;

// The rounding of the epilogue (int8.h): f32(y) * scale, or fma with the residual term.
int64_t rounded(int64_t y, float scale, const uint8_t* res) {
  if (res == nullptr) return static_cast<int64_t>(std::nearbyint(static_cast<float>(y) * scale));
  const float r = static_cast<float>(int32_t{*res} - kResZeroPoint) * kResScale;
  return static_cast<int64_t>(std::nearbyint(std::fma(static_cast<float>(y), scale, r)));
}

// out[m, n] per the contract in int8.h, in plain integer C++ (the f32 multiply as the kernel's).
std::vector<uint8_t> reference(const Case& c, const NDArray& a, const NDArray& w, const NDArray& bias, const NDArray& scale,
                               const NDArray& res) {
  std::vector<uint8_t> out(c.m * c.n);
  const auto* pa = static_cast<const uint8_t*>(a.raw_data());
  const auto* pw = static_cast<const int8_t*>(w.raw_data());
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      int64_t y = bias.data<int32_t>()[j];
      for (int64_t k = 0; k < c.k; ++k) y += (int64_t{pa[i * c.k + k]} - c.rq.a_zero_point) * pw[k * c.n + j];
      const int64_t q = rounded(y, scale.data<float>()[j], c.residual ? &res.data<uint8_t>()[i * c.n + j] : nullptr) + c.rq.out_zero_point;
      out[i * c.n + j] = static_cast<uint8_t>(std::clamp<int64_t>(q, c.rq.lo, c.rq.hi));
    }
  }
  return out;
}

void check(const Case& c, bool also_interpret = false) {
  std::mt19937 rng(static_cast<uint32_t>(c.m * 131 + c.k * 7 + c.n));
  NDArray a = NDArray::empty(DType::kU8, {c.m, c.k}), w = NDArray::empty(DType::kI8, {c.k, c.n});
  NDArray bias = NDArray::empty(DType::kI32, {c.n}), scale = NDArray::empty(DType::kF32, {c.n});
  std::uniform_int_distribution<int> u8(0, 255), s8(c.narrow ? -64 : -128, c.narrow ? 64 : 127), b(-5000, 5000);
  for (auto& v : a.mutable_data<uint8_t>()) v = static_cast<uint8_t>(u8(rng));
  for (auto& v : w.mutable_data<int8_t>()) v = static_cast<int8_t>(s8(rng));
  for (auto& v : bias.mutable_data<int32_t>()) v = b(rng);
  NDArray res = NDArray::empty(DType::kU8, {c.m, c.n});
  for (auto& v : res.mutable_data<uint8_t>()) v = static_cast<uint8_t>(u8(rng));
  // Scales that spread the outputs over the u8 range: about 64 / (sqrt(K) * 128 * 75).
  std::uniform_real_distribution<float> sd(0.5f, 1.5f);
  for (auto& v : scale.mutable_data<float>()) v = sd(rng) * 64.0f / (std::sqrt(static_cast<float>(c.k)) * 128.0f * 75.0f);
  if (c.narrow) {
    ASSERT_TRUE(weights_fit_narrow(w.data<int8_t>().data(), w.numel()));
  }

  const MatmulKnobs knobs{16, 4, c.narrow};
  tir::Tensor A = tir::placeholder({c.m, c.k}, DType::kU8, "A");
  tir::Tensor W = tir::placeholder({c.k, c.n}, DType::kI8, "W");
  tir::Tensor B = tir::placeholder({c.n}, DType::kI32, "bias");
  tir::Tensor S = tir::placeholder({c.n}, DType::kF32, "scale");
  tir::Tensor panels = pack_matmul_weights(W, knobs.nb), colsum = weight_column_sums(W);
  tir::Tensor R = tir::placeholder({c.m, c.n}, DType::kU8, "residual");
  Int8Matmul mm = int8_matmul(A, panels, colsum, B, S, c.n, c.rq, knobs,
                              c.residual ? Residual{R, kResZeroPoint, kResScale} : Residual{});
  tir::Schedule s({mm.out});
  schedule_int8_matmul(s, mm, knobs);
  std::vector<tir::Tensor> params = {A, W, B, S};
  if (c.residual) params.push_back(R);
  params.push_back(mm.out);
  tir::PrimFunc f = tir::lower(s, params, "int8_mm");

  NDArray out = NDArray::empty(DType::kU8, {c.m, c.n});
  std::vector<NDArray*> arrays = {&a, &w, &bias, &scale};
  if (c.residual) arrays.push_back(&res);
  arrays.push_back(&out);
  run_on_host(f, arrays);
  const std::vector<uint8_t> want = reference(c, a, w, bias, scale, res);
  int distinct = 0;
  for (int64_t i = 0; i < c.m * c.n; ++i) {
    ASSERT_EQ(int{out.data<uint8_t>()[i]}, int{want[i]}) << "M=" << c.m << " K=" << c.k << " N=" << c.n << " narrow=" << c.narrow << " at " << i;
    distinct += want[i] != want[0];
  }
  if (c.m * c.n > 16) {
    EXPECT_GT(distinct, 0) << "degenerate outputs: the test would not see errors";
  }
  if (also_interpret) {
    NDArray ref = NDArray::empty(DType::kU8, {c.m, c.n});
    std::vector<NDArray> all = {a, w, bias, scale};
    if (c.residual) all.push_back(res);
    all.push_back(ref);
    tir::interpret(f, all);
    for (int64_t i = 0; i < c.m * c.n; ++i) ASSERT_EQ(ref.data<uint8_t>()[i], want[i]) << i;
  }
}

TEST(Int8Matmul, EqualsIntegerReferenceExactly) {
  const Requantize plain{3, 128, 0, 255}, relu{128, 10, 10, 255};
  check({5, 13, 7, false, plain}, /*also_interpret=*/true);
  check({5, 13, 7, true, plain}, /*also_interpret=*/true);
  for (bool narrow : {false, true}) {
    check({1, 3, 1, narrow, plain});
    check({8, 64, 16, narrow, relu});
    check({13, 100, 37, narrow, plain});
    check({49, 512, 128, narrow, relu});  // a ResNet-50 7x7 1x1-conv-like row block
    check({13, 100, 37, narrow, relu, /*residual=*/true});
  }
  check({5, 13, 7, false, plain, /*residual=*/true}, /*also_interpret=*/true);
}

struct ConvCase {
  int64_t n, c, h, w, m, kh, kw;
  Conv2dGeometry g;
  int64_t ib;  // 0: NCHW input, else NCHW[ib]c
  bool narrow;
  Requantize rq;
  bool residual = false;
};

void check_conv(const ConvCase& c) {
  std::mt19937 rng(static_cast<uint32_t>(c.c * 31 + c.h * 7 + c.m + c.kh));
  const int64_t oh = (c.h + c.g.pad_top + c.g.pad_bottom - c.g.dilation_h * (c.kh - 1) - 1) / c.g.stride_h + 1;
  const int64_t ow = (c.w + c.g.pad_left + c.g.pad_right - c.g.dilation_w * (c.kw - 1) - 1) / c.g.stride_w + 1;
  const ConvKnobs knobs{16, 4, c.narrow};
  const int64_t ob = knobs.ob;
  NDArray x = c.ib ? NDArray::empty(DType::kU8, {c.n, c.c / c.ib, c.h, c.w, c.ib}) : NDArray::empty(DType::kU8, {c.n, c.c, c.h, c.w});
  NDArray w = NDArray::empty(DType::kI8, {c.m, c.c, c.kh, c.kw});
  NDArray bias = NDArray::empty(DType::kI32, {c.m}), scale = NDArray::empty(DType::kF32, {c.m});
  std::uniform_int_distribution<int> u8(0, 255), s8(c.narrow ? -64 : -128, c.narrow ? 64 : 127), b(-5000, 5000);
  for (auto& v : x.mutable_data<uint8_t>()) v = static_cast<uint8_t>(u8(rng));
  for (auto& v : w.mutable_data<int8_t>()) v = static_cast<int8_t>(s8(rng));
  for (auto& v : bias.mutable_data<int32_t>()) v = b(rng);
  const float k = static_cast<float>(c.c * c.kh * c.kw);
  std::uniform_real_distribution<float> sd(0.5f, 1.5f);
  for (auto& v : scale.mutable_data<float>()) v = sd(rng) * 64.0f / (std::sqrt(k) * 128.0f * 75.0f);

  tir::Tensor X = tir::placeholder(x.shape(), DType::kU8, "x");
  tir::Tensor W = tir::placeholder(w.shape(), DType::kI8, "w");
  tir::Tensor B = tir::placeholder({c.m}, DType::kI32, "bias");
  tir::Tensor S = tir::placeholder({c.m}, DType::kF32, "scale");
  NDArray res = NDArray::empty(DType::kU8, {c.n, c.m / ob, oh, ow, ob});
  for (auto& v : res.mutable_data<uint8_t>()) v = static_cast<uint8_t>(u8(rng));
  tir::Tensor R = tir::placeholder(res.shape(), DType::kU8, "residual");
  Int8Conv2d conv = int8_conv2d(X, pack_conv_weights(W, ob), conv_weight_sums(W), B, S, c.kh, c.kw, c.g, c.rq, knobs,
                                c.residual ? Residual{R, kResZeroPoint, kResScale} : Residual{});
  tir::Schedule s({conv.out});
  schedule_int8_conv2d(s, conv, knobs);
  std::vector<tir::Tensor> params = {X, W, B, S};
  if (c.residual) params.push_back(R);
  params.push_back(conv.out);
  tir::PrimFunc f = tir::lower(s, params, "int8_conv");
  NDArray out = NDArray::empty(DType::kU8, {c.n, c.m / ob, oh, ow, ob});
  std::vector<NDArray*> arrays = {&x, &w, &bias, &scale};
  if (c.residual) arrays.push_back(&res);
  arrays.push_back(&out);
  run_on_host(f, arrays);

  const auto* px = x.data<uint8_t>().data();
  const auto* pw = w.data<int8_t>().data();
  auto x_at = [&](int64_t n, int64_t ch, int64_t y, int64_t xx) -> int64_t {
    if (y < 0 || y >= c.h || xx < 0 || xx >= c.w) return c.rq.a_zero_point;
    if (!c.ib) return px[((n * c.c + ch) * c.h + y) * c.w + xx];
    return px[(((n * (c.c / c.ib) + ch / c.ib) * c.h + y) * c.w + xx) * c.ib + ch % c.ib];
  };
  int distinct = 0;
  uint8_t first = 0;
  for (int64_t n = 0; n < c.n; ++n) {
    for (int64_t m = 0; m < c.m; ++m) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          int64_t y = bias.data<int32_t>()[m];
          for (int64_t ch = 0; ch < c.c; ++ch) {
            for (int64_t a = 0; a < c.kh; ++a) {
              for (int64_t bb = 0; bb < c.kw; ++bb) {
                const int64_t v = x_at(n, ch, i * c.g.stride_h + a * c.g.dilation_h - c.g.pad_top,
                                       j * c.g.stride_w + bb * c.g.dilation_w - c.g.pad_left);
                y += (v - c.rq.a_zero_point) * pw[((m * c.c + ch) * c.kh + a) * c.kw + bb];
              }
            }
          }
          const int64_t at = (((n * (c.m / ob) + m / ob) * oh + i) * ow + j) * ob + m % ob;
          const int64_t q = rounded(y, scale.data<float>()[m], c.residual ? &res.data<uint8_t>()[at] : nullptr);
          const auto want = static_cast<uint8_t>(std::clamp<int64_t>(q + c.rq.out_zero_point, c.rq.lo, c.rq.hi));
          ASSERT_EQ(int{out.data<uint8_t>()[at]}, int{want}) << "conv C=" << c.c << " " << c.kh << "x" << c.kw << " M=" << c.m
                                                             << " narrow=" << c.narrow << " at n" << n << " m" << m << " (" << i << ", " << j << ")";
          if (n == 0 && m == 0 && i == 0 && j == 0) first = want;
          distinct += want != first;
        }
      }
    }
  }
  EXPECT_GT(distinct, 0) << "degenerate outputs: the test would not see errors";
}

TEST(Int8Conv2d, EqualsIntegerReferenceExactly) {
  const Requantize plain{7, 120, 0, 255}, relu{128, 20, 20, 255};
  for (bool narrow : {false, true}) {
    check_conv({1, 13, 7, 7, 16, 1, 1, {}, 0, narrow, plain});                                  // 1x1, C % 4, 7 % 4 columns
    check_conv({1, 16, 9, 9, 32, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1}, 8, narrow, relu});            // 3x3 pad 1, NCHW8c
    check_conv({2, 8, 11, 10, 16, 3, 3, {2, 2, 1, 0, 0, 1, 1, 1}, 0, narrow, plain});          // stride 2, asymmetric pads
    check_conv({1, 3, 20, 20, 16, 7, 7, {2, 2, 3, 3, 3, 3, 1, 1}, 0, narrow, plain});          // the stem
    check_conv({1, 8, 12, 12, 16, 3, 3, {1, 1, 2, 2, 2, 2, 2, 2}, 0, narrow, relu});           // dilation 2
    check_conv({1, 32, 14, 14, 32, 1, 1, {2, 2, 0, 0, 0, 0, 1, 1}, 16, narrow, plain});        // strided 1x1, NCHW16c
    check_conv({1, 16, 7, 9, 32, 1, 1, {}, 16, narrow, relu, /*residual=*/true});               // bottleneck expand + add + relu
    // Words read from the u8 blocks (4 | ib): NCHW4c (one word a block) padded, strided (2, 1),
    // dilated, asymmetric pads, batch 2; NCHW8c read in place by an unpadded strided 3x3 (three
    // blocks, a column tail).
    check_conv({2, 12, 11, 10, 16, 3, 3, {2, 1, 0, 2, 1, 0, 1, 2}, 4, narrow, relu});
    check_conv({1, 24, 13, 15, 16, 3, 3, {2, 2, 0, 0, 0, 0, 1, 1}, 8, narrow, plain});
  }
}

struct DwCase {
  int64_t c, h, w, b, k;
  Conv2dGeometry g;
  Requantize rq;
};

void check_depthwise(const DwCase& d) {
  std::mt19937 rng(static_cast<uint32_t>(d.c * 17 + d.h + d.k));
  const int64_t oh = (d.h + d.g.pad_top + d.g.pad_bottom - d.k) / d.g.stride_h + 1;
  const int64_t ow = (d.w + d.g.pad_left + d.g.pad_right - d.k) / d.g.stride_w + 1;
  NDArray x = NDArray::empty(DType::kU8, {1, d.c / d.b, d.h, d.w, d.b}), w = NDArray::empty(DType::kI8, {d.c, 1, d.k, d.k});
  NDArray bias = NDArray::empty(DType::kI32, {d.c}), scale = NDArray::empty(DType::kF32, {d.c});
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127), b(-3000, 3000);
  std::uniform_real_distribution<float> sd(0.5f, 1.5f);
  for (auto& v : x.mutable_data<uint8_t>()) v = static_cast<uint8_t>(u8(rng));
  for (auto& v : w.mutable_data<int8_t>()) v = static_cast<int8_t>(s8(rng));
  for (auto& v : bias.mutable_data<int32_t>()) v = b(rng);
  for (auto& v : scale.mutable_data<float>()) v = sd(rng) * 64.0f / (static_cast<float>(d.k) * 128.0f * 75.0f);
  tir::Tensor X = tir::placeholder(x.shape(), DType::kU8, "x");
  tir::Tensor W = tir::placeholder(w.shape(), DType::kI8, "w");
  tir::Tensor B = tir::placeholder({d.c}, DType::kI32, "bias");
  tir::Tensor S = tir::placeholder({d.c}, DType::kF32, "scale");
  Int8Depthwise dw = int8_depthwise_conv2d(X, pack_depthwise_weights(W, d.b), conv_weight_sums(W), B, S, d.g, d.rq);
  tir::Schedule s({dw.out});
  schedule_int8_depthwise(s, dw, 4);
  tir::PrimFunc f = tir::lower(s, {X, W, B, S, dw.out}, "int8_dw");
  NDArray out = NDArray::empty(DType::kU8, {1, d.c / d.b, oh, ow, d.b});
  run_on_host(f, {&x, &w, &bias, &scale, &out});
  int distinct = 0;
  for (int64_t c = 0; c < d.c; ++c) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        int64_t y = bias.data<int32_t>()[c];
        for (int64_t a = 0; a < d.k; ++a) {
          for (int64_t bb = 0; bb < d.k; ++bb) {
            const int64_t r = i * d.g.stride_h + a - d.g.pad_top, q = j * d.g.stride_w + bb - d.g.pad_left;
            const int64_t v = (r < 0 || r >= d.h || q < 0 || q >= d.w)
                                  ? d.rq.a_zero_point
                                  : x.data<uint8_t>()[(((c / d.b) * d.h + r) * d.w + q) * d.b + c % d.b];
            y += (v - d.rq.a_zero_point) * w.data<int8_t>()[(c * d.k + a) * d.k + bb];
          }
        }
        const float fy = static_cast<float>(y) * scale.data<float>()[c];
        const auto want = static_cast<uint8_t>(std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(fy)) + d.rq.out_zero_point, d.rq.lo, d.rq.hi));
        const uint8_t got = out.data<uint8_t>()[(((c / d.b) * oh + i) * ow + j) * d.b + c % d.b];
        ASSERT_EQ(int{got}, int{want}) << "depthwise " << d.k << "x" << d.k << " c" << c << " (" << i << ", " << j << ")";
        distinct += want != out.data<uint8_t>()[0];
      }
    }
  }
  EXPECT_GT(distinct, 0) << "degenerate outputs: the test would not see errors";
}

TEST(Int8Depthwise, EqualsIntegerReferenceExactly) {
  check_depthwise({32, 14, 14, 16, 3, {1, 1, 1, 1, 1, 1, 1, 1}, {9, 128, 0, 255}});
  check_depthwise({24, 11, 13, 8, 5, {2, 2, 2, 1, 1, 2, 1, 1}, {128, 30, 30, 255}});
}

std::vector<NDArray> run_reference(const std::string& op, const std::vector<NDArray>& in, const ir::Attrs& attrs) {
  const ir::OpDef& def = ir::OpRegistry::global().get(op);
  const ir::Attrs a = ir::OpRegistry::global().validate_attrs(def, attrs);
  std::vector<ir::TensorType> types;
  for (const NDArray& x : in) types.push_back({x.dtype(), x.shape()});
  return def.reference(in, a, def.infer_type(types, a));
}

TEST(Int8Conv2d, OtherTargetsGetTheirDotInstruction) {
  // Compiled only: the same 3x3 kernel for AVX-512 VNNI (zmm vpdpbusd), AVX-VNNI and AArch64 sdot.
  tir::Tensor X = tir::placeholder({1, 2, 8, 8, 16}, DType::kU8, "x");
  tir::Tensor W = tir::placeholder({32, 32, 3, 3}, DType::kI8, "w");
  tir::Tensor B = tir::placeholder({32}, DType::kI32, "bias");
  tir::Tensor S = tir::placeholder({32}, DType::kF32, "scale");
  const ConvKnobs knobs{16, 4, false};
  Int8Conv2d conv = int8_conv2d(X, pack_conv_weights(W, 16), conv_weight_sums(W), B, S, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1},
                                {128, 0, 0, 255}, knobs);
  tir::Schedule sch({conv.out});
  schedule_int8_conv2d(sch, conv, knobs);
  const tir::PrimFunc f = tir::lower(sch, {X, W, B, S, conv.out}, "int8_conv_isa");
  for (auto [target, want] : std::vector<std::pair<std::string, std::string>>{
           {"llvm -mtriple=x86_64-linux-gnu -mcpu=icelake-server", "vpdpbusd\t%zmm"},
           {"llvm -mtriple=x86_64-linux-gnu -mattr=+avx2,+avxvnni", "vpdpbusd"},
           {"llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod", "sdot"}}) {
    codegen::LLVMModule module(codegen::parse_target(target), "int8_conv_isa");
    module.add_prim_func(f);
    const std::string as = module.assembly();
    EXPECT_NE(as.find(want), std::string::npos) << target << " lacks " << want;
  }
}

// Random u8 input [n, c, h, w], s8 weights [m, c, k, k], i32 bias and per-channel x_scale
// (uniform in [0.5, 1.5) x xs_unit) for the graph-ops comparisons below.
struct GraphOpsConv {
  NDArray x, wt, bias, xs;
};

GraphOpsConv random_graph_ops_conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int64_t k, uint32_t seed, float xs_unit) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127), bd(-4000, 4000);
  std::uniform_real_distribution<float> sd(0.5f, 1.5f);
  GraphOpsConv g{NDArray::empty(DType::kU8, {n, c, h, w}), NDArray::empty(DType::kI8, {m, c, k, k}),
                 NDArray::empty(DType::kI32, {m}), NDArray::empty(DType::kF32, {m})};
  for (auto& v : g.x.mutable_data<uint8_t>()) v = static_cast<uint8_t>(u8(rng));
  for (auto& v : g.wt.mutable_data<int8_t>()) v = static_cast<int8_t>(s8(rng));
  for (auto& v : g.bias.mutable_data<int32_t>()) v = bd(rng);
  for (auto& v : g.xs.mutable_data<float>()) v = sd(rng) * xs_unit;
  return g;
}

// qnn_conv2d(x, w, x_zero_point, 0) of `d` on the reference executor (groups 1, no dilation).
NDArray graph_ops_acc(const GraphOpsConv& d, int32_t xzp, std::vector<int64_t> strides, std::vector<int64_t> pads) {
  const ir::Attrs attrs = ir::Attrs()
                              .set("strides", std::move(strides))
                              .set("pads", std::move(pads))
                              .set("dilations", std::vector<int64_t>{1, 1})
                              .set("groups", int64_t{1});
  return run_reference("qnn_conv2d", {d.x, d.wt, NDArray::scalar(DType::kU8, xzp), NDArray::scalar(DType::kI8, 0)}, attrs)[0];
}

// The fast kernel on `d` (k x k, ob output channels a block) with scale = x_scale / y_scale (one
// f32 division, as the requantize op computes it), run on the host: its NCHW[ob]c output.
NDArray run_fast_conv(const GraphOpsConv& d, float y_scale, int64_t k, int64_t ob, const Conv2dGeometry& g,
                      const Requantize& rq, int64_t oh, int64_t ow) {
  const int64_t n = d.x.shape()[0], m = d.wt.shape()[0];
  NDArray scale = NDArray::empty(DType::kF32, {m});
  for (int64_t i = 0; i < m; ++i) scale.mutable_data<float>()[i] = d.xs.data<float>()[i] / y_scale;
  const ConvKnobs knobs{ob, 4, false};
  tir::Tensor X = tir::placeholder(d.x.shape(), DType::kU8, "x");
  tir::Tensor W = tir::placeholder(d.wt.shape(), DType::kI8, "w");
  tir::Tensor B = tir::placeholder({m}, DType::kI32, "bias");
  tir::Tensor S = tir::placeholder({m}, DType::kF32, "scale");
  Int8Conv2d conv = int8_conv2d(X, pack_conv_weights(W, ob), conv_weight_sums(W), B, S, k, k, g, rq, knobs);
  tir::Schedule sch({conv.out});
  schedule_int8_conv2d(sch, conv, knobs);
  NDArray out = NDArray::empty(rq.dequantize ? DType::kF32 : DType::kU8, {n, m / ob, oh, ow, ob});
  NDArray x = d.x, wt = d.wt, bias = d.bias;
  run_on_host(tir::lower(sch, {X, W, B, S, conv.out}, "int8_conv_vs_ops"), {&x, &wt, &bias, &scale, &out});
  return out;
}

TEST(Int8Conv2d, EqualsTheGraphOpsReference) {
  // qnn_conv2d(x u8, w s8, x_zero_point, w_zero_point 0) -> requantize(x_scale [M], y_scale, y_zero_point,
  // bias [M], clamp_min = y_zero_point: ReLU): the graph form the int8 layout pass will rewrite.
  const int64_t c = 24, h = 10, w = 9, m = 32, k = 3, ob = 16;
  const int32_t xzp = 17, yzp = 40;
  const float y_scale = 0.37f;
  const GraphOpsConv d = random_graph_ops_conv(1, c, h, w, m, k, 5, 1e-3f);
  const NDArray acc = graph_ops_acc(d, xzp, {2, 1}, {1, 0, 1, 2});
  const NDArray want = run_reference("requantize", {acc, d.xs, NDArray::scalar(DType::kF32, y_scale), NDArray::scalar(DType::kU8, yzp), d.bias},
                                     ir::Attrs().set("axis", int64_t{1}).set("clamp_min", int64_t{yzp}))[0];
  const int64_t oh = want.shape()[2], ow = want.shape()[3];
  const NDArray out = run_fast_conv(d, y_scale, k, ob, Conv2dGeometry{2, 1, 1, 0, 1, 2, 1, 1}, {xzp, yzp, yzp, 255}, oh, ow);
  int distinct = 0;
  for (int64_t mm = 0; mm < m; ++mm) {
    for (int64_t i = 0; i < oh * ow; ++i) {
      const uint8_t expected = want.data<uint8_t>()[mm * oh * ow + i];
      ASSERT_EQ(int{out.data<uint8_t>()[((mm / ob) * oh * ow + i) * ob + mm % ob]}, int{expected}) << "channel " << mm << " pixel " << i;
      distinct += expected != want.data<uint8_t>()[0];
    }
  }
  EXPECT_GT(distinct, 0) << "degenerate outputs: the test would not see errors";
}

TEST(Int8Conv2d, DequantizedOutputEqualsTheGraphOpsReference) {
  // dequantize_linear(requantize(qnn_conv2d(...)), d_scale, d_zero_point) against the kernel's
  // f32 output (Requantize::dequantize: the f32 clamp-and-round without the u8 round trip), bit
  // for bit, with both clamps engaged (clamp_min 50 above the zero point, clamp_max 200), a
  // dequantize zero point unlike the output's, 13 channels (a word tail, NCHW input), M = 24
  // (ob = 8), stride (1, 2) and asymmetric pads.
  const int64_t c = 13, h = 9, w = 11, m = 24, k = 3, ob = 8;
  const int32_t xzp = 101, yzp = 40, lo = 50, hi = 200, dzp = 37;
  const float y_scale = 0.29f, dscale = 0.0371f;
  const GraphOpsConv d = random_graph_ops_conv(1, c, h, w, m, k, 11, 1.5e-3f);
  const NDArray acc = graph_ops_acc(d, xzp, {1, 2}, {0, 2, 1, 1});
  const NDArray q = run_reference("requantize", {acc, d.xs, NDArray::scalar(DType::kF32, y_scale), NDArray::scalar(DType::kU8, yzp), d.bias},
                                  ir::Attrs().set("axis", int64_t{1}).set("clamp_min", int64_t{lo}).set("clamp_max", int64_t{hi}))[0];
  const NDArray want = run_reference("dequantize_linear", {q, NDArray::scalar(DType::kF32, dscale), NDArray::scalar(DType::kU8, dzp)},
                                     ir::Attrs().set("axis", int64_t{1}))[0];
  const int64_t oh = want.shape()[2], ow = want.shape()[3];
  Requantize rq{xzp, yzp, lo, hi};
  rq.dequantize = true;
  rq.dequantize_scale = dscale;
  rq.dequantize_zero_point = dzp;
  const NDArray out = run_fast_conv(d, y_scale, k, ob, Conv2dGeometry{1, 2, 0, 2, 1, 1, 1, 1}, rq, oh, ow);
  int at_lo = 0, at_hi = 0, inside = 0;
  for (int64_t mm = 0; mm < m; ++mm) {
    for (int64_t i = 0; i < oh * ow; ++i) {
      const float expected = want.data<float>()[mm * oh * ow + i];
      const float got = out.data<float>()[((mm / ob) * oh * ow + i) * ob + mm % ob];
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expected)) << "channel " << mm << " pixel " << i;
      const uint8_t qv = q.data<uint8_t>()[mm * oh * ow + i];
      at_lo += qv == lo;
      at_hi += qv == hi;
      inside += qv > lo && qv < hi;
    }
  }
  EXPECT_GT(at_lo, 0) << "clamp_min never engaged";
  EXPECT_GT(at_hi, 0) << "clamp_max never engaged";
  EXPECT_GT(inside, oh * ow) << "too few unclamped outputs: the test would not see rounding errors";
}

}  // namespace
}  // namespace kiln::topi::int8
