// FuseLayerNorm: recognizes a layer normalization written out as elementwise ops and reductions
// (as exporters emit it before ONNX's LayerNormalization, e.g. PyTorch at opset < 17) and replaces
// it by one `layer_norm` call, which lowers to a single kernel instead of four or more. Contract:
//   - The recognized structure, with T the trailing axes [axis, rank) of x (keepdims=1 on both
//     means, the same T):
//       m = reduce_mean(x, T)          d = sub(x, m)
//       p = pow(d, 2) | mul(d, d)      v = reduce_mean(p, T)
//       s = sqrt(add(v, eps))          n = div(d, s)
//     optionally followed by y = mul(n, scale) and then z = add(y, bias) (either argument order),
//     where eps is a one-element constant >= 0, the exponent a one-element constant equal to 2,
//     and scale/bias have at most rank - axis axes and broadcast to x.shape[axis:] (so they only
//     vary along the normalized axes). x is floating point.
//   - Every intermediate value (m, p, v, the add, s, and n/y when they are followed) has exactly
//     one use, d exactly its two (or three, for mul(d, d)) uses inside the pattern; anything else
//     (an intermediate that is also used elsewhere or is a graph output, other axes, keepdims=0,
//     another exponent, a scale that varies along the leading axes) is left as it is.
//   - The result is layer_norm(x, scale or a one-element 1, bias?, axis, epsilon); the op's
//     reference computes the same mean, biased variance and normalization (in double; the
//     rewritten graph matches the original within f32 rounding).
// Op identities come from the registry (pass_util.h op_ptr), never from names.
// Stats: "layer_norms".
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::Value;

struct Match {
  Value x;
  std::optional<Value> scale, bias;
  int64_t axis = 0;
  double epsilon = 0;
};

class Matcher {
 public:
  explicit Matcher(const ir::Graph& graph) : uses_(graph) {
    for (const auto& node : graph.topo_order()) {
      if (node->kind() != ir::NodeKind::kCall) continue;
      for (const auto& a : node->as_call().args()) users_[a.node.get()].push_back(node.get());
    }
  }

  // The match whose last node is `root` (the div, or the mul/add that follows it), if any.
  std::optional<Match> match_root(const ir::CallNode& root) const {
    if (is(root, add_)) {
      for (int i = 0; i < 2; ++i) {
        const ir::CallNode* y = single_use_call(root.args()[i], mul_);
        if (!y) continue;
        std::optional<Match> m = match_scaled(*y);
        if (!m || !m->scale || !affine_param(root.args()[1 - i], *m)) continue;
        m->bias = root.args()[1 - i];
        return m;
      }
      return std::nullopt;
    }
    if (is(root, mul_)) {
      // Not the root when an add of a bias follows (the add is).
      if (const ir::Node* u = only_user(root); u && continues_to_bias(root, *u)) return std::nullopt;
      return match_scaled(root);
    }
    if (is(root, div_)) {
      if (const ir::Node* u = only_user(root); u && u->kind() == ir::NodeKind::kCall && is(u->as_call(), mul_)) {
        // A following mul by a scale takes the match (when it qualifies).
        if (match_scaled(u->as_call())) return std::nullopt;
      }
      return match_normalized(root);
    }
    return std::nullopt;
  }

 private:
  static bool is(const ir::CallNode& c, const ir::OpDef* op) { return &c.op() == op; }
  static const ir::CallNode* call_of(const Value& v, const ir::OpDef* op) {
    if (v.node->kind() != ir::NodeKind::kCall || v.node->num_outputs() != 1) return nullptr;
    const ir::CallNode& c = v.node->as_call();
    return &c.op() == op ? &c : nullptr;
  }
  const ir::CallNode* single_use_call(const Value& v, const ir::OpDef* op) const {
    const ir::CallNode* c = call_of(v, op);
    return c && uses_.of_node(v.node.get()) == 1 ? c : nullptr;
  }
  const ir::Node* only_user(const ir::CallNode& n) const {
    if (uses_.of_node(&n) != 1) return nullptr;
    auto it = users_.find(&n);
    return it == users_.end() || it->second.size() != 1 ? nullptr : it->second[0];
  }
  bool continues_to_bias(const ir::CallNode& y, const ir::Node& u) const {
    if (u.kind() != ir::NodeKind::kCall || !is(u.as_call(), add_)) return false;
    std::optional<Match> m = match_scaled(y);
    if (!m) return false;
    const auto& args = u.as_call().args();
    const Value other = args[0].node.get() == &y ? args[1] : args[0];
    return affine_param(other, *m);
  }
  static bool scalar_constant_value(const Value& v, double* out) {
    if (v.node->kind() != ir::NodeKind::kConstant || v.type().numel() != 1) return false;
    *out = v.node->as_constant().data().get_as_double(0);
    return true;
  }
  // A scale or bias: same dtype, at most rank - axis axes, broadcasting to x.shape[axis:].
  static bool affine_param(const Value& p, const Match& m) {
    const ir::TensorType& t = p.type();
    const ir::Shape& xs = m.x.type().shape;
    if (t.dtype != m.x.type().dtype || t.rank() > static_cast<int>(xs.size()) - m.axis) return false;
    for (int i = 1; i <= t.rank(); ++i) {
      const int64_t d = t.shape[t.shape.size() - i], xd = xs[xs.size() - i];
      if (d != 1 && d != xd) return false;
    }
    return true;
  }
  // y = mul(n, scale) with n a normalization.
  std::optional<Match> match_scaled(const ir::CallNode& y) const {
    for (int i = 0; i < 2; ++i) {
      const ir::CallNode* n = single_use_call(y.args()[i], div_);
      if (!n) continue;
      std::optional<Match> m = match_normalized(*n);
      if (!m || !affine_param(y.args()[1 - i], *m)) continue;
      m->scale = y.args()[1 - i];
      return m;
    }
    return std::nullopt;
  }
  // n = div(d, sqrt(add(reduce_mean(pow(d, 2)), eps))), d = sub(x, reduce_mean(x)).
  std::optional<Match> match_normalized(const ir::CallNode& n) const {
    if (!is(n, div_) || n.num_outputs() != 1) return std::nullopt;
    const Value& dv = n.args()[0];
    const ir::CallNode* d = call_of(dv, sub_);
    const ir::CallNode* s = single_use_call(n.args()[1], sqrt_);
    if (!d || !s) return std::nullopt;
    const ir::CallNode* e = single_use_call(s->args()[0], add_);
    if (!e) return std::nullopt;
    double eps = 0;
    const ir::CallNode* v = nullptr;
    for (int i = 0; i < 2 && !v; ++i) {
      if (scalar_constant_value(e->args()[1 - i], &eps)) v = single_use_call(e->args()[i], reduce_mean_);
    }
    if (!v || !(eps >= 0)) return std::nullopt;
    const ir::CallNode* p = nullptr;
    int d_uses = 2;
    if (const ir::CallNode* pw = single_use_call(v->args()[0], pow_)) {
      double exponent = 0;
      if (pw->args()[0] == dv && scalar_constant_value(pw->args()[1], &exponent) && exponent == 2.0) p = pw;
    } else if (const ir::CallNode* sq = single_use_call(v->args()[0], mul_)) {
      if (sq->args()[0] == dv && sq->args()[1] == dv) {
        p = sq;
        d_uses = 3;
      }
    }
    if (!p || uses_.of_node(d) != d_uses) return std::nullopt;
    const Value& x = d->args()[0];
    const ir::CallNode* m = single_use_call(d->args()[1], reduce_mean_);
    if (!m || m->args()[0] != x || !ir::is_float(x.type().dtype)) return std::nullopt;
    const int64_t axis = trailing_reduce_axis(*m);
    if (axis < 0 || trailing_reduce_axis(*v) != axis) {
      return std::nullopt;
    }
    if (d->output_types()[0] != x.type() || n.output_types()[0] != x.type() || p->output_types()[0] != x.type()) {
      return std::nullopt;
    }
    Match match;
    match.x = x;
    match.axis = axis;
    match.epsilon = eps;
    return match;
  }

  UseCounts uses_;
  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> users_;
  const ir::OpDef* add_ = op_ptr("add");
  const ir::OpDef* sub_ = op_ptr("sub");
  const ir::OpDef* mul_ = op_ptr("mul");
  const ir::OpDef* div_ = op_ptr("div");
  const ir::OpDef* pow_ = op_ptr("pow");
  const ir::OpDef* sqrt_ = op_ptr("sqrt");
  const ir::OpDef* reduce_mean_ = op_ptr("reduce_mean");
};

class Rewriter : public ir::GraphMutator {
 public:
  Rewriter(const ir::Graph& graph, PassContext& ctx)
      : GraphMutator("FuseLayerNorm"), ctx_(ctx), matcher_(graph), names_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& new_args) override {
    std::optional<Match> m = matcher_.match_root(node);
    if (!m) return rebuild_call(node, new_args);
    const Value x = mapped(m->x);
    std::vector<Value> args = {x};
    args.push_back(m->scale ? mapped(*m->scale)
                            : scalar_constant(names_, "layer_norm_scale", x.type().dtype, 1.0)->output());
    if (m->bias) args.push_back(mapped(*m->bias));
    ++ctx_.stat("layer_norms");
    return {ir::make_call("layer_norm", args, Attrs().set("axis", m->axis).set("epsilon", m->epsilon), node.name())
                ->output()};
  }

 private:
  PassContext& ctx_;
  Matcher matcher_;
  NameSupply names_;
};

class FuseLayerNorm final : public Pass {
 public:
  const char* name() const override { return "FuseLayerNorm"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Rewriter(graph, ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_layer_norm() { return std::make_unique<FuseLayerNorm>(); }

}  // namespace kiln::pass
