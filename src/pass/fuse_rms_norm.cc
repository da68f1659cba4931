// FuseRmsNorm: recognizes a root-mean-square normalization written out as elementwise ops and a
// reduction (as exporters emit LLaMA/T5-style RMSNorm before ONNX's RMSNormalization) and replaces
// it by one `rms_norm` call, which lowers to a single one-pass row kernel. Contract:
//   - The recognized structure, with T the trailing axes [axis, rank) of x (keepdims=1):
//       p = pow(x, 2) | mul(x, x)      ms = reduce_mean(p, T)
//       s = sqrt(add(ms, eps))          (the add in either argument order)
//       n = div(x, s) | mul(x, reciprocal(s)) | mul(x, div(1, s))   (mul in either order)
//     optionally followed by y = mul(n, scale) (either order), where eps is a one-element
//     constant >= 0, the exponent and the 1 one-element constants, scale has at most rank - axis
//     axes and broadcasts to x.shape[axis:], and x is floating point.
//   - Every intermediate (p, ms, the add, s, the reciprocal, and n when a scale follows) has
//     exactly one use; anything else is left as it is.
//   - The result is rms_norm(x, scale or a one-element 1, axis, epsilon); the op's reference
//     computes the same mean square and normalization (in double; within f32 rounding of the
//     original graph's stored intermediates).
// Op identities come from the registry (pass_util.h op_ptr), never from names. Stats: "rms_norms".
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
  std::optional<Value> scale;
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

  // The match whose last node is `root` (the normalization, or the mul by a scale after it).
  std::optional<Match> match_root(const ir::CallNode& root) const {
    if (std::optional<Match> m = match_scaled(root)) return m;
    std::optional<Match> m = match_normalized(root);
    if (!m) return std::nullopt;
    // A following mul by a scale takes the match.
    if (const ir::Node* u = only_user(root); u && u->kind() == ir::NodeKind::kCall && match_scaled(u->as_call())) {
      return std::nullopt;
    }
    return m;
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
  static bool scalar_constant_value(const Value& v, double* out) {
    if (v.node->kind() != ir::NodeKind::kConstant || v.type().numel() != 1) return false;
    *out = v.node->as_constant().data().get_as_double(0);
    return true;
  }
  static bool is_scalar(const Value& v, double want) {
    double got = 0;
    return scalar_constant_value(v, &got) && got == want;
  }
  // A scale: same dtype, at most rank - axis axes, broadcasting to x.shape[axis:].
  static bool scale_param(const Value& p, const Match& m) {
    const ir::TensorType& t = p.type();
    const ir::Shape& xs = m.x.type().shape;
    if (t.dtype != m.x.type().dtype || t.rank() > static_cast<int>(xs.size()) - m.axis) return false;
    for (int i = 1; i <= t.rank(); ++i) {
      const int64_t d = t.shape[t.shape.size() - i], xd = xs[xs.size() - i];
      if (d != 1 && d != xd) return false;
    }
    return true;
  }
  // y = mul(n, scale), n a single-use normalization.
  std::optional<Match> match_scaled(const ir::CallNode& y) const {
    if (!is(y, mul_) || y.num_outputs() != 1) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const Value& nv = y.args()[i];
      if (nv.node->kind() != ir::NodeKind::kCall || uses_.of_node(nv.node.get()) != 1) continue;
      std::optional<Match> m = match_normalized(nv.node->as_call());
      if (!m || !scale_param(y.args()[1 - i], *m) || y.output_types()[0] != m->x.type()) continue;
      m->scale = y.args()[1 - i];
      return m;
    }
    return std::nullopt;
  }
  // s = sqrt(add(reduce_mean(pow(x, 2) | mul(x, x)), eps)), single-use, for the given x.
  std::optional<Match> match_root_mean_square(const Value& sv, const Value& x) const {
    const ir::CallNode* s = single_use_call(sv, sqrt_);
    if (!s) return std::nullopt;
    const ir::CallNode* e = single_use_call(s->args()[0], add_);
    if (!e) return std::nullopt;
    double eps = 0;
    const ir::CallNode* v = nullptr;
    for (int i = 0; i < 2 && !v; ++i) {
      if (scalar_constant_value(e->args()[1 - i], &eps)) v = single_use_call(e->args()[i], reduce_mean_);
    }
    if (!v || !(eps >= 0)) return std::nullopt;
    bool square = false;
    if (const ir::CallNode* pw = single_use_call(v->args()[0], pow_)) {
      square = pw->args()[0] == x && is_scalar(pw->args()[1], 2.0) && pw->output_types()[0] == x.type();
    } else if (const ir::CallNode* sq = single_use_call(v->args()[0], mul_)) {
      square = sq->args()[0] == x && sq->args()[1] == x;
    }
    const int64_t axis = trailing_reduce_axis(*v);
    if (!square || axis < 0 || !ir::is_float(x.type().dtype)) return std::nullopt;
    Match m;
    m.x = x;
    m.axis = axis;
    m.epsilon = eps;
    return m;
  }
  // n = div(x, s) | mul(x, reciprocal(s)) | mul(x, div(1, s)).
  std::optional<Match> match_normalized(const ir::CallNode& n) const {
    if (n.num_outputs() != 1) return std::nullopt;
    std::optional<Match> m;
    if (is(n, div_)) {
      m = match_root_mean_square(n.args()[1], n.args()[0]);
    } else if (is(n, mul_)) {
      for (int i = 0; i < 2 && !m; ++i) {
        const Value& rv = n.args()[1 - i];
        if (const ir::CallNode* r = single_use_call(rv, reciprocal_)) {
          m = match_root_mean_square(r->args()[0], n.args()[i]);
        } else if (const ir::CallNode* d = single_use_call(rv, div_); d && is_scalar(d->args()[0], 1.0)) {
          m = match_root_mean_square(d->args()[1], n.args()[i]);
        }
      }
    }
    if (!m || n.output_types()[0] != m->x.type()) return std::nullopt;
    return m;
  }

  UseCounts uses_;
  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> users_;
  const ir::OpDef* add_ = op_ptr("add");
  const ir::OpDef* mul_ = op_ptr("mul");
  const ir::OpDef* div_ = op_ptr("div");
  const ir::OpDef* pow_ = op_ptr("pow");
  const ir::OpDef* sqrt_ = op_ptr("sqrt");
  const ir::OpDef* reciprocal_ = op_ptr("reciprocal");
  const ir::OpDef* reduce_mean_ = op_ptr("reduce_mean");
};

class Rewriter : public ir::GraphMutator {
 public:
  Rewriter(const ir::Graph& graph, PassContext& ctx) : GraphMutator("FuseRmsNorm"), ctx_(ctx), matcher_(graph), names_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& new_args) override {
    std::optional<Match> m = matcher_.match_root(node);
    if (!m) return rebuild_call(node, new_args);
    const Value x = mapped(m->x);
    const Value scale = m->scale ? mapped(*m->scale) : scalar_constant(names_, "rms_norm_scale", x.type().dtype, 1.0)->output();
    ++ctx_.stat("rms_norms");
    return {ir::make_call("rms_norm", {x, scale}, Attrs().set("axis", m->axis).set("epsilon", m->epsilon), node.name())->output()};
  }

 private:
  PassContext& ctx_;
  Matcher matcher_;
  NameSupply names_;
};

class FuseRmsNorm final : public Pass {
 public:
  const char* name() const override { return "FuseRmsNorm"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Rewriter(graph, ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_rms_norm() { return std::make_unique<FuseRmsNorm>(); }

}  // namespace kiln::pass
