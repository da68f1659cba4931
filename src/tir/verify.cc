// The loop-IR contract checker (see verify.h).
#include "kiln/tir/verify.h"

#include <set>

#include "kiln/support/error.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

class Verifier : public IRVisitor {
 public:
  explicit Verifier(const PrimFunc& f) : func_(f->name) {
    for (const Buffer& b : f->params) buffers_.insert(b.get());
  }

 protected:
  void fail_te(const char* kind) { KILN_IFAIL() << "kernel '" << func_ << "': TE-level node " << kind << " after lowering"; }
  void visit(const TensorLoad*) override { fail_te("TensorLoad"); }
  void visit(const Reduce*) override { fail_te("Reduce"); }
  void visit(const ProducerStore*) override { fail_te("ProducerStore"); }
  void visit(const ProducerRealize*) override { fail_te("ProducerRealize"); }

  void visit(const Variable* op) override {
    KILN_ICHECK(vars_.count(op)) << "kernel '" << func_ << "': variable '" << op->name << "' used outside its binding";
  }
  void check_buffer(const Buffer& b) {
    KILN_ICHECK(buffers_.count(b.get())) << "kernel '" << func_ << "': buffer '" << b->name
                                         << "' is neither a parameter nor allocated in scope";
  }
  void visit(const Load* op) override {
    check_buffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const Store* op) override {
    check_buffer(op->buffer);
    IRVisitor::visit(op);
  }
  void bind(const Variable* v) {
    KILN_ICHECK(vars_.insert(v).second) << "kernel '" << func_ << "': variable '" << v->name
                                        << "' bound again inside its own scope";
  }
  void visit(const Let* op) override {
    visit_expr(op->value);
    bind(op->var.node());
    visit_expr(op->body);
    vars_.erase(op->var.node());
  }
  void visit(const LetStmt* op) override {
    visit_expr(op->value);
    bind(op->var.node());
    visit_stmt(op->body);
    vars_.erase(op->var.node());
  }
  void visit(const For* op) override {
    visit_expr(op->min);
    visit_expr(op->extent);
    const bool par = op->kind == ForKind::kParallel;
    KILN_ICHECK(!(par && in_parallel_)) << "kernel '" << func_ << "': parallel loop '" << op->loop_var.name()
                                        << "' nested in another parallel loop";
    bind(op->loop_var.node());
    const bool saved = in_parallel_;
    in_parallel_ = in_parallel_ || par;
    visit_stmt(op->body);
    in_parallel_ = saved;
    vars_.erase(op->loop_var.node());
  }
  void visit(const Allocate* op) override {
    KILN_ICHECK(buffers_.insert(op->buffer.get()).second) << "kernel '" << func_ << "': buffer '"
                                                         << op->buffer->name << "' allocated twice on one path";
    visit_stmt(op->body);
    buffers_.erase(op->buffer.get());
  }

 private:
  std::string func_;
  std::set<const BufferNode*> buffers_;
  std::set<const Variable*> vars_;
  bool in_parallel_ = false;
};

}  // namespace

void verify(const PrimFunc& f) { Verifier(f).visit_stmt(f->body); }

}  // namespace kiln::tir
