// CodeGenLLVM: the math intrinsics (tir::Call). f32 exp, log, tanh, erf and sigmoid are emitted
// as straight-line vector code (polynomial / rational approximations, a few ulp, special values
// kept); sqrt, fabs, floor, ceil, round, fma map to LLVM intrinsics with native vector forms; the
// rest are LLVM intrinsics or libm calls per lane. Accuracy figures are in docs/codegen.md.
#include <limits>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/codegen_llvm.h"
#include "kiln/support/error.h"

namespace kiln::codegen {

using namespace kiln::tir;  // NOLINT
using llvm_detail::like_lanes;

// Calls a scalar libm function on each lane (LLVM has no vector form of it for the target).
llvm::Value* CodeGenLLVM::libm_per_lane(const std::string& f32_name, const std::string& f64_name,
                                        const std::vector<llvm::Value*>& args) {
  llvm::Type* type = args[0]->getType();
  llvm::Type* scalar = type->getScalarType();
  const std::string& name = scalar->isDoubleTy() ? f64_name : f32_name;
  std::vector<llvm::Type*> params(args.size(), scalar);
  llvm::FunctionCallee fn =
      llmod_.getOrInsertFunction(name, llvm::FunctionType::get(scalar, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();  // errno is not observed by generated code
  }
  auto* vec = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (vec == nullptr) return builder_.CreateCall(fn, args);
  llvm::Value* out = llvm::PoisonValue::get(type);
  for (unsigned lane = 0; lane < vec->getNumElements(); ++lane) {
    std::vector<llvm::Value*> lane_args;
    for (llvm::Value* a : args) lane_args.push_back(builder_.CreateExtractElement(a, lane));
    out = builder_.CreateInsertElement(out, builder_.CreateCall(fn, lane_args), lane);
  }
  return out;
}

// exp for f32 (scalar or vector) in straight-line vector code: range reduction x = n*ln2 + r with
// n = roundeven(x*log2(e)), a degree-6 polynomial for e^r (Cephes' expf coefficients), and the
// scale 2^n applied as two exact power-of-two factors so that results down to the denormals and
// up to overflow (inf) come out right. NaN in gives NaN out. About 1 ulp on [-87, 88].
llvm::Value* CodeGenLLVM::emit_exp_f32(llvm::Value* x, bool bounded) {
  llvm::Type* ft = x->getType();
  const int lanes = ft->isVectorTy() ? static_cast<int>(llvm::cast<llvm::FixedVectorType>(ft)->getNumElements()) : 1;
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  llvm::Type* it = lanes > 1 ? llvm::FixedVectorType::get(builder_.getInt32Ty(), lanes)
                             : static_cast<llvm::Type*>(builder_.getInt32Ty());
  auto ci = [&](int v) { return llvm::ConstantInt::get(it, v, true); };
  llvm::Value* xc = x;
  if (!bounded) {
    xc = builder_.CreateSelect(builder_.CreateFCmpOGT(x, c(89.0)), c(89.0), x);
    xc = builder_.CreateSelect(builder_.CreateFCmpOLT(xc, c(-104.0)), c(-104.0), xc);
  }
  llvm::Value* n = intrinsic(llvm::Intrinsic::roundeven, {builder_.CreateFMul(xc, c(1.44269504088896341))});
  llvm::Value* r = intrinsic(llvm::Intrinsic::fma, {n, c(-0.693359375), xc});
  r = intrinsic(llvm::Intrinsic::fma, {n, c(2.12194440e-4), r});
  llvm::Value* p = c(1.9875691500e-4);
  for (double k : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
                   5.0000001201e-1}) {
    p = intrinsic(llvm::Intrinsic::fma, {p, r, c(k)});
  }
  llvm::Value* r2 = builder_.CreateFMul(r, r);
  llvm::Value* y = intrinsic(llvm::Intrinsic::fma, {p, r2, builder_.CreateFAdd(r, c(1.0))});
  llvm::Value* ni = builder_.CreateFPToSI(n, it);
  auto pow2_of = [&](llvm::Value* e) {
    return builder_.CreateBitCast(builder_.CreateShl(builder_.CreateAdd(e, ci(127)), ci(23)), ft);
  };
  // |n| <= 126 on the bounded range: 2^n is one normal float.
  if (bounded) return builder_.CreateFMul(y, pow2_of(ni));
  llvm::Value* n1 = builder_.CreateAShr(ni, ci(1));
  llvm::Value* n2 = builder_.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* e) {
    return builder_.CreateBitCast(builder_.CreateShl(builder_.CreateAdd(e, ci(127)), ci(23)), ft);
  };
  // NaN needs no select: n, r and y are NaN, and so is the product.
  return builder_.CreateFMul(builder_.CreateFMul(y, pow2(n1)), pow2(n2));
}

// log for f32 in vector code (Cephes' logf): x = m * 2^e with m in [sqrt(1/2), sqrt(2)) read
// from the bits (denormals scaled by 2^23 first), a degree-8 polynomial in m - 1, and e*ln2 added
// in two parts. log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN.
llvm::Value* CodeGenLLVM::emit_log_f32(llvm::Value* x) {
  llvm::Type* ft = x->getType();
  llvm::Type* it = like_lanes(builder_.getInt32Ty(), ft);
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  auto ci = [&](int64_t v) { return llvm::ConstantInt::get(it, static_cast<uint64_t>(v), true); };
  llvm::Value* denormal = builder_.CreateFCmpOLT(x, c(1.17549435e-38));
  llvm::Value* xs = builder_.CreateSelect(denormal, builder_.CreateFMul(x, c(8388608.0)), x);
  llvm::Value* bits = builder_.CreateBitCast(xs, it);
  llvm::Value* e = builder_.CreateSub(builder_.CreateLShr(bits, ci(23)), ci(126));
  e = builder_.CreateSub(e, builder_.CreateSelect(denormal, ci(23), ci(0)));
  llvm::Value* m = builder_.CreateBitCast(builder_.CreateOr(builder_.CreateAnd(bits, ci(0x007fffff)), ci(0x3f000000)), ft);
  llvm::Value* low = builder_.CreateFCmpOLT(m, c(0.707106781186547524));
  e = builder_.CreateSub(e, builder_.CreateZExt(low, it));
  m = builder_.CreateFSub(builder_.CreateSelect(low, builder_.CreateFAdd(m, m), m), c(1.0));
  llvm::Value* z = builder_.CreateFMul(m, m);
  llvm::Value* p = c(7.0376836292e-2);
  for (double k : {-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                   2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1}) {
    p = intrinsic(llvm::Intrinsic::fma, {p, m, c(k)});
  }
  llvm::Value* fe = builder_.CreateSIToFP(e, ft);
  llvm::Value* y = builder_.CreateFMul(builder_.CreateFMul(p, m), z);
  y = intrinsic(llvm::Intrinsic::fma, {fe, c(-2.12194440e-4), y});
  y = intrinsic(llvm::Intrinsic::fma, {z, c(-0.5), y});
  llvm::Value* r = intrinsic(llvm::Intrinsic::fma, {fe, c(0.693359375), builder_.CreateFAdd(m, y)});
  const double inf = std::numeric_limits<double>::infinity();
  r = builder_.CreateSelect(builder_.CreateFCmpOEQ(x, c(inf)), c(inf), r);
  r = builder_.CreateSelect(builder_.CreateFCmpOEQ(x, c(0.0)), c(-inf), r);
  r = builder_.CreateSelect(builder_.CreateFCmpOLT(x, c(0.0)), c(std::numeric_limits<double>::quiet_NaN()), r);
  return builder_.CreateSelect(builder_.CreateFCmpUNO(x, x), x, r);
}

// erf for f32 in vector code: x * P(x^2) / Q(x^2) on x clamped to [-4, 4] (beyond, erf rounds
// to +-1 in f32), with a degree-6/5 rational approximation fitted for Kiln by weighted least
// squares on relative error (4.6e-9 in exact arithmetic; a few f32 ulp as evaluated here).
llvm::Value* CodeGenLLVM::emit_erf_f32(llvm::Value* x) {
  llvm::Type* ft = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  llvm::Value* xc = builder_.CreateSelect(builder_.CreateFCmpOGT(x, c(4.0)), c(4.0), x);
  xc = builder_.CreateSelect(builder_.CreateFCmpOLT(xc, c(-4.0)), c(-4.0), xc);
  llvm::Value* u = builder_.CreateFMul(xc, xc);
  auto horner = [&](std::initializer_list<double> coeffs_high_to_low) {
    llvm::Value* acc = nullptr;
    for (double k : coeffs_high_to_low) acc = acc == nullptr ? c(k) : intrinsic(llvm::Intrinsic::fma, {acc, u, c(k)});
    return acc;
  };
  llvm::Value* p = horner({-1.3173756557849359e-08, 4.6806406022795177e-06, 3.7942397674421745e-04,
                           3.8468967083807506e-03, 5.4306011198644220e-02, 1.8514519457429754e-01,
                           1.1283791694504657e+00});
  llvm::Value* q = horner({6.3073621154863084e-05, 1.3067840381786402e-03, 1.5455907081649579e-02,
                           1.1393160573807710e-01, 4.9741407225038237e-01, 1.0});
  llvm::Value* r = builder_.CreateFDiv(builder_.CreateFMul(xc, p), q);
  r = builder_.CreateSelect(builder_.CreateFCmpOGT(r, c(1.0)), c(1.0), r);
  r = builder_.CreateSelect(builder_.CreateFCmpOLT(r, c(-1.0)), c(-1.0), r);
  return builder_.CreateSelect(builder_.CreateFCmpUNO(x, x), x, r);
}

// tanh for f32 in vector code: for |x| < 0.625 Cephes' tanhf odd polynomial; above,
// 1 - 2 / (exp(2|x|) + 1) on the vector exp (saturates to 1; no cancellation there since the
// result is > 0.55); the sign is copied back. NaN in gives NaN out.
llvm::Value* CodeGenLLVM::emit_tanh_f32(llvm::Value* x) {
  llvm::Type* ft = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  llvm::Value* ax = intrinsic(llvm::Intrinsic::fabs, {x});
  llvm::Value* z = builder_.CreateFMul(x, x);
  llvm::Value* p = c(-5.70498872745e-3);
  for (double k : {2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1}) {
    p = intrinsic(llvm::Intrinsic::fma, {p, z, c(k)});
  }
  llvm::Value* small = intrinsic(llvm::Intrinsic::fma, {builder_.CreateFMul(p, z), x, x});
  llvm::Value* e = emit_exp_f32(builder_.CreateFMul(ax, c(2.0)));
  llvm::Value* big = builder_.CreateFSub(c(1.0), builder_.CreateFDiv(c(2.0), builder_.CreateFAdd(e, c(1.0))));
  llvm::Value* r = builder_.CreateSelect(builder_.CreateFCmpOLT(ax, c(0.625)), small, big);
  return intrinsic(llvm::Intrinsic::copysign, {r, x});  // also keeps tanh(-0) = -0
}

llvm::Value* CodeGenLLVM::emit_math(CallOp op, const std::vector<llvm::Value*>& a, const Type& t) {
  using llvm::Intrinsic::ID;
  const bool f32 = t.dtype == DType::kF32;
  llvm::Type* ty = a[0]->getType();
  auto one = [&] { return llvm::ConstantFP::get(ty, 1.0); };
  switch (op) {
    case CallOp::kExp: return f32 ? emit_exp_f32(a[0]) : intrinsic(llvm::Intrinsic::exp, a);
    case CallOp::kLog: return f32 ? emit_log_f32(a[0]) : intrinsic(llvm::Intrinsic::log, a);
    case CallOp::kSqrt: return intrinsic(llvm::Intrinsic::sqrt, a);
    case CallOp::kRsqrt: return builder_.CreateFDiv(one(), intrinsic(llvm::Intrinsic::sqrt, a));
    case CallOp::kTanh: return f32 ? emit_tanh_f32(a[0]) : libm_per_lane("tanhf", "tanh", a);
    case CallOp::kErf: return f32 ? emit_erf_f32(a[0]) : libm_per_lane("erff", "erf", a);
    case CallOp::kSigmoid: {
      // (A reciprocal estimate instead of the division measured no faster on Zen 3.)
      llvm::Value* neg = builder_.CreateFNeg(a[0]);
      if (!f32) return builder_.CreateFDiv(one(), builder_.CreateFAdd(one(), intrinsic(llvm::Intrinsic::exp, {neg})));
      // f32: -x clamped to [-87, 88] lets exp use one power-of-two factor (fewer live values in
      // a register-tile epilogue). Outside, 1 / (1 + e^-x) is already 1 or below 7e-39.
      neg = builder_.CreateSelect(builder_.CreateFCmpOGT(neg, llvm::ConstantFP::get(ty, 88.0)),
                                  llvm::ConstantFP::get(ty, 88.0), neg);
      neg = builder_.CreateSelect(builder_.CreateFCmpOLT(neg, llvm::ConstantFP::get(ty, -87.0)),
                                  llvm::ConstantFP::get(ty, -87.0), neg);
      return builder_.CreateFDiv(one(), builder_.CreateFAdd(one(), emit_exp_f32(neg, true)));
    }
    case CallOp::kPow: return intrinsic(llvm::Intrinsic::pow, a);
    case CallOp::kFabs: return intrinsic(llvm::Intrinsic::fabs, a);
    case CallOp::kFloor: return intrinsic(llvm::Intrinsic::floor, a);
    case CallOp::kCeil: return intrinsic(llvm::Intrinsic::ceil, a);
    case CallOp::kRound: return intrinsic(llvm::Intrinsic::roundeven, a);
    case CallOp::kSin: return intrinsic(llvm::Intrinsic::sin, a);
    case CallOp::kCos: return intrinsic(llvm::Intrinsic::cos, a);
    case CallOp::kFma: return intrinsic(llvm::Intrinsic::fma, a);
    default: break;
  }
  KILN_IFAIL() << "unhandled call op " << call_op_name(op);
}

// The integer bit operations (CallOp kBitAnd ... kShiftRight): LLVM's and/or/xor, and shifts
// guarded so that an amount outside [0, bits) gives 0 (or the sign, for a right shift of a signed
// value) instead of LLVM's poison.
llvm::Value* CodeGenLLVM::emit_bit_op(CallOp op, const std::vector<llvm::Value*>& a, const Type& t) {
  switch (op) {
    case CallOp::kBitAnd: return builder_.CreateAnd(a[0], a[1]);
    case CallOp::kBitOr: return builder_.CreateOr(a[0], a[1]);
    case CallOp::kBitXor: return builder_.CreateXor(a[0], a[1]);
    case CallOp::kBitNot: return builder_.CreateNot(a[0]);
    case CallOp::kShiftLeft:
    case CallOp::kShiftRight: {
      llvm::Type* ty = a[0]->getType();
      llvm::Value* bits = llvm::ConstantInt::get(ty, static_cast<uint64_t>(t.bits()));
      llvm::Value* wide = builder_.CreateICmpUGE(a[1], bits);  // also n < 0, read as unsigned
      llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
      if (op == CallOp::kShiftLeft) return builder_.CreateSelect(wide, zero, builder_.CreateShl(a[0], a[1]));
      if (t.is_uint()) return builder_.CreateSelect(wide, zero, builder_.CreateLShr(a[0], a[1]));
      llvm::Value* amount = builder_.CreateSelect(wide, llvm::ConstantInt::get(ty, static_cast<uint64_t>(t.bits() - 1)), a[1]);
      return builder_.CreateAShr(a[0], amount);
    }
    default: break;
  }
  KILN_IFAIL() << "unhandled bit op " << call_op_name(op);
}

llvm::Value* CodeGenLLVM::emit_call(const Call* op) {
  if (op->op == CallOp::kPrefetch) return emit_prefetch(op);
  if (is_dot_op(op->op)) return emit_dot(op, nullptr);
  std::vector<llvm::Value*> args;
  for (const Expr& arg : op->args) args.push_back(emit_expr(arg));
  const Type& t = op->type;
  if (is_bit_op(op->op)) return emit_bit_op(op->op, args, t);
  KILN_ICHECK(t.is_float()) << "math intrinsic " << call_op_name(op->op) << " on " << t.to_string();
  // f16 and bf16 are already f32 in registers: compute in f32.
  const Type compute = (t.dtype == DType::kF64) ? t : Type(DType::kF32, t.lanes);
  return emit_math(op->op, args, compute);
}

}  // namespace kiln::codegen
