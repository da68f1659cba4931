// ONNX NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13) -> graph IR,
// decomposed at import into ops that compile (ONNX defines both by function bodies):
//   input x [N, C, d1, ...] (SoftmaxCrossEntropyLoss: log_softmax(x) over axis 1, its optional
//   second output), target t [N, d1, ...] (integer class indices);
//   picked[n, d..] = x[n, t[n, d..], d..] as sum over C of where(t == c, x, 0) (a one-hot select:
//   an index equal to no class, e.g. ignore_index out of range, picks 0);
//   loss = -picked * w, w = weight[clip(t, 0, C-1)] (a gather), 0 where t == ignore_index;
//   reduction none (loss), sum, or mean (sum(loss) / sum(w) when there are weights or an
//   ignore_index, else the plain mean), as ONNX's reference computes it.
#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Shape;
using ir::Value;

Value scalar_of(ImportContext& ctx, DType dtype, double v, const std::string& name) {
  return ctx.constant(NDArray::scalar(dtype, v), name);
}

std::vector<int64_t> all_axes(int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  return axes;
}

// The loss from log-probabilities `x` [N, C, ...] and the current node's target (input 1) and
// optional weight (input 2).
Value nll_loss(ImportContext& ctx, const Value& x) {
  Value target = ctx.input(1);
  const Shape xs = x.type().shape;
  const Shape ts = target.type().shape;
  const DType dt = x.type().dtype;
  const DType it = target.type().dtype;
  if (xs.size() < 2) ctx.fail_invalid("input has shape " + x.type().to_string() + "; expected [N, C, ...]");
  if (it != DType::kI32 && it != DType::kI64) ctx.fail_invalid("target must be int32 or int64, not " + std::string(ir::dtype_name(it)));
  Shape expect = xs;
  expect.erase(expect.begin() + 1);
  if (ts != expect) ctx.fail_invalid("target has shape " + target.type().to_string() + "; expected " + ir::shape_to_string(expect) + " (input without axis 1)");
  const int64_t classes = xs[1];
  const int64_t rank = static_cast<int64_t>(xs.size());
  // One-hot select of the target's class along axis 1.
  Shape t1 = ts;
  t1.insert(t1.begin() + 1, 1);
  Value t_col = ctx.call1("reshape", {target}, Attrs().set("shape", std::vector<int64_t>(t1.begin(), t1.end())));
  Shape cshape(static_cast<size_t>(rank), 1);
  cshape[1] = classes;
  NDArray cls = NDArray::empty(it, cshape);
  for (int64_t c = 0; c < classes; ++c) cls.set_from_double(c, static_cast<double>(c));
  Value hot = ctx.call1("equal", {t_col, ctx.constant(cls, "loss_classes")});
  Value picked = ctx.call1("where", {hot, x, scalar_of(ctx, dt, 0.0, "loss_zero")});
  picked = ctx.call1("reduce_sum", {picked}, Attrs().set("axes", std::vector<int64_t>{1}).set("keepdims", int64_t{0}));
  Value loss = ctx.call1("neg", {picked});

  const bool has_ignore = ctx.has_attr("ignore_index");
  const int64_t ignore = ctx.attr_int("ignore_index", 0);
  Value w;
  if (ctx.has_input(2)) {
    Value weight = ctx.input(2);
    if (weight.type().shape != Shape{classes}) ctx.fail_invalid("weight has shape " + weight.type().to_string() + "; expected [" + std::to_string(classes) + "]");
    if (weight.type().dtype != dt) weight = ctx.call1("cast", {weight}, Attrs().set("dtype", dt));
    Value safe = ctx.call1("clip", {target}, Attrs().set("min", 0.0).set("max", static_cast<double>(classes - 1)));
    w = ctx.call1("gather", {weight, safe}, Attrs().set("axis", int64_t{0}));
  }
  if (has_ignore) {
    Value ignored = ctx.call1("equal", {target, scalar_of(ctx, it, static_cast<double>(ignore), "loss_ignore_index")});
    w = ctx.call1("where", {ignored, scalar_of(ctx, dt, 0.0, "loss_zero"), w.defined() ? w : scalar_of(ctx, dt, 1.0, "loss_one")});
  }
  if (w.defined()) loss = ctx.call1("mul", {loss, w});
  const std::string reduction = ctx.attr_string("reduction", "mean");
  const int64_t lrank = loss.type().rank();
  const Attrs all = Attrs().set("axes", all_axes(lrank)).set("keepdims", int64_t{0});
  if (reduction == "none") return loss;
  if (reduction == "sum") return ctx.call1("reduce_sum", {loss}, all);
  if (reduction != "mean") ctx.fail_attr("reduction", "is '" + reduction + "'; expected none, sum or mean");
  if (!w.defined()) return ctx.call1("reduce_mean", {loss}, all);
  // w may be a broadcast scalar (ignore_index without weights): count it over the target's shape.
  if (w.type().shape != loss.type().shape) {
    w = ctx.call1("expand", {w}, Attrs().set("shape", std::vector<int64_t>(loss.type().shape.begin(), loss.type().shape.end())));
  }
  return ctx.call1("div", {ctx.call1("reduce_sum", {loss}, all), ctx.call1("reduce_sum", {w}, all)});
}

std::vector<Value> convert_nll_loss(ImportContext& ctx) { return {nll_loss(ctx, ctx.input(0))}; }

std::vector<Value> convert_softmax_cross_entropy(ImportContext& ctx) {
  Value x = ctx.input(0);
  if (x.type().rank() < 2) ctx.fail_invalid("scores have shape " + x.type().to_string() + "; expected [N, C, ...]");
  Value log_prob = ctx.call1("log_softmax", {x}, Attrs().set("axis", int64_t{1}));
  std::vector<Value> outs = {nll_loss(ctx, log_prob)};
  if (ctx.node().outputs.size() > 1) outs.push_back(log_prob);
  return outs;
}

}  // namespace

void add_loss_converters(std::map<std::string, Converter>& table) {
  table["NegativeLogLikelihoodLoss"] = convert_nll_loss;
  table["SoftmaxCrossEntropyLoss"] = convert_softmax_cross_entropy;
}

}  // namespace kiln::frontend::onnx_import
