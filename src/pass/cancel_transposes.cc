// CancelTransposes: removes the layout Transposes that channels-last exporters (tf2onnx, Keras)
// write around every NCHW-only operator (NHWC input -> Transpose -> Conv -> Transpose -> Relu ->
// Transpose -> Conv ...). Transposes are sunk towards the outputs, through the ops that do not care
// about the layout, until they meet their inverse. Contract:
//   - transpose(transpose(x, p1), p2) becomes transpose(x, q) with q[i] = p1[p2[i]], or x itself
//     when q is the identity (so inverse pairs cancel); an identity transpose becomes its input;
//   - an elementwise/broadcast call with one output (pattern <= kBroadcast, no int-list attribute:
//     an axis list or a shape ties an op to a layout; not batch_norm, which normalizes axis 1)
//     whose every argument is either a transpose by the same perm p (of the output's rank) or a
//     constant becomes transpose(op(args'), p): transposed arguments give their input, constants
//     are brought to the output's rank (leading 1s) and transposed by p's inverse (a reshape +
//     transpose of a constant, which FoldConstant evaluates); scalars stay as they are;
//   - concat of transposes by the same perm p on axis k becomes transpose(concat(inputs, p[k]), p);
//   - pad of transpose(x, p) becomes transpose(pad(x, pads permuted), p);
//   - an axis-list reduction (pattern kCommReduce, attributes exactly `axes` and `keepdims`:
//     reduce_mean/sum/max/...) of transpose(x, p) reduces x over the axes p maps them to; with
//     keepdims the result is transposed by p, without it by p restricted to the kept axes (often
//     the identity: a channels-last global average pool, mean over H and W of NHWC, needs none).
//   A transpose is only sunk when at least one transposed operand has no other user, so sinking
//   never adds a transpose (the one below replaces at least one above; a multi-use transpose stays
//   for its other users). The sunk transpose then meets the next one (usually the inverse the
//   exporter wrote before the next Conv) and both disappear.
// Values are unchanged bit for bit (transposes only move elements), except that a reduction sunk
// below a transpose may add its elements in another order (float reassociation). Runs first at every opt level
// >= 1, so that conv -> batch_norm pairs separated by transposes are adjacent for SimplifyInference.
// Stats: "transposes_cancelled" (pairs composed into one or none), "transposes_sunk" (ops a
// transpose was moved below).
#include <numeric>
#include <optional>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::Value;

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

class Canceller : public ir::GraphMutator {
 public:
  Canceller(const ir::Graph& graph, PassContext& ctx) : GraphMutator("CancelTransposes"), ctx_(ctx), uses_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    std::optional<Value> v;
    if (&node.op() == transpose_) {
      v = rewrite_transpose(node, args[0]);
    } else if (&node.op() == concat_) {
      v = rewrite_concat(node, args);
    } else if (&node.op() == pad_) {
      v = rewrite_pad(node, args);
    } else if (node.num_outputs() == 1 && args.size() == 1 && node.op().pattern == ir::OpPattern::kCommReduce &&
               axis_list_reduction(node)) {
      v = rewrite_reduce(node, args);
    } else if (node.num_outputs() == 1 && node.op().pattern <= ir::OpPattern::kBroadcast && &node.op() != batch_norm_ &&
               layout_free(node)) {
      v = rewrite_elementwise(node, args);
    }
    if (v) return {*v};
    return rebuild_call(node, args);
  }

 private:
  // The perm when `v` is the result of a transpose call.
  std::optional<std::vector<int64_t>> transpose_perm(const Value& v) const {
    if (v.node->kind() != ir::NodeKind::kCall || &v.node->as_call().op() != transpose_) return std::nullopt;
    return v.node->as_call().attrs().get_ints("perm");
  }

  static bool layout_free(const ir::CallNode& node) {
    for (const auto& spec : node.op().attrs) {
      if (spec.kind == ir::AttrKind::kInts || spec.kind == ir::AttrKind::kShape) return false;
    }
    return true;
  }

  static bool axis_list_reduction(const ir::CallNode& node) {
    const auto& specs = node.op().attrs;
    return specs.size() == 2 && specs[0].name == "axes" && specs[0].kind == ir::AttrKind::kInts &&
           specs[1].name == "keepdims" && specs[1].kind == ir::AttrKind::kInt;
  }

  Value transpose(const Value& x, const std::vector<int64_t>& perm, const std::string& name) {
    if (is_identity(perm)) return x;
    return ir::make_call("transpose", {x}, Attrs().set("perm", perm), name)->output();
  }

  std::optional<Value> rewrite_transpose(const ir::CallNode& node, const Value& arg) {
    const std::vector<int64_t>& p2 = node.attrs().get_ints("perm");
    if (is_identity(p2)) return arg;
    auto p1 = transpose_perm(arg);
    if (!p1) return std::nullopt;
    std::vector<int64_t> q(p2.size());
    for (size_t i = 0; i < p2.size(); ++i) q[i] = (*p1)[static_cast<size_t>(p2[i])];
    ++ctx_.stat("transposes_cancelled");
    return transpose(arg.node->as_call().args()[0], q, node.name());
  }

  // True when some argument of `node` that is (now) a transpose has `node` as its only user. A
  // rewritten value has the users of the original value it replaces.
  bool frees_a_transpose(const ir::CallNode& node, const std::vector<Value>& args) const {
    for (size_t i = 0; i < args.size(); ++i) {
      if (transpose_perm(args[i]) && uses_.of(node.args()[i]) == 1) return true;
    }
    return false;
  }

  // The common perm when every argument is a transpose by it (nullopt otherwise).
  std::optional<std::vector<int64_t>> common_perm(const std::vector<Value>& args) const {
    std::optional<std::vector<int64_t>> perm;
    for (const Value& a : args) {
      auto p = transpose_perm(a);
      if (!p || (perm && *p != *perm)) return std::nullopt;
      perm = p;
    }
    return perm;
  }

  std::optional<Value> rewrite_concat(const ir::CallNode& node, const std::vector<Value>& args) {
    auto perm = common_perm(args);
    if (!perm || !frees_a_transpose(node, args)) return std::nullopt;
    std::vector<Value> inner;
    for (const Value& a : args) inner.push_back(a.node->as_call().args()[0]);
    const int64_t axis = (*perm)[static_cast<size_t>(node.attrs().get_int("axis"))];
    Value joined = ir::make_call("concat", inner, Attrs(node.attrs()).set("axis", axis), node.name())->output();
    ++ctx_.stat("transposes_sunk");
    return transpose(joined, *perm, node.name() + ".transpose");
  }

  std::optional<Value> rewrite_pad(const ir::CallNode& node, const std::vector<Value>& args) {
    auto perm = transpose_perm(args[0]);
    if (!perm || args.size() != 1 || !frees_a_transpose(node, args)) return std::nullopt;
    const std::vector<int64_t>& pads = node.attrs().get_ints("pads");
    const size_t rank = perm->size();
    std::vector<int64_t> inner_pads(2 * rank);
    for (size_t i = 0; i < rank; ++i) {
      inner_pads[static_cast<size_t>((*perm)[i])] = pads[i];
      inner_pads[rank + static_cast<size_t>((*perm)[i])] = pads[rank + i];
    }
    Value padded = ir::make_call("pad", {args[0].node->as_call().args()[0]}, Attrs(node.attrs()).set("pads", inner_pads),
                                 node.name())->output();
    ++ctx_.stat("transposes_sunk");
    return transpose(padded, *perm, node.name() + ".transpose");
  }

  std::optional<Value> rewrite_reduce(const ir::CallNode& node, const std::vector<Value>& args) {
    auto perm = transpose_perm(args[0]);
    if (!perm || !frees_a_transpose(node, args)) return std::nullopt;
    const size_t rank = perm->size();
    const std::vector<int64_t>& axes = node.attrs().get_ints("axes");
    const bool keepdims = node.attrs().get_int("keepdims") != 0;
    std::vector<bool> reduced_inner(rank, axes.empty());
    for (int64_t a : axes) reduced_inner[static_cast<size_t>((*perm)[static_cast<size_t>(a)])] = true;
    std::vector<int64_t> inner_axes;
    if (!axes.empty()) {
      for (size_t d = 0; d < rank; ++d) {
        if (reduced_inner[d]) inner_axes.push_back(static_cast<int64_t>(d));
      }
    }
    Value y = ir::make_call(node.op(), {args[0].node->as_call().args()[0]}, Attrs(node.attrs()).set("axes", inner_axes),
                            node.name())->output();
    std::vector<int64_t> out_perm;
    if (keepdims) {
      out_perm = *perm;
    } else {
      // Position of each inner axis among the kept ones (the result's axes, in inner order).
      std::vector<int64_t> position(rank, -1);
      int64_t k = 0;
      for (size_t d = 0; d < rank; ++d) {
        if (!reduced_inner[d]) position[d] = k++;
      }
      for (size_t i = 0; i < rank; ++i) {
        const auto inner = static_cast<size_t>((*perm)[i]);
        if (!reduced_inner[inner]) out_perm.push_back(position[inner]);
      }
    }
    ++ctx_.stat("transposes_sunk");
    return transpose(y, out_perm, node.name() + ".transpose");
  }

  std::optional<Value> rewrite_elementwise(const ir::CallNode& node, const std::vector<Value>& args) {
    const size_t rank = node.output_types()[0].shape.size();
    std::optional<std::vector<int64_t>> perm;
    for (const Value& a : args) {
      if (a.node->kind() == ir::NodeKind::kConstant) continue;
      auto p = transpose_perm(a);
      if (!p || p->size() != rank || (perm && *p != *perm)) return std::nullopt;
      perm = p;
    }
    if (!perm || !frees_a_transpose(node, args)) return std::nullopt;
    const std::vector<int64_t> inv = inverse(*perm);
    std::vector<Value> inner;
    for (const Value& a : args) {
      if (a.node->kind() != ir::NodeKind::kConstant) {
        inner.push_back(a.node->as_call().args()[0]);
        continue;
      }
      const ir::Shape& cs = a.type().shape;
      if (cs.empty()) {
        inner.push_back(a);
        continue;
      }
      ir::Shape full(rank - cs.size(), 1);
      full.insert(full.end(), cs.begin(), cs.end());
      Value c = full == cs ? a : ir::make_call("reshape", {a}, Attrs().set("shape", full))->output();
      inner.push_back(transpose(c, inv, ""));
    }
    Value y = ir::make_call(node.op(), inner, node.attrs(), node.name())->output();
    ++ctx_.stat("transposes_sunk");
    return transpose(y, *perm, node.name() + ".transpose");
  }

  PassContext& ctx_;
  UseCounts uses_;  // of the original graph
  const ir::OpDef* transpose_ = op_ptr("transpose");
  const ir::OpDef* concat_ = op_ptr("concat");
  const ir::OpDef* pad_ = op_ptr("pad");
  const ir::OpDef* batch_norm_ = op_ptr("batch_norm");
};

class CancelTransposes final : public Pass {
 public:
  const char* name() const override { return "CancelTransposes"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Canceller(graph, ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_cancel_transposes() { return std::make_unique<CancelTransposes>(); }

}  // namespace kiln::pass
