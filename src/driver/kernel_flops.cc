// Floating-point operation count of a lowered kernel (see kernel_flops.h).
#include "kiln/driver/kernel_flops.h"

#include <algorithm>

#include "kiln/tir/ir_visitor.h"

namespace kiln::driver {
namespace {

using namespace kiln::tir;

class FlopCounter : public IRVisitor {
 public:
  double flops = 0;  // double: products of extents may exceed 2^64 only in absurd kernels
  double int8_ops = 0;
  bool exact = true;

 protected:
  void visit(const For* op) override {
    visit_expr(op->min);
    visit_expr(op->extent);
    double extent = 1;
    if (const IntImm* imm = op->extent.as<IntImm>()) {
      extent = static_cast<double>(std::max<int64_t>(imm->value, 0));
    } else {
      exact = false;
    }
    const double saved = scale_;
    scale_ *= extent;
    visit_stmt(op->body);
    scale_ = saved;
  }

  void visit(const IfThenElse* op) override {
    visit_expr(op->condition);
    const double before = flops;
    visit_stmt(op->then_case);
    const double then_flops = flops - before;
    flops = before;
    if (op->else_case.defined()) visit_stmt(op->else_case);
    const double else_flops = flops - before;
    flops = before + std::max(then_flops, else_flops);
  }

#define KILN_FLOP_BINARY(N)               \
  void visit(const N* op) override {      \
    count(op->type, 1);                   \
    IRVisitor::visit(op);                 \
  }
  KILN_FLOP_BINARY(Add)
  KILN_FLOP_BINARY(Sub)
  KILN_FLOP_BINARY(Div)
  KILN_FLOP_BINARY(Min)
  KILN_FLOP_BINARY(Max)
#undef KILN_FLOP_BINARY

  // A 16-bit multiply is the int8 kernels' widened u8 x s8 product (the depthwise form): one
  // multiply-add, 2 int8 ops per lane.
  void visit(const Mul* op) override {
    count(op->type, 1);
    if (op->type.dtype == DType::kI16) int8_ops += scale_ * 2 * op->type.lanes;
    IRVisitor::visit(op);
  }

  // The byte dot product: 4 u8 x s8 multiply-adds per i32 lane, 8 int8 ops; the 16-bit one
  // (int8 Winograd's product): 2 multiply-adds, 4 ops.
  void visit(const Call* op) override {
    if (op->op == CallOp::kPrefetch) return;  // a cache hint: no arithmetic, no bytes read
    if (is_dot_op(op->op)) {
      int8_ops += scale_ * (op->op == CallOp::kDot2S16 ? 4 : 8) * op->type.lanes;
    } else {
      count(op->type, op->op == CallOp::kFma ? 2 : 1);
    }
    IRVisitor::visit(op);
  }

 private:
  void count(const Type& t, int per_lane) {
    if (t.is_float()) flops += scale_ * per_lane * t.lanes;
  }
  double scale_ = 1;
};

}  // namespace

KernelFlops count_kernel_flops(const tir::PrimFunc& func) {
  FlopCounter counter;
  if (func.defined() && func->body.defined()) counter.visit_stmt(func->body);
  KernelFlops result;
  result.flops = static_cast<uint64_t>(std::min(counter.flops, 1.8e19));
  result.int8_ops = static_cast<uint64_t>(std::min(counter.int8_ops, 1.8e19));
  result.exact = counter.exact;
  return result;
}

}  // namespace kiln::driver
