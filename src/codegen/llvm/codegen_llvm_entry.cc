// CodeGenLLVM: one kernel per PrimFunc. The loop nest goes into an internal `f_compute` whose
// buffer parameters are noalias (and 64-byte aligned unless told otherwise); the exported entry
// `int32_t f(const DLTensor* args, int32_t num_args)` checks every argument against the
// PrimFunc's params, reports a mismatch through kiln_set_last_error, and calls f_compute with
// data + byte_offset of each tensor (docs/codegen.md, "Kernel calling convention").
#include <llvm/IR/Constants.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/llvm/codegen_llvm.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/verify.h"

namespace kiln::codegen {

using namespace kiln::tir;  // NOLINT

namespace {

// DLPack type code and bits of a dtype.
std::pair<int, int> dlpack_type(DType d) {
  switch (d) {
    case DType::kF32: return {kDLFloat, 32};
    case DType::kF64: return {kDLFloat, 64};
    case DType::kF16: return {kDLFloat, 16};
    case DType::kBF16: return {kDLBfloat, 16};
    case DType::kI8: return {kDLInt, 8};
    case DType::kU8: return {kDLUInt, 8};
    case DType::kI16: return {kDLInt, 16};
    case DType::kI32: return {kDLInt, 32};
    case DType::kI64: return {kDLInt, 64};
    case DType::kU16: return {kDLUInt, 16};
    case DType::kU32: return {kDLUInt, 32};
    case DType::kU64: return {kDLUInt, 64};
    case DType::kBool: return {kDLUInt, 8};  // DLPack 0.6 has no bool code; 6 (kDLBool) accepted too
  }
  return {0, 0};
}

}  // namespace

// ---- kernels ---------------------------------------------------------------------------------------

void CodeGenLLVM::add_function(const PrimFunc& func) {
  KILN_ICHECK(func.defined() && func->body.defined()) << "undefined PrimFunc";
  verify(func);  // the loop-IR contract (docs/tir.md) holds, or an InternalError names the node
  kernel_name_ = func->name;
  module_.add_kernel_name(func->name);
  KILN_LOG(codegen, kDebug) << "loop IR of kernel " << func->name << ":\n" << to_string(func);
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Type* i32 = builder_.getInt32Ty();
  const size_t nparams = func->params.size();

  // f_compute(noalias [align 64] buffer pointers...)
  llvm::Function* compute = llvm::Function::Create(
      llvm::FunctionType::get(i32, std::vector<llvm::Type*>(nparams, ptr), false),
      llvm::GlobalValue::InternalLinkage, func->name + "_compute", llmod_);
  set_function_attributes(compute);
  fs_ = FunctionState{};
  fs_.function = compute;
  for (unsigned i = 0; i < nparams; ++i) {
    compute->addParamAttr(i, llvm::Attribute::NoAlias);
    if (options_.assume_aligned_args) {
      compute->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    }
    compute->getArg(i)->setName(func->params[i]->name);
    fs_.buffers[func->params[i].get()] = compute->getArg(i);
  }
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", compute));
  emit_stmt(func->body);
  builder_.CreateRet(builder_.getInt32(0));
  fs_ = FunctionState{};

  // f(const DLTensor* args, int32_t num_args): checks every argument, then calls f_compute.
  llvm::Function* entry = llvm::Function::Create(
      llvm::FunctionType::get(i32, {ptr, i32}, false), llvm::GlobalValue::ExternalLinkage,
      func->name, llmod_);
  set_function_attributes(entry);
  entry->addParamAttr(0, llvm::Attribute::NoAlias);
  entry->addParamAttr(0, llvm::Attribute::ReadOnly);
  llvm::Value* args = entry->getArg(0);
  args->setName("args");
  entry->getArg(1)->setName("num_args");
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", entry));
  llvm::FunctionCallee set_error = runtime_function("kiln_set_last_error");
  auto check = [&](llvm::Value* ok, const std::string& message) {
    llvm::BasicBlock* pass = llvm::BasicBlock::Create(ctx_, "check.ok", entry);
    llvm::BasicBlock* fail = llvm::BasicBlock::Create(ctx_, "check.fail", entry);
    builder_.CreateCondBr(ok, pass, fail, llvm::MDBuilder(ctx_).createLikelyBranchWeights());
    builder_.SetInsertPoint(fail);
    builder_.CreateCall(set_error, {builder_.CreateGlobalStringPtr(message)});
    builder_.CreateRet(builder_.getInt32(-1));
    builder_.SetInsertPoint(pass);
  };
  check(builder_.CreateICmpEQ(entry->getArg(1), builder_.getInt32(static_cast<uint32_t>(nparams))),
        "kernel '" + func->name + "': expected " + std::to_string(nparams) + " tensor arguments");
  std::vector<llvm::Value*> pointers;
  for (unsigned k = 0; k < nparams; ++k) {
    const BufferNode* b = func->params[k].get();
    llvm::Value* t = builder_.CreateInBoundsGEP(dltensor_type_, args, builder_.getInt64(k));
    auto field = [&](unsigned i, llvm::Type* ty) {
      return builder_.CreateLoad(ty, builder_.CreateStructGEP(dltensor_type_, t, i));
    };
    std::string shape_text;
    for (int64_t d : b->shape) shape_text += (shape_text.empty() ? "" : ", ") + std::to_string(d);
    const std::string message = "kernel '" + func->name + "': argument " + std::to_string(k) +
                                " ('" + b->name + "') must be a C-contiguous CPU tensor of " +
                                dtype_name(b->dtype) + "[" + shape_text + "]" +
                                (options_.assume_aligned_args ? " with 64-byte aligned data" : "");
    const auto [code, bits] = dlpack_type(b->dtype);
    llvm::Value* device = builder_.CreateExtractValue(field(1, llvm::StructType::get(ctx_, {i32, i32})), 0);
    llvm::Value* dtype = field(3, llvm::StructType::get(ctx_, {builder_.getInt8Ty(), builder_.getInt8Ty(), builder_.getInt16Ty()}));
    llvm::Value* dcode = builder_.CreateExtractValue(dtype, 0);
    llvm::Value* ok = builder_.CreateICmpEQ(device, builder_.getInt32(kDLCPU));
    ok = builder_.CreateAnd(ok, builder_.CreateICmpEQ(field(2, i32), builder_.getInt32(static_cast<uint32_t>(b->shape.size()))));
    llvm::Value* code_ok = builder_.CreateICmpEQ(dcode, builder_.getInt8(static_cast<uint8_t>(code)));
    if (b->dtype == DType::kBool) code_ok = builder_.CreateOr(code_ok, builder_.CreateICmpEQ(dcode, builder_.getInt8(6)));
    ok = builder_.CreateAnd(ok, code_ok);
    ok = builder_.CreateAnd(ok, builder_.CreateICmpEQ(builder_.CreateExtractValue(dtype, 1), builder_.getInt8(static_cast<uint8_t>(bits))));
    ok = builder_.CreateAnd(ok, builder_.CreateICmpEQ(builder_.CreateExtractValue(dtype, 2), builder_.getInt16(1)));
    check(ok, message);
    // Shape (only read once ndim is known to match) and strides (NULL or compact; the stride of a
    // dimension of size 1 does not matter).
    if (!b->shape.empty()) {
      llvm::Value* shape = field(4, ptr);
      llvm::Value* strides = field(5, ptr);
      llvm::Value* sok = builder_.getTrue();
      for (size_t d = 0; d < b->shape.size(); ++d) {
        llvm::Value* dim = builder_.CreateLoad(builder_.getInt64Ty(), builder_.CreateInBoundsGEP(builder_.getInt64Ty(), shape, builder_.getInt64(d)));
        sok = builder_.CreateAnd(sok, builder_.CreateICmpEQ(dim, const_i64(b->shape[d])));
      }
      check(sok, message);
      // Strides are read only when the pointer is not NULL.
      llvm::BasicBlock* read = llvm::BasicBlock::Create(ctx_, "strides", entry);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "strides.done", entry);
      llvm::BasicBlock* before = builder_.GetInsertBlock();
      builder_.CreateCondBr(builder_.CreateIsNull(strides), done, read);
      builder_.SetInsertPoint(read);
      llvm::Value* rok = builder_.getTrue();
      int64_t compact = 1;
      for (int d = static_cast<int>(b->shape.size()) - 1; d >= 0; --d) {
        if (b->shape[d] != 1) {
          llvm::Value* st = builder_.CreateLoad(builder_.getInt64Ty(), builder_.CreateInBoundsGEP(builder_.getInt64Ty(), strides, builder_.getInt64(d)));
          rok = builder_.CreateAnd(rok, builder_.CreateICmpEQ(st, const_i64(compact)));
        }
        compact *= b->shape[d];
      }
      llvm::BasicBlock* read_end = builder_.GetInsertBlock();
      builder_.CreateBr(done);
      builder_.SetInsertPoint(done);
      llvm::PHINode* phi = builder_.CreatePHI(builder_.getInt1Ty(), 2);
      phi->addIncoming(builder_.getTrue(), before);
      phi->addIncoming(rok, read_end);
      check(phi, message);
    }
    llvm::Value* data = builder_.CreateInBoundsGEP(builder_.getInt8Ty(), field(0, ptr), field(6, builder_.getInt64Ty()));
    if (options_.assume_aligned_args) {
      llvm::Value* low = builder_.CreateAnd(builder_.CreatePtrToInt(data, builder_.getInt64Ty()), const_i64(63));
      check(builder_.CreateICmpEQ(low, const_i64(0)), message);
    }
    pointers.push_back(data);
  }
  builder_.CreateRet(builder_.CreateCall(compute, pointers));
}

// ---- LLVMModule entry point -------------------------------------------------------------------------

void LLVMModule::add_prim_func(const tir::PrimFunc& func, const CodegenOptions& options) {
  KILN_ICHECK(!impl_->optimized) << "add_prim_func after optimize()";
  CodeGenLLVM codegen(*impl_, options);
  codegen.add_function(func);
}

}  // namespace kiln::codegen
