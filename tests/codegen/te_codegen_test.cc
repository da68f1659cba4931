// The whole path: tensor expression → schedule → tir::lower → LLVM → JIT, compared with the loop-IR
// interpreter (tir::interpret) on the same lowered function and random inputs. Sizes 7, 13, 1000
// exercise vector tails; matmul uses split/reorder/vectorize/parallel and cache_write register
// blocking; the vectorized loops must become ymm (AVX2) / zmm (AVX-512) FMAs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/ndarray.h"
#include "kiln/runtime/c_api.h"
#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/printer.h"

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT

ir::NDArray random_array(DType dtype, const ir::Shape& shape, unsigned seed, double lo = -1, double hi = 1) {
  ir::NDArray a = ir::NDArray::empty(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, dist(rng));
  return a;
}

DLTensor as_dltensor(ir::NDArray& a) {
  DLTensor t{};
  t.data = a.mutable_raw_data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(a.shape().size());
  t.dtype = DLDataType{static_cast<uint8_t>(ir::is_float(a.dtype()) ? kDLFloat : kDLInt),
                       static_cast<uint8_t>(ir::dtype_size(a.dtype()) * 8), 1};
  t.shape = const_cast<int64_t*>(a.sizes().data());
  return t;
}

// Runs `f` through the JIT and through the interpreter on copies of `inputs` (outputs start
// NaN-free zero arrays of the given shapes) and compares every output element.
void expect_jit_matches_interpreter(const PrimFunc& f, const std::vector<ir::NDArray>& inputs, size_t num_outputs,
                                    double rel_tol) {
  std::vector<ir::NDArray> jit_args, ref_args;
  for (const ir::NDArray& in : inputs) {
    jit_args.push_back(in.copy());
    ref_args.push_back(in.copy());
  }
  for (size_t k = inputs.size(); k < inputs.size() + num_outputs; ++k) {
    const tir::Buffer& b = f->params[k];
    jit_args.push_back(ir::NDArray::empty(b->dtype, b->shape));
    ref_args.push_back(ir::NDArray::empty(b->dtype, b->shape));
  }
  interpret(f, ref_args);
  LLVMModule module(host_target(), f->name + "_module");
  module.add_prim_func(f);
  JitModule jit(std::move(module));
  std::vector<DLTensor> tensors;
  for (ir::NDArray& a : jit_args) tensors.push_back(as_dltensor(a));
  jit.run(f->name, tensors);
  for (size_t k = inputs.size(); k < jit_args.size(); ++k) {
    for (int64_t i = 0; i < jit_args[k].numel(); ++i) {
      const double actual = jit_args[k].get_as_double(i), expected = ref_args[k].get_as_double(i);
      ASSERT_LE(std::fabs(actual - expected), rel_tol * (1.0 + std::fabs(expected)))
          << f->name << " output " << k << " index " << i << ": actual " << actual << " expected " << expected
          << "\n" << to_string(f);
    }
  }
}

int lanes() { return host_target().vector_lanes(32); }

class TeElementwise : public ::testing::TestWithParam<int64_t> {};

TEST_P(TeElementwise, SplitVectorizeWithTail) {
  const int64_t n = GetParam();
  Tensor a = placeholder({n}, DType::kF32, "A");
  Tensor b = placeholder({n}, DType::kF32, "B");
  Tensor c = compute({n}, [&](const std::vector<Var>& i) { return a(i[0]) * b(i[0]) + a(i[0]) * 0.5f; }, "C", {"i"});
  Schedule s({c});
  auto [o, in] = s[c].split(s[c].axis(0), lanes());
  s[c].vectorize(in);
  PrimFunc f = lower(s, {a, b, c}, "ew_" + std::to_string(n));
  expect_jit_matches_interpreter(f, {random_array(DType::kF32, {n}, 1), random_array(DType::kF32, {n}, 2)}, 1, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Sizes, TeElementwise, ::testing::Values(7, 13, 1000));

TEST(TeCodegen, SumAndMaxReductionsWithParallelRows) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  const int64_t rows = 13, cols = 1000;
  Tensor a = placeholder({rows, cols}, DType::kF32, "A");
  IterVar k = reduce_axis(cols, "k");
  Tensor total = compute({rows}, [&](const std::vector<Var>& i) { return sum(a(i[0], k), {k}); }, "S", {"r"});
  Schedule s({total});
  s[total].parallel(s[total].axis(0));
  PrimFunc f = lower(s, {a, total}, "row_sum");
  expect_jit_matches_interpreter(f, {random_array(DType::kF32, {rows, cols}, 3)}, 1, 1e-6);

  IterVar k2 = reduce_axis(cols, "k");
  Tensor mx = compute({rows}, [&](const std::vector<Var>& i) { return max_reduce(a(i[0], k2), {k2}); }, "M", {"r"});
  Schedule s2({mx});
  PrimFunc f2 = lower(s2, {a, mx}, "row_max");
  expect_jit_matches_interpreter(f2, {random_array(DType::kF32, {rows, cols}, 4)}, 1, 0);
}

struct Shape3 {
  int64_t m, n, k;
};

class TeMatmul : public ::testing::TestWithParam<Shape3> {};

TEST_P(TeMatmul, RegisterBlockedParallelVectorized) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  const auto [m, n, kk] = GetParam();
  Tensor a = placeholder({m, kk}, DType::kF32, "A");
  Tensor b = placeholder({kk, n}, DType::kF32, "B");
  IterVar k = reduce_axis(kk, "k");
  Tensor c = compute({m, n}, [&](const std::vector<Var>& i) { return sum(a(i[0], k) * b(k, i[1]), {k}); }, "C",
                     {"i", "j"});
  Schedule s({c});
  Tensor cl = s.cache_write(c);
  Stage sc = s[c];
  auto [io, ii] = sc.split(sc.axis(0), 4);
  auto [jo, ji] = sc.split(sc.axis(1), lanes());
  sc.reorder({io, jo, ii, ji});
  sc.parallel(io);
  Stage sl = s[cl];
  sl.compute_at(sc, jo);
  sl.reorder({sl.reduce_axis(0), sl.axis(0), sl.axis(1)});
  sl.unroll(sl.axis(0));
  sl.vectorize(sl.axis(1));
  PrimFunc f = lower(s, {a, b, c}, "matmul");
  expect_jit_matches_interpreter(f, {random_array(DType::kF32, {m, kk}, 5), random_array(DType::kF32, {kk, n}, 6)}, 1,
                                 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shapes, TeMatmul,
                         ::testing::Values(Shape3{64, 64, 64}, Shape3{13, 7, 29}, Shape3{37, 19, 5},
                                           Shape3{128, 96, 200}, Shape3{7, 13, 1000}));

// A register-blocked matmul that prefetches the next column panel of B (one whole panel ahead,
// past the end of B on the last panel): llvm.prefetch in the code, the same numbers as the
// interpreter (where the hint does nothing), no fault on the addresses outside B.
TEST(TeCodegen, PrefetchBecomesAPrefetchInstructionAndChangesNothing) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  const int64_t m = 12, n = 4 * lanes(), kk = 33;
  Tensor a = placeholder({m, kk}, DType::kF32, "A");
  Tensor b = placeholder({n / lanes(), kk, lanes()}, DType::kF32, "B");
  IterVar k = reduce_axis(kk, "k");
  Tensor c = compute({m, n}, [&](const std::vector<Var>& i) {
    return sum(a(i[0], k) * b(floordiv(i[1], Expr(lanes())), k, floormod(i[1], Expr(lanes()))), {k});
  }, "C", {"i", "j"});
  Schedule s({c});
  Tensor cl = s.cache_write(c);
  Stage sc = s[c];
  auto [jo, ji] = sc.split(sc.axis(1), lanes());
  auto [io, ii] = sc.split(sc.axis(0), 4);
  sc.reorder({jo, io, ii, ji});
  sc.parallel(jo);
  Stage sl = s[cl];
  sl.compute_at(sc, io);
  sl.reorder({sl.reduce_axis(0), sl.axis(0), sl.axis(1)});
  sl.unroll(sl.axis(0));
  sl.vectorize(sl.axis(1));
  sl.prefetch(b, sl.reduce_axis(0), kk);
  PrimFunc f = lower(s, {a, b, c}, "matmul_prefetch");
  expect_jit_matches_interpreter(f, {random_array(DType::kF32, {m, kk}, 5), random_array(DType::kF32, {n / lanes(), kk, lanes()}, 6)},
                                 1, 1e-5);
  LLVMModule module(host_target(), "prefetch_asm");
  module.add_prim_func(f);
  const std::string text = module.assembly();
  EXPECT_NE(text.find("prefetcht0"), std::string::npos) << text;
}

TEST(TeCodegen, MathIntrinsicsMatchTheInterpreter) {
  const int64_t n = 1000;
  Tensor x = placeholder({n}, DType::kF32, "X");
  std::vector<std::pair<std::string, std::function<Expr(Expr)>>> fns = {
      {"exp", [](Expr v) { return exp(v); }},         {"tanh", [](Expr v) { return tanh(v); }},
      {"erf", [](Expr v) { return erf(v); }},         {"sigmoid", [](Expr v) { return sigmoid(v); }},
      {"sqrt_abs", [](Expr v) { return sqrt(fabs(v)); }}, {"log1", [](Expr v) { return log(fabs(v) + 1.0f); }},
      {"gelu", [](Expr v) { return v * 0.5f * (erf(v * 0.70710678f) + 1.0f); }}};
  for (const auto& [name, fn] : fns) {
    Tensor y = compute({n}, [&](const std::vector<Var>& i) { return fn(x(i[0])); }, "Y", {"i"});
    Schedule s({y});
    auto [o, in] = s[y].split(s[y].axis(0), lanes());
    s[y].vectorize(in);
    PrimFunc f = lower(s, {x, y}, "math_" + name);
    // A few ulp: the polynomial exp and libm differ from the interpreter's std:: functions.
    expect_jit_matches_interpreter(f, {random_array(DType::kF32, {n}, 7, -8, 8)}, 1, 1e-6);
  }
}

TEST(TeCodegen, SoftmaxWithStagesAttachedPerRowInParallel) {
  // Max, exp, sum and the division computed per row inside a parallel row loop: stack buffers in
  // the outlined parallel body, the vector exp, a vectorized division with a tail (1000 % 8).
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  for (int64_t cols : {13, 1000}) {
    const int64_t rows = 7;
    Tensor x = placeholder({rows, cols}, DType::kF32, "X");
    IterVar k1 = reduce_axis(cols, "k1"), k2 = reduce_axis(cols, "k2");
    Tensor mx = compute({rows}, [&](const std::vector<Var>& i) { return max_reduce(x(i[0], k1), {k1}); }, "Max", {"i"});
    Tensor e = compute({rows, cols}, [&](const std::vector<Var>& i) { return exp(x(i[0], i[1]) - mx(i[0])); }, "E",
                       {"i", "j"});
    Tensor sm = compute({rows}, [&](const std::vector<Var>& i) { return sum(e(i[0], k2), {k2}); }, "Sum", {"i"});
    Tensor out = compute({rows, cols}, [&](const std::vector<Var>& i) { return e(i[0], i[1]) / sm(i[0]); }, "Out",
                         {"i", "j"});
    Schedule s({out});
    Stage so = s[out];
    so.parallel(so.axis(0));
    auto [jo, ji] = so.split(so.axis(1), lanes());
    so.vectorize(ji);
    s[mx].compute_at(so, so.axis(0));
    s[e].compute_at(so, so.axis(0));
    s[sm].compute_at(so, so.axis(0));
    PrimFunc f = lower(s, {x, out}, "softmax_" + std::to_string(cols));
    expect_jit_matches_interpreter(f, {random_array(DType::kF32, {rows, cols}, 9, -10, 10)}, 1, 1e-6);
  }
}

std::string te_fma_assembly(const std::string& target_string) {
  const Target t = parse_target(target_string);
  const int64_t n = 1024;
  Tensor a = placeholder({n}, DType::kF32, "A");
  Tensor b = placeholder({n}, DType::kF32, "B");
  Tensor d = placeholder({n}, DType::kF32, "D");
  Tensor c = compute({n}, [&](const std::vector<Var>& i) { return a(i[0]) * b(i[0]) + d(i[0]); }, "C", {"i"});
  Schedule s({c});
  auto [o, in] = s[c].split(s[c].axis(0), t.vector_lanes(32));
  s[c].vectorize(in);
  LLVMModule module(t, "te_fma");
  module.add_prim_func(lower(s, {a, b, d, c}, "te_fma"));
  return module.assembly();
}

TEST(TeCodegen, VectorizedLoopIsYmmFmaOnAvx2AndZmmOnAvx512) {
  const std::string avx2 = te_fma_assembly("llvm -mtriple=x86_64-linux-gnu -mcpu=znver3");
  EXPECT_NE(avx2.find("vfmadd"), std::string::npos) << avx2;
  EXPECT_NE(avx2.find("ymm"), std::string::npos) << avx2;
  const std::string avx512 = te_fma_assembly("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4");
  EXPECT_NE(avx512.find("vfmadd"), std::string::npos) << avx512;
  EXPECT_NE(avx512.find("zmm"), std::string::npos) << avx512;
}

}  // namespace
}  // namespace kiln::codegen
