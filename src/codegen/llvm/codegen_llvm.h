// Loop IR (kiln::tir PrimFunc) → LLVM IR. One CodeGenLLVM adds kernels to one LLVMModule.
//
// For each PrimFunc `f` it emits (docs/codegen.md has the full convention):
//   - `f_compute(ptr noalias [align 64] p0, ...)`: internal; the loop nest over the buffers;
//   - `f(const DLTensor* args, int32_t num_args)`: the exported entry. It checks num_args and each
//     argument's ndim, dtype, shape, compactness (and alignment when assumed), sets the last error
//     and returns -1 on a mismatch, else calls f_compute with data + byte_offset of each argument.
//     After inlining, the noalias parameters become alias scopes on every load and store.
//   - per parallel loop: `f_par<k>(i64 begin, i64 end, ptr closure)` (the kiln_parallel_body
//     given to kiln_parallel_for) which unpacks the closure struct and calls
//     `f_par<k>_compute(begin, end, noalias buffers..., captured scalars...)`.
// Expressions follow the contract of docs/tir.md: index math `nsw`, floats IEEE with contraction
// allowed (`contract` flags), floor division/modulo, explicit vector loads/stores for stride-1
// Ramp indices, gathers/scatters otherwise.
#ifndef KILN_SRC_CODEGEN_LLVM_CODEGEN_LLVM_H_
#define KILN_SRC_CODEGEN_LLVM_CODEGEN_LLVM_H_

#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "codegen/llvm/llvm_module_impl.h"
#include "kiln/tir/stmt.h"

// Internal to libkiln: LLVM types appear in these signatures, so keep every symbol hidden
// (tests/build checks that libkiln exports no llvm:: symbol).
#pragma GCC visibility push(hidden)

namespace kiln::codegen {
namespace llvm_detail {

// `scalar` with the lane count of `like` (a vector type or a scalar).
inline llvm::Type* like_lanes(llvm::Type* scalar, llvm::Type* like) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like)) return llvm::FixedVectorType::get(scalar, vt->getNumElements());
  return scalar;
}

}  // namespace llvm_detail

class CodeGenLLVM {
 public:
  explicit CodeGenLLVM(LLVMModule::Impl& module, const CodegenOptions& options);
  void add_function(const tir::PrimFunc& func);

  // ---- expressions (codegen_llvm_expr.cc) ----
  llvm::Value* emit_expr(const tir::Expr& e);

 private:
  // State of the function being emitted (a compute function or an outlined parallel body).
  struct FunctionState {
    llvm::Function* function = nullptr;
    llvm::BasicBlock* fail_block = nullptr;  // returns -1 (the last error is already set)
    std::unordered_map<const tir::Variable*, llvm::Value*> vars;
    std::unordered_map<const tir::BufferNode*, llvm::Value*> buffers;
    std::vector<llvm::Value*> live_heap;  // heap allocations of enclosing Allocates, outermost first
  };

  // ---- types and helpers ----
  llvm::Type* llvm_type(const tir::Type& t);
  llvm::Type* storage_type(tir::DType d);  // in memory: bool is i8
  llvm::Value* splat(llvm::Value* v, int lanes);
  llvm::Value* const_i64(int64_t v);
  void set_function_attributes(llvm::Function* fn);
  llvm::BasicBlock* fail_block();
  // Declaration of a function generated code calls: kiln_set_last_error, kiln_parallel_for,
  // aligned_alloc, free.
  llvm::FunctionCallee runtime_function(const char* name);
  // Frees the heap buffers live at this point and branches to fail_block() (ends the block).
  void free_live_heap_and_fail();
  llvm::Value* buffer_pointer(const tir::Buffer& b);
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, const std::vector<llvm::Value*>& args);
  llvm::Value* libm_per_lane(const std::string& f32_name, const std::string& f64_name,
                             const std::vector<llvm::Value*>& args);

  // ---- expressions ----
  llvm::Value* emit_binary(const tir::Expr& e);
  llvm::Value* emit_compare(const tir::Expr& e);
  llvm::Value* emit_floor_divmod(const tir::Expr& e);
  llvm::Value* emit_cast(const tir::Cast* op);
  llvm::Value* emit_call(const tir::Call* op);
  // CallOp::kPrefetch: llvm.prefetch (read, high locality, data) of the element's address; the
  // address is formed without `inbounds` since the element may lie outside the buffer.
  llvm::Value* emit_prefetch(const tir::Call* op);
  llvm::Value* emit_math(tir::CallOp op, const std::vector<llvm::Value*>& args, const tir::Type& t);
  llvm::Value* emit_bit_op(tir::CallOp op, const std::vector<llvm::Value*>& args, const tir::Type& t);
  // acc + a byte dot product (codegen_llvm_dot.cc); acc may be null (zero).
  llvm::Value* emit_dot(const tir::Call* op, llvm::Value* acc);
  // `bounded`: the caller guarantees x in [-87.3, 88.7] or NaN (one power-of-two factor).
  llvm::Value* emit_exp_f32(llvm::Value* x, bool bounded = false);
  llvm::Value* emit_tanh_f32(llvm::Value* x);
  llvm::Value* emit_log_f32(llvm::Value* x);
  llvm::Value* emit_erf_f32(llvm::Value* x);
  // f16/bf16 live in f32 registers; these convert at loads, stores and casts.
  llvm::Value* f32_to_bf16_bits(llvm::Value* v);
  llvm::Value* half_bits_to_f32(llvm::Value* bits, tir::DType d);
  llvm::Value* f32_to_half_bits(llvm::Value* v, tir::DType d);
  llvm::Value* round_to_half(llvm::Value* v, tir::DType d);
  llvm::Value* emit_load(const tir::Load* op);
  llvm::Value* emit_ramp(const tir::Ramp* op);
  // Address(es) of element(s) `index`: a scalar pointer (scalar index, stride-1 Ramp: its first
  // element) or a vector of pointers (any other vector index). *contiguous tells which.
  llvm::Value* element_address(const tir::Buffer& b, const tir::Expr& index, bool* contiguous,
                               bool* uniform);
  // The scalar address of the first element of a vector index that is a Ramp with a constant
  // stride other than 1 (its lanes are then loaded/stored one by one at constant offsets), else
  // nullptr (emits nothing).
  llvm::Value* strided_first_address(const tir::Buffer& b, const tir::Expr& index);

  // ---- statements (codegen_llvm.cc) ----
  void emit_stmt(const tir::Stmt& s);
  void emit_for(const tir::For* op);
  void emit_serial_loop(const tir::Var& var, llvm::Value* min, llvm::Value* extent,
                        const tir::Stmt& body, tir::ForKind kind);
  void emit_parallel_for(const tir::For* op);
  void emit_store(const tir::Store* op);
  void emit_if(const tir::IfThenElse* op);
  void emit_allocate(const tir::Allocate* op);

  LLVMModule::Impl& module_;
  CodegenOptions options_;
  llvm::LLVMContext& ctx_;
  llvm::Module& llmod_;
  llvm::IRBuilder<> builder_;
  llvm::StructType* dltensor_type_ = nullptr;
  FunctionState fs_;
  std::string kernel_name_;
  int parallel_count_ = 0;
};

}  // namespace kiln::codegen

#pragma GCC visibility pop

#endif  // KILN_SRC_CODEGEN_LLVM_CODEGEN_LLVM_H_
