// Loop IR → LLVM IR, node by node: hand-built loop-IR functions (the form lowering produces) are
// JIT-compiled for the host and their outputs compared with plain C++ on the same inputs.
// Covers index arithmetic (floordiv/floormod of negative values), casts, select, comparisons,
// Let/LetStmt, IfThenElse, stack and heap Allocate, unrolled loops, gathers/scatters/broadcast
// indices, a parallel loop capturing outer values, and the entry's argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kiln/codegen/llvm_module.h"
#include "kiln/ir/ndarray.h"
#include "kiln/codegen/target.h"
#include "kiln/runtime/c_api.h"
#include "kiln/support/error.h"
#include "kiln/tir/stmt.h"
#include "test_util.h"

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT
using testing::Buffer;

JitModule jit_one(const PrimFunc& f, const CodegenOptions& options = {}) {
  LLVMModule module(host_target(), f->name + "_module");
  module.add_prim_func(f, options);
  return JitModule(std::move(module));
}

DLDataType dl(DType d) {
  switch (d) {
    case DType::kF32: return {kDLFloat, 32, 1};
    case DType::kF64: return {kDLFloat, 64, 1};
    case DType::kI32: return {kDLInt, 32, 1};
    case DType::kI64: return {kDLInt, 64, 1};
    case DType::kU8: return {kDLUInt, 8, 1};
    case DType::kBool: return {kDLUInt, 8, 1};
    default: return {kDLInt, 8, 1};
  }
}

TEST(CodegenLLVM, IntegerIndexArithmeticHasFloorSemantics) {
  // out[i*6 + 0..5] = floordiv(x, 4), floormod(x, 4), floordiv(x, d), floormod(x, d),
  //                    min(x, d) , max(x, d) for x = i - 20, d = (i % 7) - 3 (never 0 below)
  const int n = 41;
  ir::DType i64 = DType::kI64;
  tir::Buffer out = tir::Buffer::make("out", i64, {n * 6});
  Var i("i");
  Expr x = i - 20;
  Expr d = floormod(i, 7) - 3;
  Expr dd = select(d == 0, Expr(5), d);
  std::vector<Stmt> body{
      Store::make(out, floordiv(x, 4), i * 6), Store::make(out, floormod(x, 4), i * 6 + 1),
      Store::make(out, floordiv(x, dd), i * 6 + 2), Store::make(out, floormod(x, dd), i * 6 + 3),
      Store::make(out, min(x, dd), i * 6 + 4), Store::make(out, max(x, dd), i * 6 + 5)};
  PrimFunc f = PrimFunc::make("index_math", {out}, For::make(i, 0, n, ForKind::kSerial, Block::make(body)));
  JitModule jit = jit_one(f);
  Buffer<int64_t> o({n * 6}, dl(DType::kI64));
  jit.run("index_math", {o.tensor()});
  auto fdiv = [](int64_t a, int64_t b) { return static_cast<int64_t>(std::floor(double(a) / double(b))); };
  for (int64_t k = 0; k < n; ++k) {
    const int64_t xv = k - 20;
    int64_t dv = (k % 7) - 3;
    if (dv == 0) dv = 5;
    const int64_t expected[6] = {fdiv(xv, 4), xv - 4 * fdiv(xv, 4), fdiv(xv, dv), xv - dv * fdiv(xv, dv),
                                 std::min(xv, dv), std::max(xv, dv)};
    for (int j = 0; j < 6; ++j) {
      ASSERT_EQ(o[k * 6 + j], expected[j]) << "i=" << k << " x=" << xv << " d=" << dv << " op " << j;
    }
  }
}

TEST(CodegenLLVM, CastsSelectAndComparisons) {
  // y[i] = i32(x[i]) (trunc toward zero) ; z[i] = (x[i] < 0.5 && x[i] != -1) ? 1.5*x : -x ;
  // b[i] = bool(x[i]) stored as a byte; u[i] = u8(i * 37) ; w[i] = f64(u8 value)
  const int n = 37;
  tir::Buffer x = tir::Buffer::make("x", DType::kF32, {n});
  tir::Buffer y = tir::Buffer::make("y", DType::kI32, {n});
  tir::Buffer z = tir::Buffer::make("z", DType::kF32, {n});
  tir::Buffer b = tir::Buffer::make("b", DType::kBool, {n});
  tir::Buffer u = tir::Buffer::make("u", DType::kU8, {n});
  tir::Buffer w = tir::Buffer::make("w", DType::kF64, {n});
  Var i("i");
  Expr xv = Load::make(x, i);
  Expr uv = cast(DType::kU8, i * 37);
  std::vector<Stmt> body{
      Store::make(y, cast(DType::kI32, xv), i),
      Store::make(z, select(xv < 0.5f && xv != -1.0f, xv * 1.5f, -xv), i),
      Store::make(b, cast(DType::kBool, xv), i),
      Store::make(u, uv, i),
      Store::make(w, cast(DType::kF64, uv) + cast(DType::kF64, Load::make(b, i)), i)};
  PrimFunc f = PrimFunc::make("casts", {x, y, z, b, u, w},
                              For::make(i, 0, n, ForKind::kSerial, Block::make(body)));
  JitModule jit = jit_one(f);
  Buffer<float> X({n}, dl(DType::kF32));
  Buffer<int32_t> Y({n}, dl(DType::kI32));
  Buffer<float> Z({n}, dl(DType::kF32));
  Buffer<uint8_t> B({n}, dl(DType::kBool));
  Buffer<uint8_t> U({n}, dl(DType::kU8));
  Buffer<double> W({n}, dl(DType::kF64));
  for (int k = 0; k < n; ++k) X[k] = (k == 3) ? -1.0f : (k == 5 ? 0.0f : (k - 18) * 0.37f);
  jit.run("casts", {X.tensor(), Y.tensor(), Z.tensor(), B.tensor(), U.tensor(), W.tensor()});
  for (int k = 0; k < n; ++k) {
    const float xv = X[k];
    EXPECT_EQ(Y[k], static_cast<int32_t>(xv)) << k;
    EXPECT_EQ(Z[k], (xv < 0.5f && xv != -1.0f) ? xv * 1.5f : -xv) << k;
    EXPECT_EQ(B[k], xv != 0.0f ? 1 : 0) << k;
    EXPECT_EQ(U[k], static_cast<uint8_t>(k * 37)) << k;
    EXPECT_EQ(W[k], static_cast<double>(static_cast<uint8_t>(k * 37)) + (xv != 0.0f ? 1.0 : 0.0)) << k;
  }
}

TEST(CodegenLLVM, LetIfThenElseAndUnrolledLoop) {
  // for i in 0..10: let t = i * 3 in if (t % 2 == 0) out[i] = t else { for j unrolled 4: acc } ...
  const int n = 10;
  tir::Buffer out = tir::Buffer::make("out", DType::kI64, {n});
  Var i("i"), t("t"), j("j"), u("u");
  Stmt odd = Block::make({Store::make(out, make_int(0), i),
                          For::make(j, 0, 4, ForKind::kUnrolled,
                                    Store::make(out, Load::make(out, i) + Let::make(u, j * 10, u + 1), i))});
  Stmt body = LetStmt::make(t, i * 3,
                            IfThenElse::make(floormod(t, 2) == 0, Store::make(out, t, i), odd));
  PrimFunc f = PrimFunc::make("let_if", {out}, For::make(i, 0, n, ForKind::kSerial, body));
  JitModule jit = jit_one(f);
  Buffer<int64_t> o({n}, dl(DType::kI64));
  jit.run("let_if", {o.tensor()});
  for (int k = 0; k < n; ++k) {
    const int64_t expected = (k * 3) % 2 == 0 ? k * 3 : (1 + 11 + 21 + 31);
    EXPECT_EQ(o[k], expected) << k;
  }
}

TEST(CodegenLLVM, StackAndHeapAllocate) {
  // tmp (stack, 16 floats) and big (heap, 100000 floats) used as scratch:
  // out[r] = sum_k tmp[k] + big[r*7] where tmp[k] = in[r*16+k]*2, big[m] = m
  const int rows = 5, big_n = 100000;
  tir::Buffer in = tir::Buffer::make("in", DType::kF32, {rows * 16});
  tir::Buffer out = tir::Buffer::make("out", DType::kF32, {rows});
  tir::Buffer tmp = tir::Buffer::make("tmp", DType::kF32, {16});
  tir::Buffer big = tir::Buffer::make("big", DType::kF32, {big_n});
  Var r("r"), k("k"), m("m");
  Stmt fill_big = For::make(m, 0, big_n, ForKind::kSerial, Store::make(big, cast(DType::kF32, m), m));
  Stmt row = Block::make({
      For::make(k, 0, 16, ForKind::kSerial, Store::make(tmp, Load::make(in, r * 16 + k) * 2.0f, k)),
      Store::make(out, Load::make(big, r * 7), r),
      For::make(k, 0, 16, ForKind::kSerial, Store::make(out, Load::make(out, r) + Load::make(tmp, k), r)),
  });
  Stmt body = Allocate::make(big, MemoryScope::kHeap, 64,
                             Block::make({fill_big, Allocate::make(tmp, MemoryScope::kStack, 64,
                                                                   For::make(r, 0, rows, ForKind::kSerial, row))}));
  PrimFunc f = PrimFunc::make("alloc", {in, out}, body);
  JitModule jit = jit_one(f);
  Buffer<float> I({rows * 16}, dl(DType::kF32)), O({rows}, dl(DType::kF32));
  for (int q = 0; q < rows * 16; ++q) I[q] = 0.25f * q;
  jit.run("alloc", {I.tensor(), O.tensor()});
  for (int q = 0; q < rows; ++q) {
    float expected = static_cast<float>(q * 7);
    for (int c = 0; c < 16; ++c) expected += I[q * 16 + c] * 2.0f;
    EXPECT_EQ(O[q], expected) << q;
  }
}

TEST(CodegenLLVM, VectorGatherScatterAndBroadcastIndex) {
  // Vectors of 4 lanes: even[i] = in[ramp(2i*4, 2, 4)] (gather), out[ramp(4i,1,4)] = even +
  // in[broadcast(0)], and a scatter: rev[ramp(4i+3, -1, 4)] = even.
  const int n = 8;  // groups of 4
  tir::Buffer in = tir::Buffer::make("in", DType::kF32, {n * 8});
  tir::Buffer out = tir::Buffer::make("out", DType::kF32, {n * 4});
  tir::Buffer rev = tir::Buffer::make("rev", DType::kF32, {n * 4});
  Var i("i");
  Expr even = Load::make(in, Ramp::make(i * 8, make_int(2), 4));
  Stmt body = Block::make({
      Store::make(out, even + Load::make(in, Broadcast::make(make_int(0), 4)), Ramp::make(i * 4, make_int(1), 4)),
      Store::make(rev, even, Ramp::make(i * 4 + 3, make_int(-1), 4))});
  PrimFunc f = PrimFunc::make("gather", {in, out, rev}, For::make(i, 0, n, ForKind::kSerial, body));
  JitModule jit = jit_one(f);
  Buffer<float> I({n * 8}, dl(DType::kF32)), O({n * 4}, dl(DType::kF32)), R({n * 4}, dl(DType::kF32));
  for (int q = 0; q < n * 8; ++q) I[q] = 1.0f + q;
  jit.run("gather", {I.tensor(), O.tensor(), R.tensor()});
  for (int g = 0; g < n; ++g) {
    for (int l = 0; l < 4; ++l) {
      EXPECT_EQ(O[g * 4 + l], I[g * 8 + 2 * l] + I[0]) << g << "," << l;
      EXPECT_EQ(R[g * 4 + 3 - l], I[g * 8 + 2 * l]) << g << "," << l;
    }
  }
}

TEST(CodegenLLVM, ConstantStrideRampsAreScalarLanesNotGathers) {
  // A transposing copy as NCHW{16}c -> NCHW emits it: out[ramp(8i, 1, 8)] = in[ramp(i, 16, 8)]
  // (constant stride: one scalar load per lane at a constant offset, no llvm.masked.gather), a
  // constant-stride store t[ramp(i, 16, 8)] = out's vector (no scatter), and a ramp whose stride
  // is a variable, which stays a gather. Values checked for all three.
  const int n = 16;
  tir::Buffer in = tir::Buffer::make("in", DType::kF32, {n * 16});
  tir::Buffer out = tir::Buffer::make("out", DType::kF32, {n * 8});
  tir::Buffer back = tir::Buffer::make("back", DType::kF32, {n * 16});
  tir::Buffer var = tir::Buffer::make("var", DType::kF32, {n * 4});
  Var i("i");
  Expr column = Load::make(in, Ramp::make(Expr(i), make_int(16), 8));
  Stmt body = Block::make({Store::make(out, column, Ramp::make(i * 8, make_int(1), 8)),
                           Store::make(back, column * 2.0f, Ramp::make(Expr(i), make_int(16), 8)),
                           Store::make(var, Load::make(in, Ramp::make(Expr(i), i + 1, 4)), Ramp::make(i * 4, make_int(1), 4))});
  LLVMModule module(host_target());
  module.add_prim_func(PrimFunc::make("strided", {in, out, back, var}, For::make(i, 0, n, ForKind::kSerial, body)));
  const std::string ir = module.llvm_ir();
  EXPECT_EQ(ir.find("masked.scatter"), std::string::npos) << ir;
  EXPECT_NE(ir.find("masked.gather"), std::string::npos) << "the variable-stride ramp: " << ir;
  int gather_calls = 0;
  for (size_t at = ir.find("call "); at != std::string::npos; at = ir.find("call ", at + 1)) {
    gather_calls += ir.compare(ir.find('@', at), 20, "@llvm.masked.gather.") == 0;
  }
  EXPECT_EQ(gather_calls, 1) << "only the variable-stride ramp gathers: " << ir;
  JitModule jit(std::move(module));
  Buffer<float> I({n * 16}, dl(DType::kF32)), O({n * 8}, dl(DType::kF32)), B({n * 16}, dl(DType::kF32)),
      V({n * 4}, dl(DType::kF32));
  for (int q = 0; q < n * 16; ++q) I[q] = 0.5f * q - 3.0f;
  jit.run("strided", {I.tensor(), O.tensor(), B.tensor(), V.tensor()});
  for (int c = 0; c < n; ++c) {
    for (int l = 0; l < 8; ++l) {
      EXPECT_EQ(O[c * 8 + l], I[l * 16 + c]) << c << "," << l;
      EXPECT_EQ(B[l * 16 + c], 2.0f * I[l * 16 + c]) << c << "," << l;
    }
    for (int l = 0; l < 4; ++l) EXPECT_EQ(V[c * 4 + l], I[c + l * (c + 1)]) << c << "," << l;
  }
}

TEST(CodegenLLVM, ParallelLoopCapturesOuterValues) {
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  // for o in 0..3: let s = o * 100 in parallel for p in 5..(5+997): out[o*1002 + p] = s + p*p
  const int outer = 3, n = 997, stride = 1002;
  tir::Buffer out = tir::Buffer::make("out", DType::kI64, {outer * stride});
  Var o("o"), s("s"), p("p");
  Stmt par = For::make(p, 5, n, ForKind::kParallel, Store::make(out, s + p * p, o * stride + p));
  PrimFunc f = PrimFunc::make("par", {out}, For::make(o, 0, outer, ForKind::kSerial, LetStmt::make(s, o * 100, par)));
  JitModule jit = jit_one(f);
  Buffer<int64_t> O({outer * stride}, dl(DType::kI64));
  for (size_t q = 0; q < O.size(); ++q) O[q] = -7;
  jit.run("par", {O.tensor()});
  for (int a = 0; a < outer; ++a) {
    for (int q = 0; q < stride; ++q) {
      const int64_t expected = (q >= 5 && q < 5 + n) ? a * 100 + int64_t{q} * q : -7;
      ASSERT_EQ(O[a * stride + q], expected) << "o=" << a << " p=" << q;
    }
  }
}

PrimFunc copy_func(const std::string& name, std::vector<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  tir::Buffer a = tir::Buffer::make("A", DType::kF32, shape);
  tir::Buffer b = tir::Buffer::make("B", DType::kF32, shape);
  Var i("i");
  return PrimFunc::make(name, {a, b}, For::make(i, 0, numel, ForKind::kSerial, Store::make(b, Load::make(a, i), i)));
}

void expect_kernel_error(KernelFunction fn, const std::vector<DLTensor>& args, const std::string& fragment) {
  EXPECT_NE(fn(args.data(), static_cast<int32_t>(args.size())), 0);
  EXPECT_NE(std::string(kiln_get_last_error()).find(fragment), std::string::npos) << kiln_get_last_error();
}

TEST(CodegenLLVM, EntryChecksItsArguments) {
  JitModule jit = jit_one(copy_func("copy", {4, 16}));
  KernelFunction fn = jit.kernel("copy");
  Buffer<float> a({4, 16}, dl(DType::kF32)), b({4, 16}, dl(DType::kF32));
  for (int q = 0; q < 64; ++q) a[q] = q;
  const std::string bad_b = "argument 1 ('B') must be a C-contiguous CPU tensor of f32[4, 16] with 64-byte aligned data";
  expect_kernel_error(fn, {a.tensor()}, "kernel 'copy': expected 2 tensor arguments");
  DLTensor t = b.tensor();
  t.dtype = dl(DType::kI32);
  expect_kernel_error(fn, {a.tensor(), t}, bad_b);
  t = b.tensor();
  int64_t wrong_shape[2] = {4, 15};
  t.shape = wrong_shape;
  expect_kernel_error(fn, {a.tensor(), t}, bad_b);
  t = b.tensor();
  t.ndim = 1;
  expect_kernel_error(fn, {a.tensor(), t}, bad_b);
  t = b.tensor();
  int64_t transposed[2] = {1, 4};
  t.strides = transposed;
  expect_kernel_error(fn, {a.tensor(), t}, bad_b);
  t = b.tensor();
  t.byte_offset = 4;
  expect_kernel_error(fn, {a.tensor(), t}, bad_b);
  t = b.tensor();
  t.device.device_type = kDLCUDA;
  expect_kernel_error(fn, {a.tensor(), t}, bad_b);
  // Compact explicit strides and the right everything run.
  t = b.tensor();
  int64_t compact[2] = {16, 1};
  t.strides = compact;
  ASSERT_EQ(fn(std::vector<DLTensor>{a.tensor(), t}.data(), 2), 0) << kiln_get_last_error();
  for (int q = 0; q < 64; ++q) EXPECT_EQ(b[q], a[q]);
}

TEST(CodegenLLVM, UnalignedTensorsRunWhenAlignmentIsNotAssumed) {
  CodegenOptions options;
  options.assume_aligned_args = false;
  JitModule jit = jit_one(copy_func("copy_unaligned", {9}), options);
  Buffer<float> a({10}, dl(DType::kF32)), b({9}, dl(DType::kF32));
  for (int q = 0; q < 10; ++q) a[q] = 3.0f * q;
  DLTensor t = a.tensor();
  t.byte_offset = 4;
  int64_t shape[1] = {9};
  t.shape = shape;
  jit.run("copy_unaligned", {t, b.tensor()});
  for (int q = 0; q < 9; ++q) EXPECT_EQ(b[q], a[q + 1]) << q;
}

TEST(CodegenLLVM, DuplicateKernelNameIsAUserError) {
  LLVMModule module(host_target());
  module.add_prim_func(copy_func("same", {3}));
  try {
    module.add_prim_func(copy_func("same", {3}));
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kInvalidArgument);
    EXPECT_EQ(e.subject(), "kernel 'same'");
  }
}

TEST(CodegenLLVM, UndeclaredBufferIsAnInternalError) {
  // A buffer that is neither a parameter nor allocated is a broken invariant (InternalError).
  tir::Buffer a = tir::Buffer::make("A", DType::kF32, {4});
  tir::Buffer stray = tir::Buffer::make("stray", DType::kF32, {4});
  Var i("i");
  PrimFunc f = PrimFunc::make("stray", {a}, For::make(i, 0, 4, ForKind::kSerial, Store::make(a, Load::make(stray, i), i)));
  LLVMModule module(host_target());
  EXPECT_THROW(module.add_prim_func(f), InternalError);
}

}  // namespace
}  // namespace kiln::codegen

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT

TEST(CodegenLLVM, HalfAndBfloat16RoundToNearestEven) {
  // h[i] = f16(x[i]), b[i] = bf16(x[i]), y[i] = f32(h[i]) + f32(b[i]), e[i] = exp(h[i]) in f16.
  const int n = 19;
  tir::Buffer x = tir::Buffer::make("x", DType::kF32, {n});
  tir::Buffer h = tir::Buffer::make("h", DType::kF16, {n});
  tir::Buffer b = tir::Buffer::make("b", DType::kBF16, {n});
  tir::Buffer y = tir::Buffer::make("y", DType::kF32, {n});
  tir::Buffer e = tir::Buffer::make("e", DType::kF16, {n});
  Var i("i");
  Stmt body = Block::make({Store::make(h, cast(DType::kF16, Load::make(x, i)), i),
                           Store::make(b, cast(DType::kBF16, Load::make(x, i)), i),
                           Store::make(y, cast(DType::kF32, Load::make(h, i)) + cast(DType::kF32, Load::make(b, i)), i),
                           Store::make(e, exp(Load::make(h, i)), i)});
  PrimFunc f = PrimFunc::make("halfs", {x, h, b, y, e}, For::make(i, 0, n, ForKind::kSerial, body));
  LLVMModule module(host_target());
  module.add_prim_func(f);
  JitModule jit(std::move(module));
  testing::Buffer<float> X({n}, {kDLFloat, 32, 1}), Y({n}, {kDLFloat, 32, 1});
  testing::Buffer<uint16_t> H({n}, {kDLFloat, 16, 1}), B({n}, {kDLBfloat, 16, 1}), E({n}, {kDLFloat, 16, 1});
  for (int k = 0; k < n; ++k) X[k] = (k - 9) * 0.3337f + 1e-3f * k;
  jit.run("halfs", {X.tensor(), H.tensor(), B.tensor(), Y.tensor(), E.tensor()});
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(H[k], ir::f32_to_f16(X[k])) << k;
    EXPECT_EQ(B[k], ir::f32_to_bf16(X[k])) << k;
    EXPECT_EQ(Y[k], ir::f16_to_f32(H[k]) + ir::bf16_to_f32(B[k])) << k;
    EXPECT_EQ(E[k], ir::f32_to_f16(std::exp(ir::f16_to_f32(H[k])))) << k;
  }
}

}  // namespace
}  // namespace kiln::codegen

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT

TEST(CodegenLLVM, FailedHeapAllocationIsAnErrorNotACrash) {
  // A small heap buffer, then one of 2^48 floats (1 PiB) inside it: the kernel must report the
  // failure (freeing the first buffer) instead of crashing.
  tir::Buffer out = tir::Buffer::make("out", DType::kF32, {4});
  tir::Buffer small = tir::Buffer::make("small", DType::kF32, {1024});
  tir::Buffer huge = tir::Buffer::make("huge", DType::kF32, {int64_t{1} << 48});
  Var i("i");
  Stmt inner = Allocate::make(huge, MemoryScope::kHeap, 64,
                              For::make(i, 0, 4, ForKind::kSerial, Store::make(out, Load::make(huge, i), i)));
  Stmt body = Allocate::make(small, MemoryScope::kHeap, 64, Block::make({Store::make(small, 1.0f, make_int(0)), inner}));
  LLVMModule module(host_target());
  module.add_prim_func(PrimFunc::make("oom", {out}, body));
  JitModule jit(std::move(module));
  testing::Buffer<float> o({4}, {kDLFloat, 32, 1});
  try {
    jit.run("oom", {o.tensor()});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'oom': out of memory allocating 1125899906842624 bytes for buffer 'huge'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kiln::codegen

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT

TEST(CodegenLLVM, LeftoverVectorizeAndLongUnrollBecomeLoopMetadata) {
  // A vectorized loop that lowering left as a loop (scalar body) and an unrolled loop longer than
  // the explicit-copy limit: both stay loops with LLVM loop metadata, and compute the same.
  const int n = 100;
  tir::Buffer x = tir::Buffer::make("x", DType::kF32, {n});
  tir::Buffer y = tir::Buffer::make("y", DType::kF32, {n});
  tir::Buffer z = tir::Buffer::make("z", DType::kF32, {n});
  Var i("i"), j("j");
  Stmt body = Block::make({For::make(i, 0, n, ForKind::kVectorized, Store::make(y, Load::make(x, i) * 3.0f, i)),
                           For::make(j, 0, n, ForKind::kUnrolled, Store::make(z, Load::make(x, j) + 1.0f, j))});
  LLVMModule module(host_target());
  module.add_prim_func(PrimFunc::make("meta", {x, y, z}, body));
  const std::string ir = module.llvm_ir();
  EXPECT_NE(ir.find("llvm.loop.vectorize.enable"), std::string::npos) << ir;
  EXPECT_NE(ir.find("llvm.loop.unroll.full"), std::string::npos) << ir;
  JitModule jit(std::move(module));
  testing::Buffer<float> X({n}, {kDLFloat, 32, 1}), Y({n}, {kDLFloat, 32, 1}), Z({n}, {kDLFloat, 32, 1});
  for (int k = 0; k < n; ++k) X[k] = 0.5f * k - 7.0f;
  jit.run("meta", {X.tensor(), Y.tensor(), Z.tensor()});
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(Y[k], X[k] * 3.0f) << k;
    EXPECT_EQ(Z[k], X[k] + 1.0f) << k;
  }
}

TEST(CodegenLLVM, Float64MathThroughLibmPerLane) {
  // f64 vectors of 4 lanes: exp/log via LLVM intrinsics (libm per lane), tanh/erf via libm calls.
  const int n = 64;
  tir::Buffer x = tir::Buffer::make("x", DType::kF64, {n});
  tir::Buffer y = tir::Buffer::make("y", DType::kF64, {n});
  Var io("io");
  Expr v = Load::make(x, Ramp::make(io * 4, make_int(1), 4));
  Expr value = exp(v) + log(fabs(v) + Broadcast::make(FloatImm::make(DType::kF64, 1.0), 4)) + tanh(v) + erf(v);
  PrimFunc f = PrimFunc::make("f64_math", {x, y},
                              For::make(io, 0, n / 4, ForKind::kSerial, Store::make(y, value, Ramp::make(io * 4, make_int(1), 4))));
  LLVMModule module(host_target());
  module.add_prim_func(f);
  JitModule jit(std::move(module));
  testing::Buffer<double> X({n}, {kDLFloat, 64, 1}), Y({n}, {kDLFloat, 64, 1});
  for (int k = 0; k < n; ++k) X[k] = (k - 32) * 0.173;
  jit.run("f64_math", {X.tensor(), Y.tensor()});
  for (int k = 0; k < n; ++k) {
    const double xv = X[k];
    const double expected = std::exp(xv) + std::log(std::fabs(xv) + 1.0) + std::tanh(xv) + std::erf(xv);
    EXPECT_NEAR(Y[k], expected, 1e-14 * (1.0 + std::fabs(expected))) << k;
  }
}

}  // namespace
}  // namespace kiln::codegen

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT

TEST(CodegenLLVM, LargeStackAllocationMovesToTheHeap) {
  // 4 MiB of "stack" scratch per parallel iteration would overflow a worker thread's stack: the
  // code generator puts allocations above 256 KiB on the heap.
  ASSERT_EQ(kiln_set_num_threads(2), 0);
  const int64_t big = int64_t{1} << 20, n = 4;
  tir::Buffer out = tir::Buffer::make("out", DType::kF32, {n});
  tir::Buffer scratch = tir::Buffer::make("scratch", DType::kF32, {big});
  Var p("p"), k("k");
  Stmt body = Allocate::make(
      scratch, MemoryScope::kStack, 64,
      Block::make({For::make(k, 0, big, ForKind::kSerial, Store::make(scratch, cast(DType::kF32, p + k), k)),
                   Store::make(out, Load::make(scratch, make_int(big - 1)) + Load::make(scratch, make_int(0)), p)}));
  LLVMModule module(host_target());
  module.add_prim_func(PrimFunc::make("big_scratch", {out}, For::make(p, 0, n, ForKind::kParallel, body)));
  EXPECT_NE(module.llvm_ir().find("@aligned_alloc(i64 64, i64 4194304)"), std::string::npos) << module.llvm_ir();
  JitModule jit(std::move(module));
  testing::Buffer<float> o({n}, {kDLFloat, 32, 1});
  jit.run("big_scratch", {o.tensor()});
  for (int64_t q = 0; q < n; ++q) EXPECT_EQ(o[q], static_cast<float>(q + big - 1) + static_cast<float>(q)) << q;
}

}  // namespace
}  // namespace kiln::codegen
