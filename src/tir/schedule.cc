// Schedule primitives: each validates its arguments (UserError naming stage and axis), updates
// the stage's data and records a printable step.
#include "kiln/tir/schedule.h"

#include <algorithm>
#include <functional>
#include <sstream>

#include "kiln/support/error.h"
#include "kiln/tir/ir_mutator.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

[[noreturn]] void fail(const StageNode* s, const std::string& reason, const std::string& hint = "") {
  throw UserError(UserErrorKind::kInvalidArgument, "stage '" + s->op.name() + "'", reason, hint);
}

// A derived axis: its domain is found by bound inference at lowering, so it is declared empty.
IterVar derived_axis(const std::string& name, IterKind kind) {
  return IterVar::make(Var(name), Range::from_extent(0), kind);
}

bool reads(const Expr& body, const OperationNode* op) {
  struct Finder : IRVisitor {
    const OperationNode* target;
    bool found = false;
    void visit(const TensorLoad* l) override {
      found = found || l->op.get() == target;
      IRVisitor::visit(l);
    }
  } f;
  f.target = op;
  f.visit_expr(body);
  return f.found;
}

// True when `body` reads `op` directly or through the computes it reads, following each compute's
// stage body in `sched` (after cache_write a stage reads its ".local" copy, not its old inputs).
bool reads_transitively(const Schedule& sched, const Expr& body, const OperationNode* op) {
  if (reads(body, op)) return true;
  for (const Tensor& t : tensors_read(body)) {
    if (t->kind != OpKind::kCompute) continue;
    const StageNode* st = sched.find(t.get());
    if (reads_transitively(sched, st ? st->body : t->body, op)) return true;
  }
  return false;
}

}  // namespace

ForKind StageNode::kind_of(const IterVar& iv) const {
  for (const auto& [n, k] : kinds) {
    if (n == iv.get()) return k;
  }
  return ForKind::kSerial;
}

// ---- Schedule ----

Schedule::Schedule(const std::vector<Tensor>& outputs) : outputs_(outputs) {
  std::vector<const OperationNode*> visited;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    if (std::find(visited.begin(), visited.end(), t.get()) != visited.end()) return;
    visited.push_back(t.get());
    if (t->kind != OpKind::kCompute) return;
    for (const Tensor& in : t->inputs()) visit(in);
    auto s = std::make_unique<StageNode>();
    s->op = t;
    s->body = t->body;
    s->root_axis = t->axis;
    s->reduce_axis = t->reduce_axis();
    s->leaf = s->root_axis;
    s->leaf.insert(s->leaf.end(), s->reduce_axis.begin(), s->reduce_axis.end());
    stages_.push_back(std::move(s));
  };
  for (const Tensor& t : outputs) {
    if (!t.defined() || t->kind != OpKind::kCompute) {
      throw UserError(UserErrorKind::kInvalidArgument, "schedule output '" + (t.defined() ? t.name() : "?") + "'",
                      "is not a compute", "schedule the tensors made by compute()");
    }
    visit(t);
  }
  for (const Tensor& t : outputs) find(t.get())->is_output = true;
}

StageNode* Schedule::find(const OperationNode* op) const {
  for (const auto& s : stages_) {
    if (s->op.get() == op) return s.get();
  }
  return nullptr;
}

Stage Schedule::operator[](const Tensor& t) {
  StageNode* s = t.defined() ? find(t.get()) : nullptr;
  if (!s) {
    throw UserError(UserErrorKind::kNotFound, "tensor '" + (t.defined() ? t.name() : "?") + "'",
                    "has no stage in this schedule (a placeholder, or not reachable from the outputs)", "");
  }
  return Stage(this, s);
}

Tensor Schedule::cache_write(const Tensor& t, MemoryScope scope) {
  StageNode* s = (*this)[t].node();
  if (!s->relations.empty() || s->attach != AttachKind::kRoot) {
    fail(s, "cache_write must come before other primitives on the stage", "call cache_write first");
  }
  auto* n = new OperationNode;
  n->kind = OpKind::kCompute;
  n->name = t.name() + ".local";
  n->dtype = t.dtype();
  n->shape = t.shape();
  std::vector<std::pair<const Variable*, Expr>> sub;
  for (const IterVar& iv : s->root_axis) {
    Var v(iv.var().name());
    n->axis.push_back(IterVar::make(v, iv->dom, IterKind::kDataPar));
    sub.push_back({iv.var().node(), v});
  }
  n->body = substitute(s->body, sub);
  Tensor local(n);

  auto ls = std::make_unique<StageNode>();
  ls->op = local;
  ls->body = n->body;
  ls->root_axis = n->axis;
  ls->reduce_axis = s->reduce_axis;
  ls->leaf = ls->root_axis;
  ls->leaf.insert(ls->leaf.end(), ls->reduce_axis.begin(), ls->reduce_axis.end());
  ls->scope = scope;

  std::vector<Expr> idx(s->root_axis.begin(), s->root_axis.end());
  s->body = local(idx);
  s->reduce_axis.clear();
  s->leaf = s->root_axis;
  auto pos = std::find_if(stages_.begin(), stages_.end(), [&](const auto& p) { return p.get() == s; });
  stages_.insert(pos, std::move(ls));
  record("cache_write(" + t.name() + ", " + memory_scope_name(scope) + ") -> " + local.name());
  return local;
}

std::string Schedule::to_string() const {
  std::ostringstream o;
  for (const std::string& s : steps_) o << s << "\n";
  return o.str();
}

// ---- Stage ----

IterVar Stage::axis(int i) const {
  if (i < 0 || i >= static_cast<int>(node_->root_axis.size())) {
    fail(node_, "has no axis " + std::to_string(i) + " (it has " + std::to_string(node_->root_axis.size()) + ")");
  }
  return node_->root_axis[i];
}

IterVar Stage::reduce_axis(int i) const {
  if (i < 0 || i >= static_cast<int>(node_->reduce_axis.size())) {
    fail(node_, "has no reduction axis " + std::to_string(i) + " (it has " +
                    std::to_string(node_->reduce_axis.size()) + ")");
  }
  return node_->reduce_axis[i];
}

void Stage::check_leaf(const IterVar& iv, const char* primitive) const {
  if (!iv.defined() || std::find_if(node_->leaf.begin(), node_->leaf.end(), [&](const IterVar& l) {
                         return l.same_as(iv);
                       }) == node_->leaf.end()) {
    fail(node_, std::string(primitive) + ": axis '" + (iv.defined() ? iv.var().name() : "?") +
                    "' is not a current loop of this stage",
         "use the axes returned by split/fuse of this stage (a split axis is replaced by its parts)");
  }
}

std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, int64_t factor) {
  check_leaf(parent, "split");
  if (factor <= 0) fail(node_, "split of '" + parent.var().name() + "' by factor " + std::to_string(factor), "use a factor >= 1");
  IterVar outer = derived_axis(parent.var().name() + ".outer", parent->kind);
  IterVar inner = derived_axis(parent.var().name() + ".inner", parent->kind);
  IterRelation r{IterRelation::Kind::kSplit, SplitRelation{parent, outer, inner, factor, 0}, {}};
  node_->relations.push_back(r);
  auto it = std::find_if(node_->leaf.begin(), node_->leaf.end(), [&](const IterVar& l) { return l.same_as(parent); });
  *it = inner;
  node_->leaf.insert(it, outer);
  sched_->record("split(" + name() + ", " + parent.var().name() + ", factor=" + std::to_string(factor) + ") -> " +
                 outer.var().name() + ", " + inner.var().name());
  return {outer, inner};
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& parent, int64_t nparts) {
  check_leaf(parent, "split_nparts");
  if (nparts <= 0) fail(node_, "split of '" + parent.var().name() + "' into " + std::to_string(nparts) + " parts", "use nparts >= 1");
  IterVar outer = derived_axis(parent.var().name() + ".outer", parent->kind);
  IterVar inner = derived_axis(parent.var().name() + ".inner", parent->kind);
  node_->relations.push_back({IterRelation::Kind::kSplit, SplitRelation{parent, outer, inner, 0, nparts}, {}});
  auto it = std::find_if(node_->leaf.begin(), node_->leaf.end(), [&](const IterVar& l) { return l.same_as(parent); });
  *it = inner;
  node_->leaf.insert(it, outer);
  sched_->record("split(" + name() + ", " + parent.var().name() + ", nparts=" + std::to_string(nparts) + ") -> " +
                 outer.var().name() + ", " + inner.var().name());
  return {outer, inner};
}

std::vector<IterVar> Stage::tile(const IterVar& x, const IterVar& y, int64_t fx, int64_t fy) {
  auto [xo, xi] = split(x, fx);
  auto [yo, yi] = split(y, fy);
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  check_leaf(outer, "fuse");
  check_leaf(inner, "fuse");
  auto& leaf = node_->leaf;
  auto po = std::find_if(leaf.begin(), leaf.end(), [&](const IterVar& l) { return l.same_as(outer); });
  auto pi = std::find_if(leaf.begin(), leaf.end(), [&](const IterVar& l) { return l.same_as(inner); });
  if (pi != po + 1) {
    fail(node_, "fuse: '" + outer.var().name() + "' is not immediately outside '" + inner.var().name() + "'",
         "reorder them to be adjacent first");
  }
  if (outer->kind != inner->kind) fail(node_, "fuse of a data-parallel and a reduction axis");
  IterVar fused = derived_axis(outer.var().name() + "." + inner.var().name() + ".fused", outer->kind);
  node_->relations.push_back({IterRelation::Kind::kFuse, {}, FuseRelation{outer, inner, fused}});
  *po = fused;
  leaf.erase(pi);
  sched_->record("fuse(" + name() + ", " + outer.var().name() + ", " + inner.var().name() + ") -> " + fused.var().name());
  return fused;
}

Stage& Stage::reorder(const std::vector<IterVar>& order) {
  std::vector<size_t> pos;
  for (const IterVar& iv : order) {
    check_leaf(iv, "reorder");
    size_t p = std::find_if(node_->leaf.begin(), node_->leaf.end(), [&](const IterVar& l) { return l.same_as(iv); }) -
               node_->leaf.begin();
    if (std::find(pos.begin(), pos.end(), p) != pos.end()) fail(node_, "reorder names '" + iv.var().name() + "' twice");
    pos.push_back(p);
  }
  std::vector<size_t> sorted = pos;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < order.size(); ++k) node_->leaf[sorted[k]] = order[k];
  std::string names;
  for (const IterVar& iv : order) names += (names.empty() ? "" : ", ") + iv.var().name();
  sched_->record("reorder(" + name() + ", " + names + ")");
  return *this;
}

Stage& Stage::set_kind(const IterVar& iv, ForKind kind, const char* primitive) {
  check_leaf(iv, primitive);
  if (iv->kind == IterKind::kReduce && kind != ForKind::kUnrolled) {
    fail(node_, std::string(primitive) + " of reduction axis '" + iv.var().name() +
                    "' would race on the accumulator",
         "vectorize or parallelize a data-parallel axis; cache_write the reduction for register blocking");
  }
  for (auto& [n, k] : node_->kinds) {
    if (n == iv.get()) {
      k = kind;
      sched_->record(std::string(primitive) + "(" + name() + ", " + iv.var().name() + ")");
      return *this;
    }
  }
  node_->kinds.push_back({iv.get(), kind});
  sched_->record(std::string(primitive) + "(" + name() + ", " + iv.var().name() + ")");
  return *this;
}

Stage& Stage::vectorize(const IterVar& iv) { return set_kind(iv, ForKind::kVectorized, "vectorize"); }
Stage& Stage::unroll(const IterVar& iv) { return set_kind(iv, ForKind::kUnrolled, "unroll"); }
Stage& Stage::parallel(const IterVar& iv) { return set_kind(iv, ForKind::kParallel, "parallel"); }

Stage& Stage::prefetch(const Tensor& tensor, const IterVar& axis, int64_t offset) {
  return prefetch(tensor, axis, offset, std::vector<IterVar>{});
}

Stage& Stage::prefetch(const Tensor& tensor, const IterVar& axis, int64_t offset, const std::vector<IterVar>& spread) {
  check_leaf(axis, "prefetch");
  if (offset == 0) fail(node_, "prefetch of '" + tensor.name() + "' with offset 0", "prefetch at least one iteration ahead");
  if (!reads_transitively(*sched_, node_->body, tensor.get())) {
    fail(node_, "prefetch of '" + tensor.name() + "', which the stage does not read", "prefetch a tensor the stage reads");
  }
  std::string step = "prefetch(" + name() + ", " + tensor.name() + ", " + axis.var().name() + ", offset=" + std::to_string(offset);
  for (size_t k = 0; k < spread.size(); ++k) {
    check_leaf(spread[k], "prefetch");
    if (spread[k].same_as(axis)) fail(node_, "prefetch of '" + tensor.name() + "' spread over its own axis", "spread over loops inside the axis");
    step += (k == 0 ? ", spread=" : "+") + spread[k].var().name();
  }
  node_->prefetches.push_back({tensor, axis, offset, spread});
  sched_->record(step + ")");
  return *this;
}

Stage& Stage::compute_at(const Stage& consumer, const IterVar& axis) {
  if (node_->is_output) fail(node_, "compute_at of an output", "outputs are computed at the root");
  if (consumer.node_ == node_) fail(node_, "compute_at itself");
  consumer.check_leaf(axis, "compute_at");
  if (!reads_transitively(*sched_, consumer.node_->body, node_->op.get())) {
    fail(node_, "compute_at: stage '" + consumer.name() + "' does not read it",
         "attach a stage inside a stage that uses it");
  }
  node_->attach = AttachKind::kAt;
  node_->attach_stage = consumer.node_;
  node_->attach_axis = axis;
  sched_->record("compute_at(" + name() + ", " + consumer.name() + ", " + axis.var().name() + ")");
  return *this;
}

Stage& Stage::compute_inline() {
  if (node_->is_output) fail(node_, "compute_inline of an output", "outputs must be stored");
  if (!node_->reduce_axis.empty()) fail(node_, "compute_inline of a reduction", "keep reductions as their own stage");
  node_->attach = AttachKind::kInline;
  sched_->record("compute_inline(" + name() + ")");
  return *this;
}

Stage& Stage::compute_root() {
  node_->attach = AttachKind::kRoot;
  node_->attach_stage = nullptr;
  node_->attach_axis = IterVar();
  sched_->record("compute_root(" + name() + ")");
  return *this;
}

}  // namespace kiln::tir
