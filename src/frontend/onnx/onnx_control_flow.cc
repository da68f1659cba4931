// ONNX control flow (If, Loop, Scan), resolved at import into plain dataflow by inlining subgraphs
// (import_subgraph: branches and bodies read outer-scope values by name):
//  - If with a condition that is constant after constant folding (shape checks, mode flags): only
//    the taken branch is imported. With a run-time condition both branches are imported and each
//    output is where(cond, then, else): both branches run, which is correct because ONNX ops have no
//    side effects; it needs the two branches' outputs to have equal types and shapes.
//  - Loop with a trip count M that is constant after folding (or a condition that folds to false):
//    unrolled, one body import per iteration with the iteration number as a constant, so slices by
//    the iteration number fold. Loop-carried values chain; scan outputs are stacked on a new axis 0.
//    A condition computed at run time is supported when the loop has no scan outputs and a bound on
//    the iterations is known (M, or a condition that eventually folds to false): iterations run
//    masked (results after the condition turns false stay unchanged, through where()).
//  - Scan (opset 9+, and opset 8's batched form): unrolled over the sequence length (a static
//    dimension), scan inputs split along their axes (either direction), state variables chained,
//    scan outputs stacked along their axes (either direction).
// Unrolling is bounded (kMaxUnrolledNodes node conversions per control-flow node): larger loops are
// a UserError naming the node, never an out-of-memory.
#include <algorithm>
#include <limits>
#include <optional>

#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Shape;
using ir::Value;

// The most nodes one control-flow node may unroll into (iterations x body nodes).
constexpr int64_t kMaxUnrolledNodes = 100000;

bool is_constant(const Value& v) { return v.node->kind() == ir::NodeKind::kConstant; }
bool constant_true(const Value& v) { return v.node->as_constant().data().get_as_double(0) != 0; }

std::string subgraph_where(const ImportContext& ctx, const std::string& attr) {
  return attr + " of node '" + ctx.node().name + "' (" + ctx.node().op_type + ")";
}

Value reshape_to(ImportContext& ctx, Value x, const Shape& shape) {
  if (x.type().shape == shape) return x;
  return ctx.call1("reshape", {x}, Attrs().set("shape", shape));
}

// A one-element bool tensor as a scalar.
Value scalar_condition(ImportContext& ctx, Value cond, const std::string& what) {
  if (cond.type().dtype != DType::kBool) ctx.fail_invalid(what + " must be bool, it is " + cond.type().to_string());
  if (cond.type().numel() != 1) ctx.fail_invalid(what + " must hold one element, it is " + cond.type().to_string());
  return reshape_to(ctx, cond, {});
}

Value bool_constant(ImportContext& ctx, bool v) { return ctx.constant(NDArray::scalar(DType::kBool, v ? 1 : 0), "cond"); }

// Fails unless `iterations` unrolled copies of a body of `body_size` nodes fit the budget.
void check_unroll_budget(ImportContext& ctx, int64_t iterations, int64_t body_size, const std::string& what) {
  if (body_size > 0 && iterations > kMaxUnrolledNodes / body_size) {
    ctx.fail_unsupported("unrolling " + what + " would convert more than " + std::to_string(kMaxUnrolledNodes) +
                             " nodes (" + std::to_string(iterations) + " iterations x " + std::to_string(body_size) +
                             " body nodes); Kiln unrolls control flow at compile time",
                         "export the model with fewer iterations (e.g. a shorter sequence) or without the loop");
  }
}

// Stacks equally typed values along a new axis `axis` (in [0, rank]).
Value stack(ImportContext& ctx, const std::vector<Value>& items, int64_t axis, const std::string& what) {
  KILN_ICHECK(!items.empty());
  const ir::TensorType& first = items[0].type();
  std::vector<Value> parts;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].type() != first) {
      ctx.fail_unsupported(what + " is " + first.to_string() + " in the first iteration and " + items[i].type().to_string() +
                           " in iteration " + std::to_string(i) + "; Kiln stacks per-iteration values of one shape");
    }
    Shape s = first.shape;
    s.insert(s.begin() + axis, 1);
    parts.push_back(reshape_to(ctx, items[i], s));
  }
  if (parts.size() == 1) return parts[0];
  return ctx.call1("concat", parts, Attrs().set("axis", axis));
}

// An empty stack ([0] inserted at `axis`) of values typed like `like`.
Value empty_stack(ImportContext& ctx, const ir::TensorType& like, int64_t axis) {
  Shape s = like.shape;
  s.insert(s.begin() + axis, 0);
  return ctx.constant(NDArray::empty(like.dtype, s), ctx.node().name + ".empty");
}

// ---- If ----

std::vector<Value> convert_if(ImportContext& ctx) {
  const OnnxGraph& then_g = ctx.attr_graph("then_branch");
  const OnnxGraph& else_g = ctx.attr_graph("else_branch");
  const size_t n_out = ctx.node().outputs.size();
  for (const auto& [g, attr] : {std::pair<const OnnxGraph*, const char*>{&then_g, "then_branch"},
                                std::pair<const OnnxGraph*, const char*>{&else_g, "else_branch"}}) {
    if (g->outputs.size() != n_out) {
      ctx.fail_invalid(std::string(attr) + " has " + std::to_string(g->outputs.size()) + " outputs, the node " +
                       std::to_string(n_out));
    }
  }
  Value cond = scalar_condition(ctx, ctx.input(0), "the condition (input 0)");
  if (is_constant(cond)) {  // folded at import: only the taken branch exists
    const bool taken = constant_true(cond);
    return import_subgraph(ctx, taken ? then_g : else_g, {}, subgraph_where(ctx, taken ? "then_branch" : "else_branch"));
  }
  const std::vector<Value> t = import_subgraph(ctx, then_g, {}, subgraph_where(ctx, "then_branch"));
  const std::vector<Value> e = import_subgraph(ctx, else_g, {}, subgraph_where(ctx, "else_branch"));
  std::vector<Value> outs;
  for (size_t k = 0; k < n_out; ++k) {
    if (t[k] == e[k]) {
      outs.push_back(t[k]);
      continue;
    }
    if (t[k].type() != e[k].type()) {
      ctx.fail_unsupported("output " + std::to_string(k) + " ('" + ctx.node().outputs[k] + "') is " +
                               t[k].type().to_string() + " in then_branch and " + e[k].type().to_string() +
                               " in else_branch, and the condition (input 0, '" + ctx.node().inputs[0] +
                               "') is computed at run time" + run_time_origin(cond) + ": Kiln runs both branches and selects each output, which "
                               "needs equal types and shapes",
                           "make the condition constant at compile time (e.g. fix the input shapes it depends on "
                           "with --input-shape), or export branches with outputs of one shape");
    }
    outs.push_back(ctx.call1("where", {cond, t[k], e[k]}));
  }
  return outs;
}

// ---- Loop ----

std::vector<Value> convert_loop(ImportContext& ctx) {
  const OnnxNode& node = ctx.node();
  const OnnxGraph& body = ctx.attr_graph("body");
  const std::string body_where = subgraph_where(ctx, "body");
  const size_t n_carried = node.inputs.size() < 2 ? 0 : node.inputs.size() - 2;
  if (body.inputs.size() != n_carried + 2) {
    ctx.fail_invalid("body declares " + std::to_string(body.inputs.size()) + " inputs; with " + std::to_string(n_carried) +
                     " loop-carried values it needs " + std::to_string(n_carried + 2) +
                     " (iteration number, condition, the values)");
  }
  if (body.outputs.size() < n_carried + 1) {
    ctx.fail_invalid("body declares " + std::to_string(body.outputs.size()) + " outputs; it needs at least " +
                     std::to_string(n_carried + 1) + " (condition, the loop-carried values)");
  }
  const size_t n_scan = body.outputs.size() - 1 - n_carried;
  if (node.outputs.size() > n_carried + n_scan) ctx.fail_invalid("has more outputs than loop-carried and scan values");

  constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
  int64_t trip = kUnbounded;
  if (ctx.has_input(0)) {
    Value m = ctx.input(0);
    if (!is_constant(m)) {
      ctx.fail_unsupported("input 0 (trip count M, '" + node.inputs[0] + "') is computed at run time" +
                               run_time_origin(m) + "; Kiln unrolls loops at compile time and needs a trip count "
                               "that is constant after constant folding",
                           "export the loop with a constant trip count, or fix the input shapes it depends on with "
                           "--input-shape");
    }
    if (m.type().numel() != 1 || ir::is_float(m.type().dtype)) ctx.fail_invalid("the trip count must be one integer");
    trip = static_cast<int64_t>(m.node->as_constant().data().get_as_double(0));
  }
  std::optional<bool> known;  // the condition when known at compile time
  Value active;               // else the run-time condition: iterations are masked by it
  if (ctx.has_input(1)) {
    Value c = scalar_condition(ctx, ctx.input(1), "the initial condition (input 1)");
    if (is_constant(c)) {
      known = constant_true(c);
    } else {
      active = c;
    }
  } else {
    known = true;
  }
  std::vector<Value> carried;  // the loop-carried values (masked once the condition is run-time)
  for (size_t k = 0; k < n_carried; ++k) carried.push_back(ctx.input(2 + k));
  std::vector<Value> raw = carried;  // the same, unmasked: what the body is fed
  std::vector<std::vector<Value>> scans(n_scan);
  const int64_t body_size = std::max<int64_t>(1, subgraph_size(body));
  const Value false_v = bool_constant(ctx, false);
  if (trip != kUnbounded) check_unroll_budget(ctx, trip, body_size, "the loop");

  for (int64_t i = 0; i < trip; ++i) {
    if (known && !*known) break;
    if (!known) {
      const std::string source = i == 0 ? "input 1 (loop condition, '" + node.inputs[1] + "')"
                                         : "the body's condition output ('" + body.outputs[0].name + "')";
      const std::string origin = run_time_origin(active);
      if (n_scan > 0) {
        ctx.fail_unsupported(source + " is computed at run time" + origin + ", so the number of iterations and the length of the scan "
                                      "outputs depend on the data; Kiln supports a run-time loop condition only for "
                                      "loops without scan outputs",
                             "export the loop with a constant trip count and condition");
      }
      if (trip == kUnbounded && i + 1 > kMaxUnrolledNodes / body_size) {
        ctx.fail_unsupported(source + " is computed at run time" + origin + ", the loop has no trip count and its "
                                      "condition did not fold to false within " + std::to_string(i) +
                                      " iterations; Kiln unrolls loops at compile time and needs a bound: a trip "
                                      "count M that is constant after constant folding",
                             "export the loop with a constant trip count (e.g. a for loop over a constant range)");
      }
    }
    check_unroll_budget(ctx, i + 1, body_size, "the loop");
    // The body sees the unmasked chain (`raw`) and a true condition: when iteration i runs for real,
    // every earlier one did too (the condition never turns true again), so the unmasked values are
    // the real ones; when it does not, its results are discarded. This keeps loop counters constant.
    std::vector<Value> args{ctx.constant(NDArray::scalar(DType::kI64, static_cast<double>(i)), node.name + ".iter"),
                            bool_constant(ctx, true)};
    args.insert(args.end(), raw.begin(), raw.end());
    std::vector<Value> outs = import_subgraph(ctx, body, args, body_where + ", iteration " + std::to_string(i));
    Value cond_out = scalar_condition(ctx, outs[0], "the body's condition output");
    for (size_t k = 0; k < n_carried; ++k) raw[k] = outs[1 + k];
    if (known) {
      for (size_t k = 0; k < n_carried; ++k) carried[k] = outs[1 + k];
      for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(outs[1 + n_carried + k]);
      if (is_constant(cond_out)) {
        known = constant_true(cond_out);
      } else {
        known.reset();
        active = cond_out;
      }
      continue;
    }
    // Masked iteration: once the condition is false the results stay as they were.
    for (size_t k = 0; k < n_carried; ++k) {
      if (outs[1 + k].type() != carried[k].type()) {
        ctx.fail_unsupported("loop-carried value " + std::to_string(k) + " changes from " + carried[k].type().to_string() +
                             " to " + outs[1 + k].type().to_string() +
                             " in an iteration that runs under a run-time condition; Kiln needs one shape there");
      }
      carried[k] = ctx.call1("where", {active, outs[1 + k], carried[k]});
    }
    if (is_constant(cond_out)) {
      if (!constant_true(cond_out)) break;  // no later iteration runs
      continue;                             // `active` stays as it is
    }
    active = ctx.call1("where", {active, cond_out, false_v});
  }

  std::vector<Value> results = carried;
  for (size_t k = 0; k < n_scan; ++k) {
    const std::string what = "scan output " + std::to_string(k) + " ('" + body.outputs[1 + n_carried + k].name + "')";
    if (!scans[k].empty()) {
      results.push_back(stack(ctx, scans[k], 0, what));
      continue;
    }
    // No iteration ran: the body is imported once (unused) for the scan outputs' element types and shapes.
    std::vector<Value> args{ctx.constant(NDArray::scalar(DType::kI64, 0), node.name + ".iter"), bool_constant(ctx, true)};
    args.insert(args.end(), carried.begin(), carried.end());
    std::vector<Value> probe = import_subgraph(ctx, body, args, body_where + " (for its output types)");
    results.push_back(empty_stack(ctx, probe[1 + n_carried + k].type(), 0));
  }
  results.resize(std::min(results.size(), node.outputs.size()));
  return results;
}

// ---- Scan ----

struct ScanResult {
  std::vector<Value> states;
  std::vector<Value> outputs;
};

// One Scan over `xs` (the scan inputs; scan axes and directions as given, axes non-negative).
// `out_axes` may be negative (counted in rank + 1).
ScanResult run_scan(ImportContext& ctx, const OnnxGraph& body, std::vector<Value> states, const std::vector<Value>& xs,
                    const std::vector<int64_t>& in_axes, const std::vector<int64_t>& in_dirs,
                    const std::vector<int64_t>& out_axes, const std::vector<int64_t>& out_dirs, const std::string& where,
                    int64_t budget_factor) {
  const size_t n_state = states.size();
  const int64_t length = xs[0].type().shape[in_axes[0]];
  for (size_t j = 0; j < xs.size(); ++j) {
    if (xs[j].type().shape[in_axes[j]] != length) {
      ctx.fail_invalid("scan input " + std::to_string(j) + " has length " + std::to_string(xs[j].type().shape[in_axes[j]]) +
                       " along its scan axis, scan input 0 has " + std::to_string(length));
    }
  }
  if (length == 0) ctx.fail_unsupported("the scan inputs have length 0 (an empty sequence)");
  check_unroll_budget(ctx, length * budget_factor, std::max<int64_t>(1, subgraph_size(body)), "the scan");
  // Each scan input split once into its `length` slices, the scan axis removed.
  std::vector<std::vector<Value>> slices(xs.size());
  for (size_t j = 0; j < xs.size(); ++j) {
    std::vector<Value> pieces{xs[j]};
    if (length > 1) {
      pieces = ctx.call("split", {xs[j]},
                        Attrs().set("axis", in_axes[j]).set("sizes", std::vector<int64_t>(static_cast<size_t>(length), 1)));
    }
    Shape s = xs[j].type().shape;
    s.erase(s.begin() + in_axes[j]);
    for (Value& p : pieces) p = reshape_to(ctx, p, s);
    if (in_dirs[j]) std::reverse(pieces.begin(), pieces.end());
    slices[j] = std::move(pieces);
  }
  const size_t n_out = body.outputs.size() - n_state;
  std::vector<std::vector<Value>> ys(n_out);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Value> args = states;
    for (size_t j = 0; j < xs.size(); ++j) args.push_back(slices[j][t]);
    std::vector<Value> outs = import_subgraph(ctx, body, args, where + ", iteration " + std::to_string(t));
    for (size_t k = 0; k < n_state; ++k) states[k] = outs[k];
    for (size_t k = 0; k < n_out; ++k) ys[k].push_back(outs[n_state + k]);
  }
  ScanResult r{states, {}};
  for (size_t k = 0; k < n_out; ++k) {
    if (out_dirs[k]) std::reverse(ys[k].begin(), ys[k].end());
    const int64_t rank = ys[k][0].type().rank();
    const int64_t axis = ctx.normalize_axis(out_axes[k], rank + 1, "scan_output_axes entry");
    r.outputs.push_back(stack(ctx, ys[k], axis, "scan output " + std::to_string(k) + " ('" + body.outputs[n_state + k].name + "')"));
  }
  return r;
}

std::vector<int64_t> per_value_attr(ImportContext& ctx, const std::string& name, size_t n, int64_t fallback) {
  std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(n, fallback));
  if (v.size() != n) {
    ctx.fail_attr(name, "has " + std::to_string(v.size()) + " entries, expected " + std::to_string(n));
  }
  for (int64_t d : v) {
    if (name.find("directions") != std::string::npos && d != 0 && d != 1) ctx.fail_attr(name, "entries must be 0 or 1");
  }
  return v;
}

std::vector<Value> convert_scan(ImportContext& ctx) {
  const OnnxNode& node = ctx.node();
  const OnnxGraph& body = ctx.attr_graph("body");
  const bool batched = ctx.opset() < 9;  // Scan-8: a leading sequence_lens input and a batch axis 0
  const size_t first = batched ? 1 : 0;
  const int64_t n_scan_in = ctx.attr_int("num_scan_inputs", -1);
  const size_t n_in = node.inputs.size() - first;
  if (n_scan_in < 1 || static_cast<size_t>(n_scan_in) > n_in) {
    ctx.fail_attr("num_scan_inputs", "must be between 1 and the number of inputs (" + std::to_string(n_in) + ")");
  }
  const size_t n_state = n_in - static_cast<size_t>(n_scan_in);
  if (body.inputs.size() != n_in) {
    ctx.fail_invalid("body declares " + std::to_string(body.inputs.size()) + " inputs, the node passes " + std::to_string(n_in));
  }
  if (body.outputs.size() < n_state) ctx.fail_invalid("body has fewer outputs than state variables");
  const size_t n_scan_out = body.outputs.size() - n_state;
  std::vector<Value> states, xs;
  for (size_t i = 0; i < n_in; ++i) (i < n_state ? states : xs).push_back(ctx.input(first + i));
  const std::string where = subgraph_where(ctx, "body");

  if (!batched) {
    std::vector<int64_t> in_axes = per_value_attr(ctx, "scan_input_axes", xs.size(), 0);
    for (size_t j = 0; j < xs.size(); ++j) in_axes[j] = ctx.normalize_axis(in_axes[j], xs[j].type().rank(), "scan_input_axes entry");
    const ScanResult r = run_scan(ctx, body, states, xs, in_axes, per_value_attr(ctx, "scan_input_directions", xs.size(), 0),
                                  per_value_attr(ctx, "scan_output_axes", n_scan_out, 0),
                                  per_value_attr(ctx, "scan_output_directions", n_scan_out, 0), where, 1);
    std::vector<Value> outs = r.states;
    outs.insert(outs.end(), r.outputs.begin(), r.outputs.end());
    return outs;
  }

  // Scan-8: every state and scan input has a batch axis 0; the sequence axis of scan inputs is 1.
  // Each batch entry is scanned on its own (sequence axis 0 once the batch axis is removed) and the
  // results are stacked back along axis 0.
  std::vector<Value> all = states;
  all.insert(all.end(), xs.begin(), xs.end());
  for (const Value& v : all) {
    if (v.type().rank() < 1 || v.type().shape[0] != all[0].type().shape[0]) {
      ctx.fail_invalid("opset-8 Scan needs every state and scan input to have the same batch size (axis 0)");
    }
  }
  for (const Value& x : xs) {
    if (x.type().rank() < 2) ctx.fail_invalid("opset-8 Scan inputs need a batch axis and a sequence axis");
  }
  const int64_t batch = all[0].type().shape[0];
  const int64_t length = xs[0].type().shape[1];
  if (ctx.has_input(0)) {
    for (int64_t len : ctx.constant_ints(0, "sequence_lens")) {
      if (len != length) {
        ctx.fail_unsupported("sequence_lens entry " + std::to_string(len) + " differs from the sequence length " +
                                 std::to_string(length) + "; Kiln supports only full-length sequences",
                             "omit sequence_lens or pad every sequence to the full length");
      }
    }
  }
  const std::vector<int64_t> dirs = per_value_attr(ctx, "directions", xs.size(), 0);
  // Batch entries: each value split along axis 0, the batch axis removed.
  std::vector<std::vector<Value>> per_batch(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    std::vector<Value> pieces{all[i]};
    if (batch > 1) {
      pieces = ctx.call("split", {all[i]},
                        Attrs().set("axis", int64_t{0}).set("sizes", std::vector<int64_t>(static_cast<size_t>(batch), 1)));
    }
    Shape s = all[i].type().shape;
    s.erase(s.begin());
    for (Value& p : pieces) p = reshape_to(ctx, p, s);
    per_batch[i] = std::move(pieces);
  }
  std::vector<std::vector<Value>> state_b(n_state), out_b(n_scan_out);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Value> st, x;
    for (size_t i = 0; i < all.size(); ++i) (i < n_state ? st : x).push_back(per_batch[i][b]);
    const ScanResult r = run_scan(ctx, body, st, x, std::vector<int64_t>(x.size(), 0), dirs,
                                  std::vector<int64_t>(n_scan_out, 0), std::vector<int64_t>(n_scan_out, 0),
                                  where + ", batch entry " + std::to_string(b), batch);
    for (size_t k = 0; k < n_state; ++k) state_b[k].push_back(r.states[k]);
    for (size_t k = 0; k < n_scan_out; ++k) out_b[k].push_back(r.outputs[k]);
  }
  std::vector<Value> outs;
  for (size_t k = 0; k < n_state; ++k) outs.push_back(stack(ctx, state_b[k], 0, "state " + std::to_string(k)));
  for (size_t k = 0; k < n_scan_out; ++k) outs.push_back(stack(ctx, out_b[k], 0, "scan output " + std::to_string(k)));
  return outs;
}

}  // namespace

void add_control_flow_converters(std::map<std::string, Converter>& table) {
  table["If"] = convert_if;
  table["Loop"] = convert_loop;
  table["Scan"] = convert_scan;
}

}  // namespace kiln::frontend::onnx_import
