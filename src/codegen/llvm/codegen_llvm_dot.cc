// Byte dot products (CallOp kDot4U8S8, kDot4U8S8Narrow; contract in include/kiln/tir/expr.h):
// `acc + dot4(a, b)` on i32 lanes that hold 4 bytes each, lowered per target to the instruction
// that computes it in one or two steps. The result is always the exact sum (the narrow form only
// promises that its pairs of products fit in i16, which is what makes vpmaddubsw exact):
//   - AVX-512 VNNI (512-bit vectors) / AVX-VNNI or AVX-512 VNNI+VL: vpdpbusd (u8 x s8, exact);
//   - AVX2, narrow: vpmaddubsw (u8 x s8 pairs -> s16, saturating: never reached) + vpmaddwd by 1;
//   - AVX2, exact: a split into its low 7 bits and its top bit, two vpmaddubsw that cannot
//     saturate (|pair| <= 2*127*128 and 2*1*128), vpmaddwd by 1 and by 128;
//   - AArch64 +i8mm: usdot; +dotprod: sdot(a ^ 0x80, b) - sdot(0x80, b) (a - 128 is s8);
//   - anything else: widening multiplies and adds of 4-lane groups (LLVM picks the instructions).
// The 16-bit dot product (CallOp kDot2S16, two s16 halves per i32 lane; int8 Winograd):
//   - AVX-512 VNNI (512-bit vectors) / AVX-VNNI or AVX-512 VNNI+VL: vpdpwssd;
//   - AVX-512BW (512-bit vectors) / AVX2: vpmaddwd + vpaddd;
//   - anything else: widening multiplies of the halves and an add of the even and odd products.
// Vectors of any lane count are padded to whole chunks of the instruction's width.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/TargetParser/Triple.h>

#include "codegen/llvm/codegen_llvm.h"
#include "kiln/support/error.h"

namespace kiln::codegen {

using namespace tir;

namespace {

enum class DotLowering {
  kVnni512, kVnni256, kAvx2Narrow, kAvx2Exact, kNeonUsdot, kNeonSdot, kGeneric,
  kWssd512, kWssd256, kMaddwd512, kMaddwd256, kGeneric16
};

DotLowering choose_dot_lowering(const Target& t, CallOp op, int lanes) {
  const llvm::Triple triple(t.triple);
  if (op == CallOp::kDot2S16) {
    if (triple.getArch() == llvm::Triple::x86_64) {
      const bool wide = t.vector_bits >= 512 && lanes >= 16;
      if (t.has_feature("avx512vnni") && wide) return DotLowering::kWssd512;
      if (t.has_feature("avxvnni") || (t.has_feature("avx512vnni") && t.has_feature("avx512vl"))) return DotLowering::kWssd256;
      if (t.has_feature("avx512bw") && wide) return DotLowering::kMaddwd512;
      if (t.has_feature("avx2")) return DotLowering::kMaddwd256;
    }
    return DotLowering::kGeneric16;
  }
  if (triple.getArch() == llvm::Triple::x86_64) {
    if (t.has_feature("avx512vnni") && t.vector_bits >= 512 && lanes >= 16) return DotLowering::kVnni512;
    if (t.has_feature("avxvnni") || (t.has_feature("avx512vnni") && t.has_feature("avx512vl"))) return DotLowering::kVnni256;
    if (t.has_feature("avx2")) return op == CallOp::kDot4U8S8Narrow ? DotLowering::kAvx2Narrow : DotLowering::kAvx2Exact;
  }
  if (triple.getArch() == llvm::Triple::aarch64) {
    if (t.has_feature("i8mm")) return DotLowering::kNeonUsdot;
    if (t.has_feature("dotprod")) return DotLowering::kNeonSdot;
  }
  return DotLowering::kGeneric;
}

int chunk_lanes(DotLowering l) {
  switch (l) {
    case DotLowering::kVnni512:
    case DotLowering::kWssd512:
    case DotLowering::kMaddwd512: return 16;
    case DotLowering::kWssd256:
    case DotLowering::kMaddwd256:
    case DotLowering::kVnni256:
    case DotLowering::kAvx2Narrow:
    case DotLowering::kAvx2Exact: return 8;
    case DotLowering::kNeonUsdot:
    case DotLowering::kNeonSdot: return 4;
    case DotLowering::kGeneric:
    case DotLowering::kGeneric16: return 0;  // the whole vector at once
  }
  return 0;
}

}  // namespace

llvm::Value* CodeGenLLVM::emit_dot(const Call* op, llvm::Value* acc) {
  KILN_ICHECK(is_dot_op(op->op)) << "emit_dot of " << call_op_name(op->op);
  const int n = op->type.lanes;
  llvm::Type* i8 = builder_.getInt8Ty();
  llvm::Type* i16 = builder_.getInt16Ty();
  llvm::Type* i32 = builder_.getInt32Ty();
  auto vec = [](llvm::Type* e, int k) { return llvm::FixedVectorType::get(e, k); };
  auto as_vector = [&](llvm::Value* v) {
    return n == 1 ? builder_.CreateInsertElement(llvm::PoisonValue::get(vec(i32, 1)), v, uint64_t{0}) : v;
  };
  llvm::Value* a = as_vector(emit_expr(op->args[0]));
  llvm::Value* b = as_vector(emit_expr(op->args[1]));
  acc = acc ? as_vector(acc) : llvm::Constant::getNullValue(vec(i32, n));

  const DotLowering lowering = choose_dot_lowering(module_.target, op->op, n);
  const int chunk = chunk_lanes(lowering) > 0 ? chunk_lanes(lowering) : n;
  const int chunks = (n + chunk - 1) / chunk;
  // Lanes [c*chunk, (c+1)*chunk) of v, zeros past n.
  auto slice = [&](llvm::Value* v, int c) {
    llvm::SmallVector<int, 16> mask;
    for (int l = 0; l < chunk; ++l) mask.push_back(c * chunk + l < n ? c * chunk + l : n);
    return builder_.CreateShuffleVector(v, llvm::Constant::getNullValue(vec(i32, n)), mask);
  };
  auto splat_i32 = [&](uint32_t x) { return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(chunk), builder_.getInt32(x)); };
  auto splat_i16 = [&](int k, int16_t x) { return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(k), llvm::ConstantInt::get(i16, static_cast<uint64_t>(x), true)); };
  auto call = [&](llvm::Intrinsic::ID id, std::vector<llvm::Value*> args, std::vector<llvm::Type*> overloads = {}) {
    return builder_.CreateCall(llvm::Intrinsic::getDeclaration(&llmod_, id, overloads), args);
  };
  auto bytes = [&](llvm::Value* v) { return builder_.CreateBitCast(v, vec(i8, 4 * chunk)); };
  auto halves = [&](llvm::Value* v) { return builder_.CreateBitCast(v, vec(i16, 2 * chunk)); };
  // acc + the sums of each lane's `group` consecutive widened products (the generic lowerings).
  auto add_groups = [&](llvm::Value* acc_v, llvm::Value* prod, int group) {
    llvm::Value* s = acc_v;
    for (int j = 0; j < group; ++j) {
      llvm::SmallVector<int, 64> mask;
      for (int l = 0; l < chunk; ++l) mask.push_back(group * l + j);
      s = builder_.CreateAdd(s, builder_.CreateShuffleVector(prod, mask));
    }
    return s;
  };

  auto one_chunk = [&](llvm::Value* c_acc, llvm::Value* ca, llvm::Value* cb) -> llvm::Value* {
    switch (lowering) {
      case DotLowering::kVnni512: return call(llvm::Intrinsic::x86_avx512_vpdpbusd_512, {c_acc, ca, cb});
      case DotLowering::kVnni256: return call(llvm::Intrinsic::x86_avx512_vpdpbusd_256, {c_acc, ca, cb});
      case DotLowering::kAvx2Narrow: {
        llvm::Value* pairs = call(llvm::Intrinsic::x86_avx2_pmadd_ub_sw, {bytes(ca), bytes(cb)});
        return builder_.CreateAdd(c_acc, call(llvm::Intrinsic::x86_avx2_pmadd_wd, {pairs, splat_i16(16, 1)}));
      }
      case DotLowering::kAvx2Exact: {
        llvm::Value* low7 = builder_.CreateAnd(ca, splat_i32(0x7F7F7F7Fu));
        llvm::Value* top = builder_.CreateAnd(builder_.CreateLShr(ca, splat_i32(7)), splat_i32(0x01010101u));
        llvm::Value* p_low = call(llvm::Intrinsic::x86_avx2_pmadd_ub_sw, {bytes(low7), bytes(cb)});
        llvm::Value* p_top = call(llvm::Intrinsic::x86_avx2_pmadd_ub_sw, {bytes(top), bytes(cb)});
        llvm::Value* s = builder_.CreateAdd(call(llvm::Intrinsic::x86_avx2_pmadd_wd, {p_low, splat_i16(16, 1)}),
                                            call(llvm::Intrinsic::x86_avx2_pmadd_wd, {p_top, splat_i16(16, 128)}));
        return builder_.CreateAdd(c_acc, s);
      }
      case DotLowering::kNeonUsdot:
        return call(llvm::Intrinsic::aarch64_neon_usdot, {c_acc, bytes(ca), bytes(cb)}, {vec(i32, 4), vec(i8, 16)});
      case DotLowering::kNeonSdot: {
        // u8 a = (a - 128) + 128 with a - 128 = a ^ 0x80 as s8: sum a*b = sdot(a ^ 0x80, b) + 128 sum b.
        llvm::Value* shifted = builder_.CreateXor(ca, splat_i32(0x80808080u));
        llvm::Value* with_shift = call(llvm::Intrinsic::aarch64_neon_sdot, {c_acc, bytes(shifted), bytes(cb)}, {vec(i32, 4), vec(i8, 16)});
        llvm::Value* minus_128_sum_b = call(llvm::Intrinsic::aarch64_neon_sdot, {llvm::Constant::getNullValue(vec(i32, 4)), bytes(splat_i32(0x80808080u)), bytes(cb)}, {vec(i32, 4), vec(i8, 16)});
        return builder_.CreateSub(with_shift, minus_128_sum_b);
      }
      case DotLowering::kWssd512: return call(llvm::Intrinsic::x86_avx512_vpdpwssd_512, {c_acc, ca, cb});
      case DotLowering::kWssd256: return call(llvm::Intrinsic::x86_avx512_vpdpwssd_256, {c_acc, ca, cb});
      case DotLowering::kMaddwd512:
        return builder_.CreateAdd(c_acc, call(llvm::Intrinsic::x86_avx512_pmaddw_d_512, {halves(ca), halves(cb)}));
      case DotLowering::kMaddwd256:
        return builder_.CreateAdd(c_acc, call(llvm::Intrinsic::x86_avx2_pmadd_wd, {halves(ca), halves(cb)}));
      case DotLowering::kGeneric16:
        return add_groups(c_acc, builder_.CreateMul(builder_.CreateSExt(halves(ca), vec(i32, 2 * chunk)),
                                                    builder_.CreateSExt(halves(cb), vec(i32, 2 * chunk))), 2);
      case DotLowering::kGeneric:
        return add_groups(c_acc, builder_.CreateMul(builder_.CreateZExt(bytes(ca), vec(i32, 4 * chunk)),
                                                    builder_.CreateSExt(bytes(cb), vec(i32, 4 * chunk))), 4);
    }
    KILN_IFAIL() << "unhandled dot lowering";
  };

  llvm::Value* result = nullptr;
  if (chunks == 1 && chunk == n) {
    result = one_chunk(acc, a, b);
  } else {
    std::vector<llvm::Value*> parts;
    for (int c = 0; c < chunks; ++c) parts.push_back(one_chunk(slice(acc, c), slice(a, c), slice(b, c)));
    // Concatenate the chunks and keep the first n lanes.
    llvm::SmallVector<int, 64> mask;
    for (int l = 0; l < n; ++l) mask.push_back(l);
    while (parts.size() > 1) {
      std::vector<llvm::Value*> next;
      for (size_t i = 0; i + 1 < parts.size(); i += 2) {
        const int k = static_cast<int>(llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements());
        llvm::SmallVector<int, 64> cat;
        for (int l = 0; l < 2 * k; ++l) cat.push_back(l);
        next.push_back(builder_.CreateShuffleVector(parts[i], parts[i + 1], cat));
      }
      if (parts.size() % 2 == 1) {
        // Pad the odd one out with a zero chunk of its width so widths stay equal.
        llvm::Value* last = parts.back();
        const int k = static_cast<int>(llvm::cast<llvm::FixedVectorType>(last->getType())->getNumElements());
        llvm::SmallVector<int, 64> cat;
        for (int l = 0; l < 2 * k; ++l) cat.push_back(l);
        next.push_back(builder_.CreateShuffleVector(last, llvm::Constant::getNullValue(last->getType()), cat));
      }
      parts = std::move(next);
    }
    result = builder_.CreateShuffleVector(parts[0], mask);
  }
  return n == 1 ? builder_.CreateExtractElement(result, uint64_t{0}) : result;
}

}  // namespace kiln::codegen
