// CodeGenLLVM: expressions, f16/bf16 conversions, loads and addresses (see codegen_llvm.h and
// docs/tir.md for the semantics each node must keep). Math intrinsics: codegen_llvm_math.cc.
#include <limits>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/codegen_llvm.h"
#include "kiln/support/error.h"
#include "kiln/tir/printer.h"

namespace kiln::codegen {

using namespace kiln::tir;  // NOLINT: node names read best unqualified here
using llvm_detail::like_lanes;

// In memory: bool is one byte, f16 and bf16 are 16-bit patterns (converted at loads and stores).
llvm::Type* CodeGenLLVM::storage_type(DType d) {
  if (d == DType::kBool) return builder_.getInt8Ty();
  if (d == DType::kF16 || d == DType::kBF16) return builder_.getInt16Ty();
  return llvm_type(Type(d, 1));
}

// f32 -> bf16 bit pattern (i16), rounding to nearest even; NaN stays a (quiet) NaN. Written out
// in integer ops: LLVM's own bfloat truncation calls __truncsfbf2, which older libgcc lacks.
llvm::Value* CodeGenLLVM::f32_to_bf16_bits(llvm::Value* v) {
  llvm::Type* i32 = like_lanes(builder_.getInt32Ty(), v->getType());
  auto c = [&](uint32_t x) { return llvm::ConstantInt::get(i32, x); };
  llvm::Value* bits = builder_.CreateBitCast(v, i32);
  llvm::Value* lsb = builder_.CreateAnd(builder_.CreateLShr(bits, c(16)), c(1));
  llvm::Value* rounded = builder_.CreateLShr(builder_.CreateAdd(builder_.CreateAdd(bits, c(0x7FFF)), lsb), c(16));
  llvm::Value* quiet_nan = builder_.CreateOr(builder_.CreateLShr(bits, c(16)), c(0x40));
  llvm::Value* out = builder_.CreateSelect(builder_.CreateFCmpUNO(v, v), quiet_nan, rounded);
  return builder_.CreateTrunc(out, like_lanes(builder_.getInt16Ty(), v->getType()));
}

// A 16-bit pattern of `d` (f16 or bf16) -> its f32 value.
llvm::Value* CodeGenLLVM::half_bits_to_f32(llvm::Value* bits, DType d) {
  llvm::Type* f32 = like_lanes(builder_.getFloatTy(), bits->getType());
  if (d == DType::kF16) {
    return builder_.CreateFPExt(builder_.CreateBitCast(bits, like_lanes(builder_.getHalfTy(), bits->getType())), f32);
  }
  llvm::Type* i32 = like_lanes(builder_.getInt32Ty(), bits->getType());
  return builder_.CreateBitCast(builder_.CreateShl(builder_.CreateZExt(bits, i32), llvm::ConstantInt::get(i32, 16)), f32);
}

// An f32 value -> the 16-bit pattern of `d` (f16 or bf16), rounded to nearest even.
llvm::Value* CodeGenLLVM::f32_to_half_bits(llvm::Value* v, DType d) {
  if (d == DType::kBF16) return f32_to_bf16_bits(v);
  llvm::Value* h = builder_.CreateFPTrunc(v, like_lanes(builder_.getHalfTy(), v->getType()));
  return builder_.CreateBitCast(h, like_lanes(builder_.getInt16Ty(), v->getType()));
}

// Rounds an f32 value to the nearest value of `d` (f16 or bf16), kept in f32.
llvm::Value* CodeGenLLVM::round_to_half(llvm::Value* v, DType d) {
  return half_bits_to_f32(f32_to_half_bits(v, d), d);
}

llvm::Type* CodeGenLLVM::llvm_type(const Type& t) {
  llvm::Type* elem = nullptr;
  switch (t.dtype) {
    case DType::kF32: elem = builder_.getFloatTy(); break;
    case DType::kF64: elem = builder_.getDoubleTy(); break;
    case DType::kF16:   // f16 and bf16 values are computed in f32 (docs/tir.md); storage_type()
    case DType::kBF16:  // holds their 16-bit form
      elem = builder_.getFloatTy();
      break;
    case DType::kI8:
    case DType::kU8: elem = builder_.getInt8Ty(); break;
    case DType::kI16:
    case DType::kU16: elem = builder_.getInt16Ty(); break;
    case DType::kI32:
    case DType::kU32: elem = builder_.getInt32Ty(); break;
    case DType::kI64:
    case DType::kU64: elem = builder_.getInt64Ty(); break;
    case DType::kBool: elem = builder_.getInt1Ty(); break;
  }
  KILN_ICHECK(elem != nullptr) << "unhandled dtype";
  return t.lanes > 1 ? llvm::FixedVectorType::get(elem, t.lanes) : elem;
}

llvm::Value* CodeGenLLVM::splat(llvm::Value* v, int lanes) {
  return lanes > 1 ? builder_.CreateVectorSplat(lanes, v) : v;
}

llvm::Value* CodeGenLLVM::const_i64(int64_t v) { return builder_.getInt64(static_cast<uint64_t>(v)); }

llvm::Value* CodeGenLLVM::intrinsic(llvm::Intrinsic::ID id, const std::vector<llvm::Value*>& args) {
  llvm::Function* fn = llvm::Intrinsic::getDeclaration(&llmod_, id, {args[0]->getType()});
  return builder_.CreateCall(fn, args);
}

llvm::Value* CodeGenLLVM::emit_cast(const Cast* op) {
  const Type from = op->value.type();
  const Type to = op->type;
  llvm::Value* v = emit_expr(op->value);
  llvm::Type* dst = llvm_type(to);  // f16/bf16: f32 registers
  const bool to_half = to.dtype == DType::kF16 || to.dtype == DType::kBF16;
  if (from.dtype == to.dtype) return v;
  if (to.is_bool()) {
    if (from.is_float()) return builder_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    return builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  if (from.is_float() && to.is_float()) {
    if (from.dtype == DType::kF64 && to.dtype == DType::kF16) {
      // One rounding, straight from f64 to half.
      llvm::Value* h = builder_.CreateFPTrunc(v, like_lanes(builder_.getHalfTy(), v->getType()));
      return builder_.CreateFPExt(h, dst);
    }
    if (v->getType()->getScalarType()->isDoubleTy() && !dst->getScalarType()->isDoubleTy()) v = builder_.CreateFPTrunc(v, dst);
    if (!v->getType()->getScalarType()->isDoubleTy() && dst->getScalarType()->isDoubleTy()) return builder_.CreateFPExt(v, dst);
    return to_half ? round_to_half(v, to.dtype) : v;
  }
  if (from.is_float()) return to.is_uint() ? builder_.CreateFPToUI(v, dst) : builder_.CreateFPToSI(v, dst);
  const bool from_unsigned = from.is_uint() || from.is_bool();
  if (to.is_float()) {
    llvm::Value* f = from_unsigned ? builder_.CreateUIToFP(v, dst) : builder_.CreateSIToFP(v, dst);
    return to_half ? round_to_half(f, to.dtype) : f;
  }
  return builder_.CreateIntCast(v, dst, /*isSigned=*/!from_unsigned);
}

llvm::Value* CodeGenLLVM::emit_binary(const Expr& e) {
  const ExprNode* n = e.get();
  // Every binary node has members a and b at the same place; read them through the node's type.
  auto operands = [&](auto* op) { return std::pair{emit_expr(op->a), emit_expr(op->b)}; };
  const Type t = n->type;
  const bool fl = t.is_float();
  const bool nsw = t.dtype == DType::kI64;  // index arithmetic never overflows (docs/tir.md)
  const bool uns = t.is_uint() || t.is_bool();
  switch (n->kind) {
    case IRNodeKind::kAdd: {
      // acc + dot4(a, b): the dot product instructions accumulate (vpdpbusd, sdot).
      const Add* add = e.as<Add>();
      if (const auto* dot = add->b.as<Call>(); dot && is_dot_op(dot->op)) return emit_dot(dot, emit_expr(add->a));
      if (const auto* dot = add->a.as<Call>(); dot && is_dot_op(dot->op)) return emit_dot(dot, emit_expr(add->b));
      auto [a, b] = operands(add);
      return fl ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b, "", false, nsw);
    }
    case IRNodeKind::kSub: {
      auto [a, b] = operands(e.as<Sub>());
      return fl ? builder_.CreateFSub(a, b) : builder_.CreateSub(a, b, "", false, nsw);
    }
    case IRNodeKind::kMul: {
      auto [a, b] = operands(e.as<Mul>());
      return fl ? builder_.CreateFMul(a, b) : builder_.CreateMul(a, b, "", false, nsw);
    }
    case IRNodeKind::kDiv: {
      auto [a, b] = operands(e.as<Div>());
      KILN_ICHECK(fl) << "Div on " << t.to_string();
      return builder_.CreateFDiv(a, b);
    }
    case IRNodeKind::kMin: {
      auto [a, b] = operands(e.as<Min>());
      llvm::Value* lt = fl ? builder_.CreateFCmpOLT(a, b)
                           : (uns ? builder_.CreateICmpULT(a, b) : builder_.CreateICmpSLT(a, b));
      return builder_.CreateSelect(lt, a, b);
    }
    case IRNodeKind::kMax: {
      auto [a, b] = operands(e.as<Max>());
      llvm::Value* gt = fl ? builder_.CreateFCmpOGT(a, b)
                           : (uns ? builder_.CreateICmpUGT(a, b) : builder_.CreateICmpSGT(a, b));
      return builder_.CreateSelect(gt, a, b);
    }
    case IRNodeKind::kAnd: {
      auto [a, b] = operands(e.as<And>());
      return builder_.CreateAnd(a, b);
    }
    case IRNodeKind::kOr: {
      auto [a, b] = operands(e.as<Or>());
      return builder_.CreateOr(a, b);
    }
    default: break;
  }
  KILN_IFAIL() << "not a binary node: " << node_kind_name(n->kind);
}

llvm::Value* CodeGenLLVM::emit_compare(const Expr& e) {
  llvm::Value* a = nullptr;
  llvm::Value* b = nullptr;
  Type t;
  auto take = [&](auto* op) {
    a = emit_expr(op->a);
    b = emit_expr(op->b);
    t = op->a.type();
  };
  using P = llvm::CmpInst::Predicate;
  P fp = P::FCMP_OEQ, sp = P::ICMP_EQ, up = P::ICMP_EQ;
  switch (e.kind()) {
    case IRNodeKind::kEQ: take(e.as<EQ>()); fp = P::FCMP_OEQ; sp = up = P::ICMP_EQ; break;
    case IRNodeKind::kNE: take(e.as<NE>()); fp = P::FCMP_UNE; sp = up = P::ICMP_NE; break;
    case IRNodeKind::kLT: take(e.as<LT>()); fp = P::FCMP_OLT; sp = P::ICMP_SLT; up = P::ICMP_ULT; break;
    case IRNodeKind::kLE: take(e.as<LE>()); fp = P::FCMP_OLE; sp = P::ICMP_SLE; up = P::ICMP_ULE; break;
    case IRNodeKind::kGT: take(e.as<GT>()); fp = P::FCMP_OGT; sp = P::ICMP_SGT; up = P::ICMP_UGT; break;
    case IRNodeKind::kGE: take(e.as<GE>()); fp = P::FCMP_OGE; sp = P::ICMP_SGE; up = P::ICMP_UGE; break;
    default: KILN_IFAIL() << "not a comparison: " << node_kind_name(e.kind());
  }
  if (t.is_float()) return builder_.CreateFCmp(fp, a, b);
  return builder_.CreateICmp((t.is_uint() || t.is_bool()) ? up : sp, a, b);
}

// floor(a / b) and a - b * floor(a / b) for integers (docs/tir.md). A constant power-of-two
// divisor becomes a shift / mask, which has floor semantics for negative a too; u8 and bool are
// unsigned; otherwise sdiv/srem with the sign fix-up.
llvm::Value* CodeGenLLVM::emit_floor_divmod(const Expr& e) {
  const bool is_div = e.kind() == IRNodeKind::kFloorDiv;
  const Expr& ea = is_div ? e.as<FloorDiv>()->a : e.as<FloorMod>()->a;
  const Expr& eb = is_div ? e.as<FloorDiv>()->b : e.as<FloorMod>()->b;
  const Type t = e.type();
  KILN_ICHECK(t.is_int_or_uint()) << "floordiv/floormod on " << t.to_string();
  llvm::Value* a = emit_expr(ea);
  int64_t cb = 0;
  if (as_const_int(eb, &cb) && cb > 0 && (cb & (cb - 1)) == 0) {
    int shift = 0;
    while ((int64_t{1} << shift) < cb) ++shift;
    llvm::Type* ty = a->getType();
    if (is_div) {
      return t.is_uint() ? builder_.CreateLShr(a, llvm::ConstantInt::get(ty, shift))
                         : builder_.CreateAShr(a, llvm::ConstantInt::get(ty, shift));
    }
    return builder_.CreateAnd(a, llvm::ConstantInt::get(ty, cb - 1));
  }
  llvm::Value* b = emit_expr(eb);
  if (t.is_uint()) return is_div ? builder_.CreateUDiv(a, b) : builder_.CreateURem(a, b);
  llvm::Value* q = builder_.CreateSDiv(a, b);
  llvm::Value* r = builder_.CreateSRem(a, b);
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  // The remainder must take the sign of b: adjust when r != 0 and sign(r) != sign(b).
  llvm::Value* adjust = builder_.CreateAnd(
      builder_.CreateICmpNE(r, zero),
      builder_.CreateICmpNE(builder_.CreateICmpSLT(r, zero), builder_.CreateICmpSLT(b, zero)));
  if (is_div) {
    return builder_.CreateSelect(adjust, builder_.CreateSub(q, llvm::ConstantInt::get(q->getType(), 1)), q);
  }
  return builder_.CreateSelect(adjust, builder_.CreateAdd(r, b), r);
}

llvm::Value* CodeGenLLVM::emit_ramp(const Ramp* op) {
  llvm::Value* base = emit_expr(op->base);
  llvm::Value* stride = emit_expr(op->stride);
  llvm::Type* et = base->getType();
  std::vector<llvm::Constant*> steps;
  for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(et, i));
  llvm::Value* offsets = builder_.CreateMul(splat(stride, op->lanes), llvm::ConstantVector::get(steps));
  const bool nsw = op->base.type().dtype == DType::kI64;
  return builder_.CreateAdd(splat(base, op->lanes), offsets, "", false, nsw);
}

llvm::Value* CodeGenLLVM::buffer_pointer(const tir::Buffer& b) {
  auto it = fs_.buffers.find(b.get());
  KILN_ICHECK(it != fs_.buffers.end())
      << "buffer '" << b->name << "' is neither a parameter of " << kernel_name_
      << " nor declared by an enclosing Allocate";
  return it->second;
}

static llvm::Value* to_i64(llvm::IRBuilder<>& builder, llvm::Value* v, const Type& t) {
  llvm::Type* target = builder.getInt64Ty();
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
    target = llvm::FixedVectorType::get(target, vt->getNumElements());
  }
  return builder.CreateIntCast(v, target, /*isSigned=*/!(t.is_uint() || t.is_bool()));
}

llvm::Value* CodeGenLLVM::element_address(const tir::Buffer& b, const Expr& index, bool* contiguous,
                                          bool* uniform) {
  llvm::Value* base = buffer_pointer(b);
  llvm::Type* elem = storage_type(b->dtype);
  *contiguous = false;
  *uniform = false;
  const Type it = index.type();
  if (it.lanes == 1) {
    *contiguous = true;
    return builder_.CreateInBoundsGEP(elem, base, to_i64(builder_, emit_expr(index), it));
  }
  if (const Ramp* ramp = index.as<Ramp>()) {
    if (is_const_int(ramp->stride, 1)) {
      *contiguous = true;
      llvm::Value* first = to_i64(builder_, emit_expr(ramp->base), ramp->base.type());
      return builder_.CreateInBoundsGEP(elem, base, first);
    }
  }
  if (const Broadcast* bc = index.as<Broadcast>()) {
    *uniform = true;
    llvm::Value* at = to_i64(builder_, emit_expr(bc->value), bc->value.type());
    return builder_.CreateInBoundsGEP(elem, base, at);
  }
  return builder_.CreateInBoundsGEP(elem, base, to_i64(builder_, emit_expr(index), it));
}

llvm::Value* CodeGenLLVM::emit_prefetch(const Call* op) {
  const auto* load = op->args[0].as<Load>();
  KILN_ICHECK(load != nullptr && load->index.type().is_scalar()) << "prefetch of an expression that is not a scalar Load";
  llvm::Value* at = builder_.CreateGEP(storage_type(load->buffer->dtype), buffer_pointer(load->buffer),
                                       to_i64(builder_, emit_expr(load->index), load->index.type()));
  llvm::Function* fn = llvm::Intrinsic::getDeclaration(&llmod_, llvm::Intrinsic::prefetch, {at->getType()});
  builder_.CreateCall(fn, {at, builder_.getInt32(0), builder_.getInt32(3), builder_.getInt32(1)});
  return llvm::Constant::getNullValue(llvm_type(op->type));
}

llvm::Value* CodeGenLLVM::strided_first_address(const tir::Buffer& b, const Expr& index) {
  const Ramp* ramp = index.as<Ramp>();
  if (ramp == nullptr || ramp->lanes <= 1) return nullptr;
  const IntImm* stride = ramp->stride.as<IntImm>();
  if (stride == nullptr || stride->value == 1) return nullptr;
  return builder_.CreateInBoundsGEP(storage_type(b->dtype), buffer_pointer(b),
                                    to_i64(builder_, emit_expr(ramp->base), ramp->base.type()));
}

llvm::Value* CodeGenLLVM::emit_load(const Load* op) {
  bool contiguous = false, uniform = false;
  llvm::Value* addr = element_address(op->buffer, op->index, &contiguous, &uniform);
  const Type t = op->type;
  const bool is_bool = t.is_bool();
  llvm::Type* elem = storage_type(t.dtype);
  const llvm::Align align(std::max<unsigned>(1, t.bits() / 8));
  llvm::Value* v = nullptr;
  if (t.lanes == 1 || uniform) {
    v = splat(builder_.CreateAlignedLoad(elem, addr, align), t.lanes);
  } else if (contiguous) {
    v = builder_.CreateAlignedLoad(llvm::FixedVectorType::get(elem, t.lanes), addr, align);
  } else if (llvm::Value* first = strided_first_address(op->buffer, op->index)) {
    // A constant-stride ramp (a transposing copy: NCHW{b}c <-> NCHW, a conv's packing): one
    // scalar load per lane at a constant offset from the first element's address, no vector of
    // pointers (whose lanes LLVM would extract one by one to scalarize the gather).
    const int64_t stride = op->index.as<Ramp>()->stride.as<IntImm>()->value;
    v = llvm::PoisonValue::get(llvm::FixedVectorType::get(elem, t.lanes));
    for (int k = 0; k < t.lanes; ++k) {
      llvm::Value* at = builder_.CreateInBoundsGEP(elem, first, builder_.getInt64(k * stride));
      v = builder_.CreateInsertElement(v, builder_.CreateAlignedLoad(elem, at, align), builder_.getInt64(k));
    }
  } else {
    v = builder_.CreateMaskedGather(llvm::FixedVectorType::get(elem, t.lanes), addr, align);
  }
  if (is_bool) v = builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  if (t.dtype == DType::kF16 || t.dtype == DType::kBF16) v = half_bits_to_f32(v, t.dtype);
  return v;
}

llvm::Value* CodeGenLLVM::emit_expr(const Expr& e) {
  KILN_ICHECK(e.defined()) << "undefined expression in " << kernel_name_;
  switch (e.kind()) {
    case IRNodeKind::kIntImm: {
      const IntImm* op = e.as<IntImm>();
      return llvm::ConstantInt::get(llvm_type(op->type), static_cast<uint64_t>(op->value),
                                    op->type.is_int());
    }
    case IRNodeKind::kFloatImm: {
      const FloatImm* op = e.as<FloatImm>();
      return llvm::ConstantFP::get(llvm_type(op->type), op->value);
    }
    case IRNodeKind::kVariable: {
      auto it = fs_.vars.find(e.as<Variable>());
      KILN_ICHECK(it != fs_.vars.end())
          << "variable '" << e.as<Variable>()->name << "' used outside its scope in " << kernel_name_;
      return it->second;
    }
    case IRNodeKind::kAdd:
    case IRNodeKind::kSub:
    case IRNodeKind::kMul:
    case IRNodeKind::kDiv:
    case IRNodeKind::kMin:
    case IRNodeKind::kMax:
    case IRNodeKind::kAnd:
    case IRNodeKind::kOr: return emit_binary(e);
    case IRNodeKind::kFloorDiv:
    case IRNodeKind::kFloorMod: return emit_floor_divmod(e);
    case IRNodeKind::kEQ:
    case IRNodeKind::kNE:
    case IRNodeKind::kLT:
    case IRNodeKind::kLE:
    case IRNodeKind::kGT:
    case IRNodeKind::kGE: return emit_compare(e);
    case IRNodeKind::kNot: return builder_.CreateNot(emit_expr(e.as<Not>()->a));
    case IRNodeKind::kSelect: {
      const Select* op = e.as<Select>();
      llvm::Value* c = emit_expr(op->condition);
      llvm::Value* t = emit_expr(op->true_value);
      llvm::Value* f = emit_expr(op->false_value);
      return builder_.CreateSelect(c, t, f);
    }
    case IRNodeKind::kCast: return emit_cast(e.as<Cast>());
    case IRNodeKind::kCall: return emit_call(e.as<Call>());
    case IRNodeKind::kLoad: return emit_load(e.as<Load>());
    case IRNodeKind::kRamp: return emit_ramp(e.as<Ramp>());
    case IRNodeKind::kBroadcast: {
      const Broadcast* op = e.as<Broadcast>();
      return splat(emit_expr(op->value), op->lanes);
    }
    case IRNodeKind::kLet: {
      const Let* op = e.as<Let>();
      fs_.vars[op->var.node()] = emit_expr(op->value);
      llvm::Value* v = emit_expr(op->body);
      fs_.vars.erase(op->var.node());
      return v;
    }
    case IRNodeKind::kTensorLoad:
    case IRNodeKind::kReduce:
      KILN_IFAIL() << "tensor-expression node " << node_kind_name(e.kind())
                   << " reached codegen (storage flattening removes it): " << to_string(e);
    default: break;
  }
  KILN_IFAIL() << "codegen: unhandled expression kind " << node_kind_name(e.kind());
}

}  // namespace kiln::codegen
