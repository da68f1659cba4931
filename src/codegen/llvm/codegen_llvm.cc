// CodeGenLLVM: statements — loops (serial, unrolled, vectorize requests, parallel via outlined
// closures), stores, conditionals and allocations — and the error paths. Kernels and their entry
// wrappers are in codegen_llvm_entry.cc, expressions in codegen_llvm_expr.cc, math intrinsics in
// codegen_llvm_math.cc. The convention is described in codegen_llvm.h and docs/codegen.md.
#include "codegen/llvm/codegen_llvm.h"

#include <functional>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Metadata.h>

#include "kiln/support/error.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/printer.h"

namespace kiln::codegen {

using namespace kiln::tir;  // NOLINT

namespace {

// Most iterations an `unrolled` loop of constant extent is copied out explicitly; longer ones
// get LLVM's unroll metadata instead.
constexpr int64_t kMaxExplicitUnroll = 64;
// Stack allocations above this many bytes go to the heap (a thread's stack is small).
constexpr int64_t kMaxStackBytes = 256 * 1024;

// Variables and buffers a statement uses (for the closure of a parallel loop), in first-use order.
class UseCollector : public IRVisitor {
 public:
  std::vector<const Variable*> vars;
  std::vector<const BufferNode*> buffers;

 protected:
  void visit(const Variable* op) override { add(vars, op); }
  void visit(const Load* op) override {
    add(buffers, op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Store* op) override {
    add(buffers, op->buffer.get());
    IRVisitor::visit(op);
  }

 private:
  template <typename T>
  static void add(std::vector<T>& list, T item) {
    for (T x : list) {
      if (x == item) return;
    }
    list.push_back(item);
  }
};

}  // namespace

CodeGenLLVM::CodeGenLLVM(LLVMModule::Impl& module, const CodegenOptions& options)
    : module_(module),
      options_(options),
      ctx_(*module.context),
      llmod_(*module.module),
      builder_(*module.context) {
  dltensor_type_ = llvm::StructType::getTypeByName(ctx_, "DLTensor");
  if (dltensor_type_ == nullptr) {
    // { data, device {type, id}, ndim, dtype {code, bits, lanes}, shape, strides, byte_offset }
    llvm::Type* i8 = builder_.getInt8Ty();
    llvm::Type* i16 = builder_.getInt16Ty();
    llvm::Type* i32 = builder_.getInt32Ty();
    llvm::Type* ptr = builder_.getPtrTy();
    dltensor_type_ = llvm::StructType::create(
        ctx_,
        {ptr, llvm::StructType::get(ctx_, {i32, i32}), i32, llvm::StructType::get(ctx_, {i8, i8, i16}),
         ptr, ptr, builder_.getInt64Ty()},
        "DLTensor");
  }
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);  // a*b+c may become an FMA (docs/tir.md); nothing else
  builder_.setFastMathFlags(fmf);
}

void CodeGenLLVM::set_function_attributes(llvm::Function* fn) {
  const Target& t = module_.target;
  fn->addFnAttr("target-cpu", t.cpu);
  if (!t.features.empty()) fn->addFnAttr("target-features", t.features);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  if (t.is_x86_64()) {
    // Use the full register width the target has (LLVM otherwise prefers 256 bits on some CPUs).
    fn->addFnAttr("prefer-vector-width", std::to_string(t.vector_bits));
    fn->addFnAttr("min-legal-vector-width", std::to_string(t.vector_bits));
  }
}

llvm::BasicBlock* CodeGenLLVM::fail_block() {
  if (fs_.fail_block == nullptr) {
    llvm::IRBuilderBase::InsertPointGuard guard(builder_);
    fs_.fail_block = llvm::BasicBlock::Create(ctx_, "fail", fs_.function);
    builder_.SetInsertPoint(fs_.fail_block);
    builder_.CreateRet(builder_.getInt32(-1));
  }
  return fs_.fail_block;
}

void CodeGenLLVM::free_live_heap_and_fail() {
  for (auto it = fs_.live_heap.rbegin(); it != fs_.live_heap.rend(); ++it) {
    builder_.CreateCall(runtime_function("free"), {*it});
  }
  builder_.CreateBr(fail_block());
}

llvm::FunctionCallee CodeGenLLVM::runtime_function(const char* name) {
  llvm::Module& m = llmod_;
  llvm::IRBuilder<>& b = builder_;
  llvm::Type* ptr = b.getPtrTy();
  if (std::string_view(name) == "kiln_set_last_error") {
    return m.getOrInsertFunction(name, llvm::FunctionType::get(b.getVoidTy(), {ptr}, false));
  }
  if (std::string_view(name) == "kiln_parallel_for") {
    return m.getOrInsertFunction(
        name, llvm::FunctionType::get(b.getInt32Ty(), {ptr, ptr, b.getInt64Ty()}, false));
  }
  if (std::string_view(name) == "aligned_alloc") {
    return m.getOrInsertFunction(
        name, llvm::FunctionType::get(ptr, {b.getInt64Ty(), b.getInt64Ty()}, false));
  }
  if (std::string_view(name) == "free") {
    return m.getOrInsertFunction(name, llvm::FunctionType::get(b.getVoidTy(), {ptr}, false));
  }
  KILN_IFAIL() << "unknown runtime function " << name;
}

namespace {

llvm::MDNode* loop_metadata(llvm::LLVMContext& ctx, std::vector<llvm::Metadata*> properties) {
  std::vector<llvm::Metadata*> ops{nullptr};
  for (llvm::Metadata* p : properties) ops.push_back(p);
  llvm::MDNode* node = llvm::MDNode::getDistinct(ctx, ops);
  node->replaceOperandWith(0, node);
  return node;
}

}  // namespace

// ---- statements ----------------------------------------------------------------------------------

void CodeGenLLVM::emit_stmt(const Stmt& s) {
  KILN_ICHECK(s.defined()) << "undefined statement in " << kernel_name_;
  switch (s.kind()) {
    case IRNodeKind::kFor: return emit_for(s.as<For>());
    case IRNodeKind::kStore: return emit_store(s.as<Store>());
    case IRNodeKind::kLetStmt: {
      const LetStmt* op = s.as<LetStmt>();
      fs_.vars[op->var.node()] = emit_expr(op->value);
      emit_stmt(op->body);
      fs_.vars.erase(op->var.node());
      return;
    }
    case IRNodeKind::kIfThenElse: return emit_if(s.as<IfThenElse>());
    case IRNodeKind::kAllocate: return emit_allocate(s.as<Allocate>());
    case IRNodeKind::kBlock:
      for (const Stmt& child : s.as<Block>()->stmts) emit_stmt(child);
      return;
    case IRNodeKind::kEvaluate:
      if (!is_const(s.as<Evaluate>()->value)) emit_expr(s.as<Evaluate>()->value);
      return;
    case IRNodeKind::kProducerStore:
    case IRNodeKind::kProducerRealize:
      KILN_IFAIL() << "tensor-expression node " << node_kind_name(s.kind())
                   << " reached codegen (storage flattening removes it):\n" << to_string(s);
    default: break;
  }
  KILN_IFAIL() << "codegen: unhandled statement kind " << node_kind_name(s.kind());
}

// for (v = begin; v < end; ++v) body(v), with optional loop metadata on the back edge.
static void counted_loop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end,
                         const std::function<void(llvm::Value*)>& body, llvm::MDNode* md) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "loop.exit", fn);
  b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* iv = b.CreatePHI(begin->getType(), 2, "i");
  iv->addIncoming(begin, pre);
  body(iv);
  llvm::Value* next = b.CreateAdd(iv, llvm::ConstantInt::get(begin->getType(), 1), "i.next",
                                  /*HasNUW=*/false, /*HasNSW=*/true);
  llvm::BranchInst* back = b.CreateCondBr(b.CreateICmpSLT(next, end), loop, exit);
  if (md != nullptr) back->setMetadata(llvm::LLVMContext::MD_loop, md);
  iv->addIncoming(next, b.GetInsertBlock());
  b.SetInsertPoint(exit);
}

void CodeGenLLVM::emit_serial_loop(const Var& var, llvm::Value* min, llvm::Value* extent,
                                   const Stmt& body, ForKind kind) {
  llvm::MDNode* md = nullptr;
  if (kind == ForKind::kUnrolled) {
    md = loop_metadata(ctx_, {llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.full")})});
  } else if (kind == ForKind::kVectorized) {
    // A vectorize request lowering could not carry out: ask LLVM's loop vectorizer instead.
    std::vector<llvm::Metadata*> props{llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
               llvm::ConstantAsMetadata::get(builder_.getTrue())})};
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(extent); c != nullptr && c->getSExtValue() > 1 &&
                                                              c->getSExtValue() <= 64) {
      props.push_back(llvm::MDNode::get(
          ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
                 llvm::ConstantAsMetadata::get(builder_.getInt32(static_cast<uint32_t>(c->getSExtValue())))}));
    }
    md = loop_metadata(ctx_, props);
  }
  llvm::Value* end = builder_.CreateAdd(min, extent, "end", false, true);
  counted_loop(builder_, min, end, [&](llvm::Value* iv) {
    fs_.vars[var.node()] = iv;
    emit_stmt(body);
    fs_.vars.erase(var.node());
  }, md);
}

void CodeGenLLVM::emit_for(const For* op) {
  if (op->kind == ForKind::kParallel) return emit_parallel_for(op);
  llvm::Value* min = emit_expr(op->min);
  llvm::Value* extent = emit_expr(op->extent);
  int64_t n = 0;
  if (op->kind == ForKind::kUnrolled && as_const_int(op->extent, &n) && n <= kMaxExplicitUnroll) {
    // Explicit copies of the body, the loop variable a constant offset from min in each.
    for (int64_t k = 0; k < n; ++k) {
      fs_.vars[op->loop_var.node()] =
          builder_.CreateAdd(min, llvm::ConstantInt::get(min->getType(), k), "", false, true);
      emit_stmt(op->body);
    }
    fs_.vars.erase(op->loop_var.node());
    return;
  }
  emit_serial_loop(op->loop_var, min, extent, op->body, op->kind);
}

void CodeGenLLVM::emit_parallel_for(const For* op) {
  KILN_ICHECK(op->loop_var.type().is_int()) << "parallel loop variable of type "
                                            << op->loop_var.type().to_string();
  llvm::Value* min = emit_expr(op->min);
  llvm::Value* extent = emit_expr(op->extent);

  // What the body captures: the buffers and variables of the enclosing function it uses.
  UseCollector uses;
  uses.visit_stmt(op->body);
  std::vector<const BufferNode*> buffers;
  std::vector<const Variable*> vars;
  for (const BufferNode* b : uses.buffers) {
    if (fs_.buffers.count(b)) buffers.push_back(b);
  }
  for (const Variable* v : uses.vars) {
    if (fs_.vars.count(v)) vars.push_back(v);
  }

  const std::string base = kernel_name_ + "_par" + std::to_string(parallel_count_++);
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::Type* ptr = builder_.getPtrTy();
  // Closure: { buffer pointers..., captured values..., loop min }.
  std::vector<llvm::Type*> fields(buffers.size(), ptr);
  for (const Variable* v : vars) fields.push_back(fs_.vars.at(v)->getType());
  fields.push_back(min->getType());
  llvm::StructType* closure_type = llvm::StructType::create(ctx_, fields, base + "_closure");

  // f_par<k>_compute(begin, end, noalias buffers..., values..., min)
  std::vector<llvm::Type*> params{i64, i64};
  params.insert(params.end(), fields.begin(), fields.end());
  llvm::Function* compute = llvm::Function::Create(
      llvm::FunctionType::get(builder_.getInt32Ty(), params, false),
      llvm::GlobalValue::InternalLinkage, base + "_compute", llmod_);
  set_function_attributes(compute);
  for (size_t i = 0; i < buffers.size(); ++i) {
    compute->addParamAttr(static_cast<unsigned>(2 + i), llvm::Attribute::NoAlias);
  }
  {
    FunctionState saved = std::move(fs_);
    llvm::IRBuilderBase::InsertPointGuard guard(builder_);
    fs_ = FunctionState{};
    fs_.function = compute;
    builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", compute));
    auto arg = compute->arg_begin();
    llvm::Value* begin = &*arg++;
    llvm::Value* end = &*arg++;
    for (const BufferNode* b : buffers) fs_.buffers[b] = &*arg++;
    for (const Variable* v : vars) fs_.vars[v] = &*arg++;
    llvm::Value* loop_min = &*arg++;
    counted_loop(builder_, begin, end, [&](llvm::Value* j) {
      llvm::Value* jv = builder_.CreateIntCast(j, loop_min->getType(), true);
      fs_.vars[op->loop_var.node()] = builder_.CreateAdd(loop_min, jv, "", false, true);
      emit_stmt(op->body);
    }, nullptr);
    builder_.CreateRet(builder_.getInt32(0));
    fs_ = std::move(saved);
  }

  // f_par<k>(begin, end, closure): the kiln_parallel_body.
  llvm::Function* body = llvm::Function::Create(
      llvm::FunctionType::get(builder_.getInt32Ty(), {i64, i64, ptr}, false),
      llvm::GlobalValue::InternalLinkage, base, llmod_);
  set_function_attributes(body);
  {
    llvm::IRBuilderBase::InsertPointGuard guard(builder_);
    builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body));
    auto arg = body->arg_begin();
    std::vector<llvm::Value*> call_args{&*arg, &*(arg + 1)};
    llvm::Value* cl = &*(arg + 2);
    for (unsigned i = 0; i < fields.size(); ++i) {
      call_args.push_back(
          builder_.CreateLoad(fields[i], builder_.CreateStructGEP(closure_type, cl, i)));
    }
    builder_.CreateRet(builder_.CreateCall(compute, call_args));
  }

  // In the enclosing function: pack the closure on the stack and run the loop.
  llvm::Value* cl = nullptr;
  {
    llvm::IRBuilderBase::InsertPointGuard guard(builder_);
    llvm::BasicBlock& entry = fs_.function->getEntryBlock();
    builder_.SetInsertPoint(&entry, entry.getFirstInsertionPt());
    cl = builder_.CreateAlloca(closure_type, nullptr, base + "_closure");
  }
  unsigned field = 0;
  for (const BufferNode* b : buffers) {
    builder_.CreateStore(fs_.buffers.at(b), builder_.CreateStructGEP(closure_type, cl, field++));
  }
  for (const Variable* v : vars) {
    builder_.CreateStore(fs_.vars.at(v), builder_.CreateStructGEP(closure_type, cl, field++));
  }
  builder_.CreateStore(min, builder_.CreateStructGEP(closure_type, cl, field++));
  llvm::Value* n = builder_.CreateIntCast(extent, i64, true);
  llvm::Value* rc = builder_.CreateCall(runtime_function("kiln_parallel_for"),
                                        {body, cl, n});
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_, "parallel.ok", fs_.function);
  llvm::BasicBlock* failed = llvm::BasicBlock::Create(ctx_, "parallel.failed", fs_.function);
  builder_.CreateCondBr(builder_.CreateICmpEQ(rc, builder_.getInt32(0)), ok, failed);
  builder_.SetInsertPoint(failed);
  free_live_heap_and_fail();
  builder_.SetInsertPoint(ok);
}

void CodeGenLLVM::emit_store(const Store* op) {
  llvm::Value* value = emit_expr(op->value);
  const Type t = op->value.type();
  bool contiguous = false, uniform = false;
  llvm::Value* addr = element_address(op->buffer, op->index, &contiguous, &uniform);
  llvm::Type* elem = storage_type(op->buffer->dtype);
  if (t.is_bool()) {
    value = builder_.CreateZExt(value, t.lanes > 1 ? llvm::FixedVectorType::get(elem, t.lanes) : elem);
  } else if (t.dtype == DType::kF16 || t.dtype == DType::kBF16) {
    value = f32_to_half_bits(value, t.dtype);  // round to nearest even on the way to memory
  }
  const llvm::Align align(std::max<unsigned>(1, t.bits() / 8));
  if (t.lanes == 1 || contiguous) {
    builder_.CreateAlignedStore(value, addr, align);
  } else if (uniform) {
    // Every lane writes one element: the last lane's value is the one that remains.
    builder_.CreateAlignedStore(builder_.CreateExtractElement(value, t.lanes - 1), addr, align);
  } else if (llvm::Value* first = strided_first_address(op->buffer, op->index)) {
    // A constant-stride ramp: one scalar store per lane at a constant offset (see emit_load).
    const int64_t stride = op->index.as<tir::Ramp>()->stride.as<tir::IntImm>()->value;
    for (int k = 0; k < t.lanes; ++k) {
      llvm::Value* at = builder_.CreateInBoundsGEP(elem, first, builder_.getInt64(k * stride));
      builder_.CreateAlignedStore(builder_.CreateExtractElement(value, builder_.getInt64(k)), at, align);
    }
  } else {
    builder_.CreateMaskedScatter(value, addr, align);
  }
}

void CodeGenLLVM::emit_if(const IfThenElse* op) {
  llvm::Value* cond = emit_expr(op->condition);
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "then", fs_.function);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "endif", fs_.function);
  llvm::BasicBlock* else_bb = op->else_case.defined()
                                  ? llvm::BasicBlock::Create(ctx_, "else", fs_.function)
                                  : merge;
  builder_.CreateCondBr(cond, then_bb, else_bb);
  builder_.SetInsertPoint(then_bb);
  emit_stmt(op->then_case);
  builder_.CreateBr(merge);
  if (op->else_case.defined()) {
    builder_.SetInsertPoint(else_bb);
    emit_stmt(op->else_case);
    builder_.CreateBr(merge);
  }
  builder_.SetInsertPoint(merge);
}

void CodeGenLLVM::emit_allocate(const Allocate* op) {
  const BufferNode* b = op->buffer.get();
  llvm::Type* elem = storage_type(b->dtype);
  const int64_t numel = b->numel();
  const int64_t bytes = numel * static_cast<int64_t>(llmod_.getDataLayout().getTypeAllocSize(elem));
  const int alignment = std::max(op->alignment, 1);
  if (op->scope == MemoryScope::kStack && bytes <= kMaxStackBytes) {
    llvm::IRBuilderBase::InsertPointGuard guard(builder_);
    llvm::BasicBlock& entry = fs_.function->getEntryBlock();
    builder_.SetInsertPoint(&entry, entry.getFirstInsertionPt());
    llvm::AllocaInst* a = builder_.CreateAlloca(llvm::ArrayType::get(elem, static_cast<uint64_t>(numel)),
                                                nullptr, b->name);
    a->setAlignment(llvm::Align(static_cast<uint64_t>(alignment)));
    fs_.buffers[b] = a;
  } else {
    // Heap: aligned_alloc (size rounded up to the alignment, as C requires), freed after body.
    const int64_t rounded = (bytes + alignment - 1) / alignment * alignment;
    llvm::Value* p = builder_.CreateCall(runtime_function("aligned_alloc"),
                                         {const_i64(alignment), const_i64(std::max<int64_t>(rounded, alignment))},
                                         b->name);
    llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_, "alloc.ok", fs_.function);
    llvm::BasicBlock* oom = llvm::BasicBlock::Create(ctx_, "alloc.oom", fs_.function);
    builder_.CreateCondBr(builder_.CreateIsNull(p), oom, ok);
    builder_.SetInsertPoint(oom);
    builder_.CreateCall(runtime_function("kiln_set_last_error"),
                        {builder_.CreateGlobalStringPtr("kernel '" + kernel_name_ + "': out of memory allocating " +
                                                        std::to_string(rounded) + " bytes for buffer '" +
                                                        b->name + "'")});
    free_live_heap_and_fail();
    builder_.SetInsertPoint(ok);
    llvm::cast<llvm::CallInst>(p)->addRetAttr(
        llvm::Attribute::getWithAlignment(ctx_, llvm::Align(static_cast<uint64_t>(alignment))));
    fs_.buffers[b] = p;
    fs_.live_heap.push_back(p);
    emit_stmt(op->body);
    fs_.live_heap.pop_back();
    builder_.CreateCall(runtime_function("free"), {p});
    fs_.buffers.erase(b);
    return;
  }
  emit_stmt(op->body);
  fs_.buffers.erase(b);
}

}  // namespace kiln::codegen
