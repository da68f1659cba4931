// Whole kernels through the code generator, in the loop-IR form lowering produces, JIT-compiled
// for the host and compared with plain C++ references: elementwise with a vector body and a scalar
// tail (sizes 7, 13, 1000), a row reduction in vector accumulators, register-blocked matmul (serial
// and parallel, odd sizes) and every math intrinsic against the C library.
#include <gtest/gtest.h>

#include <array>

#include <cmath>
#include <limits>
#include <random>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/runtime/c_api.h"
#include "loop_builders.h"
#include "test_util.h"

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT
using testing::Buffer;
using testing::f32_type;
using testing::vec;

int host_lanes() { return host_target().vector_lanes(32); }

JitModule jit_one(const PrimFunc& f) {
  LLVMModule module(host_target(), f->name + "_module");
  module.add_prim_func(f);
  return JitModule(std::move(module));
}

std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

class Elementwise : public ::testing::TestWithParam<int64_t> {};

TEST_P(Elementwise, FmaBodyWithVectorMainLoopAndScalarTail) {
  const int64_t n = GetParam();
  const int lanes = host_lanes();
  PrimFunc f = testing::elementwise("axpy_" + std::to_string(n), n, lanes, 2,
                                    [](const std::vector<Expr>& in) { return in[0] * in[1] + in[0]; });
  JitModule jit = jit_one(f);
  Buffer<float> a({n}, f32_type()), b({n}, f32_type()), c({n}, f32_type());
  const auto va = random_floats(n, -3, 3, 1), vb = random_floats(n, -3, 3, 2);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = va[i];
    b[i] = vb[i];
    c[i] = -12345.0f;
  }
  jit.run(f->name, {a.tensor(), b.tensor(), c.tensor()});
  for (int64_t i = 0; i < n; ++i) {
    // Contraction may fuse a*b + a into one rounding: allow either result.
    const float fused = std::fma(a[i], b[i], a[i]);
    const float unfused = a[i] * b[i] + a[i];
    ASSERT_TRUE(c[i] == fused || c[i] == unfused)
        << "index " << i << ": actual " << c[i] << " expected " << fused << " or " << unfused;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Elementwise, ::testing::Values(7, 13, 1000));

TEST(Kernels, RowSumReductionInVectorAccumulators) {
  // out[r] = sum_k in[r, k] for K = 1000: a vector accumulator of `lanes`, a scalar tail, then
  // a horizontal sum over the lanes.
  const int64_t R = 13, K = 1000;
  const int lanes = host_lanes();
  tir::Buffer in = tir::Buffer::make("in", DType::kF32, {R, K});
  tir::Buffer out = tir::Buffer::make("out", DType::kF32, {R});
  tir::Buffer acc = tir::Buffer::make("acc", DType::kF32, {lanes});
  Var r("r"), ko("ko"), kt("kt"), l("l");
  const int64_t main = K / lanes;
  Stmt body = Allocate::make(
      acc, MemoryScope::kStack, 64,
      Block::make({Store::make(acc, Broadcast::make(0.0f, lanes), vec(make_int(0), lanes)),
                   For::make(ko, 0, main, ForKind::kSerial,
                             Store::make(acc, Load::make(acc, vec(make_int(0), lanes)) + Load::make(in, vec(r * K + ko * lanes, lanes)),
                                         vec(make_int(0), lanes))),
                   Store::make(out, 0.0f, r),
                   For::make(kt, main * lanes, K - main * lanes, ForKind::kSerial,
                             Store::make(out, Load::make(out, r) + Load::make(in, r * K + kt), r)),
                   For::make(l, 0, lanes, ForKind::kSerial, Store::make(out, Load::make(out, r) + Load::make(acc, l), r))}));
  PrimFunc f = PrimFunc::make("row_sum", {in, out}, For::make(r, 0, R, ForKind::kSerial, body));
  JitModule jit = jit_one(f);
  Buffer<float> x({R, K}, f32_type()), y({R}, f32_type());
  const auto v = random_floats(R * K, -1, 1, 3);
  for (int64_t i = 0; i < R * K; ++i) x[i] = v[i];
  jit.run("row_sum", {x.tensor(), y.tensor()});
  for (int64_t i = 0; i < R; ++i) {
    double expected = 0;
    for (int64_t k = 0; k < K; ++k) expected += x[i * K + k];
    EXPECT_NEAR(y[i], expected, 1e-4 * K) << "row " << i;  // f32 sums of 1000 terms in |x| <= 1
  }
}

struct MatmulCase {
  int64_t M, N, K;
  int mr, nv;
  bool parallel;
};

class Matmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(Matmul, MatchesDoubleReference) {
  const MatmulCase p = GetParam();
  const int lanes = host_lanes();
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  PrimFunc f = testing::matmul("mm", p.M, p.N, p.K, lanes, p.mr, p.nv, p.parallel);
  JitModule jit = jit_one(f);
  Buffer<float> a({p.M, p.K}, f32_type()), b({p.K, p.N}, f32_type()), c({p.M, p.N}, f32_type());
  const auto va = random_floats(p.M * p.K, -1, 1, 4), vb = random_floats(p.K * p.N, -1, 1, 5);
  for (size_t i = 0; i < va.size(); ++i) a[i] = va[i];
  for (size_t i = 0; i < vb.size(); ++i) b[i] = vb[i];
  for (size_t i = 0; i < c.size(); ++i) c[i] = std::numeric_limits<float>::quiet_NaN();
  jit.run("mm", {a.tensor(), b.tensor(), c.tensor()});
  const double tol = 1e-5 * p.K + 1e-6;  // f32 accumulation over K terms of |x| <= 1
  for (int64_t i = 0; i < p.M; ++i) {
    for (int64_t j = 0; j < p.N; ++j) {
      double expected = 0;
      for (int64_t k = 0; k < p.K; ++k) expected += double(a[i * p.K + k]) * b[k * p.N + j];
      ASSERT_NEAR(c[i * p.N + j], expected, tol) << "C[" << i << ", " << j << "]";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Matmul,
    ::testing::Values(MatmulCase{64, 64, 64, 4, 2, false}, MatmulCase{37, 29, 13, 4, 2, false},
                      MatmulCase{96, 128, 100, 6, 2, true}, MatmulCase{7, 13, 1000, 3, 1, true},
                      MatmulCase{1, 1, 1, 2, 1, false}));

TEST(Kernels, PackedMatmulWithKBlocksAndLeftoverRows) {
  // The benchmark's matmul form: B packed into panels, k in blocks (accumulators reloaded from
  // C between blocks), 6-row blocks in parallel and a 1-row leftover block (M = 37).
  const int lanes = host_lanes();
  const int nv = 2;
  const int64_t M = 37, N = 3 * nv * lanes, K = 64;
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  JitModule jit = jit_one(testing::matmul_packed("mmp", M, N, K, lanes, 6, nv, 16, true));
  Buffer<float> a({M, K}, f32_type()), b({K, N}, f32_type()), c({M, N}, f32_type());
  const auto va = random_floats(M * K, -1, 1, 7), vb = random_floats(K * N, -1, 1, 8);
  for (size_t i = 0; i < va.size(); ++i) a[i] = va[i];
  for (size_t i = 0; i < vb.size(); ++i) b[i] = vb[i];
  jit.run("mmp", {a.tensor(), b.tensor(), c.tensor()});
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double expected = 0;
      for (int64_t k = 0; k < K; ++k) expected += double(a[i * K + k]) * b[k * N + j];
      ASSERT_NEAR(c[i * N + j], expected, 1e-5 * K) << "C[" << i << ", " << j << "]";
    }
  }
}

struct MathCase {
  const char* name;
  Expr (*build)(Expr);
  double (*reference)(double);
  float lo, hi;
  double rel_tol, abs_tol;
};

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double rsqrt_ref(double x) { return 1.0 / std::sqrt(x); }
double round_ref(double x) { return std::nearbyint(x); }  // default rounding mode: half to even

class MathIntrinsics : public ::testing::TestWithParam<MathCase> {};

TEST_P(MathIntrinsics, VectorizedMatchesTheCLibrary) {
  const MathCase m = GetParam();
  const int64_t n = 1003;  // a vector body and a tail
  PrimFunc f = testing::elementwise(std::string("math_") + m.name, n, host_lanes(), 1,
                                    [&](const std::vector<Expr>& in) { return m.build(in[0]); });
  JitModule jit = jit_one(f);
  Buffer<float> x({n}, f32_type()), y({n}, f32_type());
  const auto v = random_floats(n, m.lo, m.hi, 6);
  for (int64_t i = 0; i < n; ++i) x[i] = v[i];
  x[0] = m.lo;
  x[1] = m.hi;
  if (m.lo < 0.5f && 0.5f < m.hi) x[2] = 0.5f;
  if (m.lo < 2.5f && 2.5f < m.hi) x[3] = 2.5f;
  jit.run(f->name, {x.tensor(), y.tensor()});
  for (int64_t i = 0; i < n; ++i) {
    const double expected = static_cast<float>(m.reference(x[i]));
    const double err = std::fabs(y[i] - expected);
    ASSERT_LE(err, m.abs_tol + m.rel_tol * std::fabs(expected))
        << m.name << "(" << x[i] << ") index " << i << ": actual " << y[i] << " expected " << expected;
  }
}

// Tolerances: a few f32 ulp (2^-23 ~ 1.2e-7 relative) for the polynomial exp and what uses it;
// the libm-backed and exact ones are tighter.
INSTANTIATE_TEST_SUITE_P(
    All, MathIntrinsics,
    ::testing::Values(
        MathCase{"exp", [](Expr x) { return exp(x); }, [](double x) { return std::exp(x); }, -87, 88, 3e-7, 0},
        MathCase{"exp_denormal", [](Expr x) { return exp(x); }, [](double x) { return std::exp(x); }, -103, -87, 3e-7, 3e-45},
        MathCase{"log", [](Expr x) { return log(x); }, [](double x) { return std::log(x); }, 1e-6f, 1e6f, 3e-7, 1e-7},
        MathCase{"log_near_one", [](Expr x) { return log(x); }, [](double x) { return std::log(x); }, 0.5f, 2.0f, 3e-7, 2e-8},
        MathCase{"log_denormal", [](Expr x) { return log(x); }, [](double x) { return std::log(x); }, 1e-44f, 1e-37f, 3e-7, 0},
        MathCase{"sqrt", [](Expr x) { return sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 1e4f, 1.2e-7, 0},
        MathCase{"rsqrt", [](Expr x) { return rsqrt(x); }, rsqrt_ref, 1e-3f, 1e4f, 2.5e-7, 0},
        MathCase{"tanh", [](Expr x) { return tanh(x); }, [](double x) { return std::tanh(x); }, -10, 10, 2.5e-7, 1e-9},
        MathCase{"tanh_small", [](Expr x) { return tanh(x); }, [](double x) { return std::tanh(x); }, -0.7f, 0.7f, 2.5e-7, 1e-12},
        MathCase{"tanh_large", [](Expr x) { return tanh(x); }, [](double x) { return std::tanh(x); }, -60, 60, 2.5e-7, 0},
        MathCase{"erf", [](Expr x) { return erf(x); }, [](double x) { return std::erf(x); }, -4, 4, 4e-7, 1e-12},
        MathCase{"erf_small", [](Expr x) { return erf(x); }, [](double x) { return std::erf(x); }, -0.01f, 0.01f, 4e-7, 1e-30},
        MathCase{"erf_saturated", [](Expr x) { return erf(x); }, [](double x) { return std::erf(x); }, -50, 50, 4e-7, 0},
        MathCase{"sigmoid", [](Expr x) { return sigmoid(x); }, sigmoid_ref, -30, 30, 5e-7, 1e-12},
        MathCase{"pow", [](Expr x) { return pow(x, Expr(1.7f)); }, [](double x) { return std::pow(x, double(1.7f)); }, 0, 50, 3e-7, 0},
        MathCase{"fabs", [](Expr x) { return fabs(x); }, [](double x) { return std::fabs(x); }, -5, 5, 0, 0},
        MathCase{"floor", [](Expr x) { return floor(x); }, [](double x) { return std::floor(x); }, -5, 5, 0, 0},
        MathCase{"ceil", [](Expr x) { return ceil(x); }, [](double x) { return std::ceil(x); }, -5, 5, 0, 0},
        MathCase{"round", [](Expr x) { return round(x); }, round_ref, -5, 5, 0, 0},
        MathCase{"sin", [](Expr x) { return sin(x); }, [](double x) { return std::sin(x); }, -10, 10, 2.5e-7, 1e-7},
        MathCase{"cos", [](Expr x) { return cos(x); }, [](double x) { return std::cos(x); }, -10, 10, 2.5e-7, 1e-7},
        MathCase{"fma", [](Expr x) { return fma(x, x, Expr(-1.0f)); },
                 [](double x) { return double(std::fma(float(x), float(x), -1.0f)); }, -3, 3, 0, 0}),
    [](const ::testing::TestParamInfo<MathCase>& info) { return std::string(info.param.name); });

// Runs the f32 math function `fn` on 8 special inputs through a JIT-compiled vector kernel.
std::vector<float> run_special(const std::string& name, Expr (*fn)(Expr), const std::array<float, 8>& in) {
  const int64_t n = 8;
  PrimFunc f = testing::elementwise(name, n, host_lanes() > n ? n : host_lanes(), 1,
                                    [fn](const std::vector<Expr>& v) { return fn(v[0]); });
  JitModule jit = jit_one(f);
  Buffer<float> x({n}, f32_type()), y({n}, f32_type());
  for (int i = 0; i < n; ++i) x[i] = in[static_cast<size_t>(i)];
  jit.run(name, {x.tensor(), y.tensor()});
  std::vector<float> out(n);
  for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = y[i];
  return out;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Kernels, TanhSpecialValues) {
  const std::vector<float> y = run_special("tanh_special", tanh, {0.0f, -0.0f, kInf, -kInf, kNaN, 1e-30f, 0.625f, -0.625f});
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_TRUE(std::signbit(y[1]));
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], 1e-30f);
  EXPECT_NEAR(y[6], std::tanh(0.625f), 2.5e-7 * std::tanh(0.625f));
  EXPECT_EQ(y[7], -y[6]);
}

TEST(Kernels, LogSpecialValues) {
  const std::vector<float> y = run_special("log_special", log, {1.0f, 0.0f, -0.0f, -1.0f, kInf, kNaN, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()});
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], -kInf);
  EXPECT_EQ(y[2], -kInf);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], kInf);
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_NEAR(y[6], std::log(std::numeric_limits<float>::max()), 3e-7 * 88.8);
  EXPECT_NEAR(y[7], std::log(std::numeric_limits<float>::denorm_min()), 3e-7 * 103.3);
}

TEST(Kernels, ExpSpecialValues) {
  const std::vector<float> y = run_special("exp_special", exp, {0.0f, -0.0f, kInf, -kInf, kNaN, 88.72f, 89.0f, -110.0f});
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_EQ(y[2], kInf);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_NEAR(y[5], std::exp(88.72f), 3e-7 * std::exp(88.72f));
  EXPECT_EQ(y[6], kInf);
  EXPECT_EQ(y[7], 0.0f);
}

// sigmoid clamps -x to [-87, 88] before its one-factor exp: saturated ends, NaN kept, and the
// values around the clamp still within the kernel-test tolerance.
TEST(Kernels, SigmoidSpecialValues) {
  const std::vector<float> y = run_special("sigmoid_special", sigmoid, {0.0f, kInf, -kInf, kNaN, 100.0f, -100.0f, 86.5f, -86.5f});
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_GE(y[2], 0.0f);
  EXPECT_LT(y[2], 7e-39f);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], 1.0f);
  EXPECT_GE(y[5], 0.0f);
  EXPECT_LT(y[5], 7e-39f);
  EXPECT_EQ(y[6], 1.0f);
  EXPECT_NEAR(y[7], std::exp(-86.5), 5e-7 * std::exp(-86.5));
}

}  // namespace
}  // namespace kiln::codegen
