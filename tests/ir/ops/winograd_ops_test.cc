// The Winograd ops (src/ir/ops/conv2d_winograd.cc): the transform matrices satisfy the 1-D
// minimal-filtering identity, the double reference of conv2d_winograd_nchwc (with the reference
// weight transform) equals conv2d_nchwc's reference at odd sizes (output tiles that do not divide
// the output, pads 0, 1 and asymmetric, both tiles), and the type errors name the input or attribute.
// Tolerances: f64 1e-12 relative to max|y| (double rounding only); f32 2e-6 (the transformed
// weights and the output are rounded to f32 once).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/ops/winograd.h"
#include "kiln/ir/op.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

NDArray random_array(const TensorType& t, uint32_t seed) {
  NDArray a = NDArray::empty(t.dtype, t.shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, u(rng));
  return a;
}

NDArray run(const std::string& op, const std::vector<NDArray>& in, const Attrs& attrs) {
  const OpDef& def = OpRegistry::global().get(op);
  const Attrs full = OpRegistry::global().validate_attrs(def, attrs);
  std::vector<TensorType> types;
  for (const NDArray& a : in) types.push_back(a.type());
  return def.reference(in, full, def.infer_type(types, full))[0];
}

double max_rel_diff(const NDArray& a, const NDArray& b) {
  EXPECT_EQ(a.type(), b.type());
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < b.numel(); ++i) {
    diff = std::max(diff, std::fabs(a.get_as_double(i) - b.get_as_double(i)));
    scale = std::max(scale, std::fabs(b.get_as_double(i)));
  }
  return diff / scale;
}

TEST(WinogradMatrices, MinimalFilteringIdentity) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int m : {2, 4}) {
    const ops::WinogradMatrices& w = ops::winograd_matrices(m);
    ASSERT_EQ(w.alpha, m + 2);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> d(w.alpha), g(3);
      for (double& v : d) v = u(rng);
      for (double& v : g) v = u(rng);
      std::vector<double> prod(w.alpha);
      for (int e = 0; e < w.alpha; ++e) {
        double gg = 0, bd = 0;
        for (int k = 0; k < 3; ++k) gg += w.G(e, k) * g[k];
        for (int i = 0; i < w.alpha; ++i) bd += w.BT(e, i) * d[i];
        prod[e] = gg * bd;
      }
      for (int i = 0; i < m; ++i) {
        double y = 0, want = 0;
        for (int e = 0; e < w.alpha; ++e) y += w.AT(i, e) * prod[e];
        for (int k = 0; k < 3; ++k) want += d[i + k] * g[k];
        EXPECT_NEAR(y, want, 1e-13) << "F(" << m << ",3) output " << i;
      }
    }
  }
}

struct ConvCase {
  int64_t n, c, h, w, m, xb, ib, ob;
  std::vector<int64_t> pads;
};

// conv2d_winograd_nchwc(x, winograd_weight_transform(w)) vs conv2d_nchwc(x, w).
void check_against_direct(const ConvCase& k, int tile, DType dt, double tol, uint32_t seed) {
  SCOPED_TRACE("tile " + std::to_string(tile) + " C " + std::to_string(k.c) + " H " + std::to_string(k.h) + " W " +
               std::to_string(k.w));
  const NDArray x = random_array({dt, {k.n, k.c / k.xb, k.h, k.w, k.xb}}, seed);
  const NDArray w = random_array({dt, {k.m / k.ob, k.c / k.ib, 3, 3, k.ib, k.ob}}, seed + 1);
  const NDArray b = random_array({dt, {k.m}}, seed + 2);
  const NDArray direct = run("conv2d_nchwc", {x, w, b}, Attrs().set("pads", k.pads));
  const NDArray u = run("winograd_weight_transform", {w}, Attrs().set("tile", int64_t{tile}));
  EXPECT_EQ(u.shape(), (Shape{tile + 2, tile + 2, k.m / k.ob, k.c, k.ob}));
  const NDArray y = run("conv2d_winograd_nchwc", {x, u, b}, Attrs().set("pads", k.pads).set("tile", int64_t{tile}));
  EXPECT_LE(max_rel_diff(y, direct), tol);
}

TEST(WinogradOps, ReferenceEqualsDirectConvolution) {
  const std::vector<ConvCase> cases = {
      {2, 6, 7, 9, 8, 3, 3, 4, {1, 1, 1, 1}},   // 7x9 output: tiles stick out for m = 2 and 4
      {1, 8, 11, 7, 4, 8, 4, 2, {0, 0, 0, 0}},  // 9x5 output, no padding, ib != xb
      {1, 4, 6, 10, 8, 4, 2, 8, {1, 0, 2, 1}},  // asymmetric pads
      {1, 16, 3, 3, 16, 8, 8, 8, {1, 1, 1, 1}}, // output smaller than one tile
  };
  uint32_t seed = 10;
  for (const ConvCase& c : cases) {
    for (int tile : {2, 4}) {
      check_against_direct(c, tile, DType::kF64, 1e-12, seed);
      check_against_direct(c, tile, DType::kF32, 2e-6, seed);
      seed += 3;
    }
  }
}

bool throws_naming(const std::function<void()>& f, const std::string& text) {
  try {
    f();
  } catch (const UserError& e) {
    return std::string(e.what()).find(text) != std::string::npos;
  }
  return false;
}

TEST(WinogradOps, TypeErrors) {
  const OpDef& wt = OpRegistry::global().get("winograd_weight_transform");
  const OpDef& conv = OpRegistry::global().get("conv2d_winograd_nchwc");
  auto attrs = [](const OpDef& d, Attrs a) { return OpRegistry::global().validate_attrs(d, a); };
  const TensorType w{DType::kF32, {2, 1, 3, 3, 4, 8}};
  EXPECT_TRUE(throws_naming([&] { wt.infer_type({w}, attrs(wt, Attrs().set("tile", int64_t{3}))); }, "'tile'"));
  EXPECT_TRUE(throws_naming([&] { wt.infer_type({{DType::kF32, {2, 1, 1, 1, 4, 8}}}, attrs(wt, {})); }, "3x3"));
  EXPECT_TRUE(throws_naming([&] { wt.infer_type({{DType::kI32, {2, 1, 3, 3, 4, 8}}}, attrs(wt, {})); }, "(w)"));
  EXPECT_EQ(wt.infer_type({w}, attrs(wt, {}))[0].shape, (Shape{6, 6, 2, 4, 8}));
  const TensorType x{DType::kF32, {1, 1, 5, 5, 4}};
  const TensorType u{DType::kF32, {6, 6, 2, 4, 8}};
  EXPECT_EQ(conv.infer_type({x, u}, attrs(conv, {}))[0].shape, (Shape{1, 2, 3, 3, 8}));
  EXPECT_TRUE(throws_naming([&] { conv.infer_type({x, u}, attrs(conv, Attrs().set("tile", int64_t{2}))); }, "(u)"));
  EXPECT_TRUE(throws_naming([&] { conv.infer_type({x, {DType::kF32, {6, 6, 2, 8, 8}}}, attrs(conv, {})); },
                            "input channels"));
  EXPECT_TRUE(throws_naming([&] { conv.infer_type({x, u, {DType::kF32, {8}}}, attrs(conv, {})); }, "(bias)"));
  EXPECT_TRUE(throws_naming([&] { conv.infer_type({{DType::kF32, {1, 1, 2, 2, 4}}, u}, attrs(conv, {})); },
                            "smaller than the 3x3 kernel"));
}

}  // namespace
}  // namespace kiln::ir
