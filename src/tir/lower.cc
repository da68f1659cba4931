// The lowering pipeline: one named step after another, each logged.
#include "kiln/tir/lower.h"


#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"
#include "kiln/tir/transform.h"
#include "kiln/tir/verify.h"
#include "schedule_ops.h"

namespace kiln::tir {
namespace {

void log_step(const std::string& func, const char* step, const Stmt& before, const Stmt& after) {
  if (before.defined() && after.same_as(before)) {
    KILN_LOG(tir, kDebug) << func << ": after " << step << ": (unchanged)";
    return;
  }
  KILN_LOG(tir, kDebug) << func << ": after " << step << ":\n" << after;
}

}  // namespace

PrimFunc lower(const Schedule& sched, const std::vector<Tensor>& args, const std::string& name) {
  std::vector<std::pair<const OperationNode*, Buffer>> params;
  std::vector<Buffer> buffers;
  for (const Tensor& t : args) {
    if (!t.defined()) throw UserError(UserErrorKind::kInvalidArgument, "kernel '" + name + "'", "has an undefined argument", "");
    const StageNode* st = sched.find(t.get());
    if (t->kind == OpKind::kCompute && (!st || !st->is_output)) {
      throw UserError(UserErrorKind::kInvalidArgument, "kernel '" + name + "' argument '" + t.name() + "'",
                      "is an intermediate compute, not an output of the schedule",
                      "pass only placeholders and the schedule's outputs");
    }
    for (const auto& [op, b] : params) {
      if (op == t.get()) {
        throw UserError(UserErrorKind::kInvalidArgument, "kernel '" + name + "' argument '" + t.name() + "'",
                        "is passed twice", "");
      }
    }
    Buffer b = Buffer::make(t.name(), t.dtype(), t.shape());
    params.push_back({t.get(), b});
    buffers.push_back(b);
  }
  for (const Tensor& out : sched.outputs()) {
    bool found = false;
    for (const Tensor& t : args) found = found || t.same_as(out);
    if (!found) {
      throw UserError(UserErrorKind::kInvalidArgument, "kernel '" + name + "'",
                      "output '" + out.name() + "' is not among its arguments", "append the outputs to the argument list");
    }
  }

  Stmt s = detail::schedule_ops(sched);
  log_step(name, "schedule_ops", Stmt(), s);
  Stmt prev = s;
  s = detail::storage_flatten(s, params);
  log_step(name, "storage_flatten", prev, s);
  prev = s;
  s = simplify(s);
  log_step(name, "simplify", prev, s);
  prev = s;
  s = partition_tails(s);
  log_step(name, "partition_tails", prev, s);
  prev = s;
  s = vectorize_loops(s);
  log_step(name, "vectorize_loops", prev, s);
  prev = s;
  s = unroll_loops(s);
  log_step(name, "unroll_loops", prev, s);
  prev = s;
  s = simplify(s);
  log_step(name, "simplify", prev, s);
  check_parallel_nesting(s);
  PrimFunc f = PrimFunc::make(name, buffers, s);
  verify(f);
  return f;
}

}  // namespace kiln::tir
