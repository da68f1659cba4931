// Bound inference and loop-nest construction (see schedule_ops.h).
#include "schedule_ops.h"

#include <algorithm>
#include <map>

#include "kiln/support/error.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/tir/interval.h"
#include "kiln/tir/ir_mutator.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/printer.h"
#include "kiln/tir/simplify.h"
#include "simplify_linear.h"

namespace kiln::tir::detail {
namespace {

// Replaces reads of inlined stages by their expressions, recursively.
class Inliner : public IRMutator {
 public:
  explicit Inliner(const Schedule& s) : sched_(s) {}

 protected:
  Expr visit(const TensorLoad* op) override {
    Expr e = IRMutator::visit(op);
    const auto* load = e.as<TensorLoad>();
    const StageNode* st = sched_.find(load->op.get());
    if (!st || st->attach != AttachKind::kInline) return e;
    std::vector<std::pair<const Variable*, Expr>> sub;
    for (size_t d = 0; d < st->root_axis.size(); ++d) sub.push_back({st->root_axis[d].var().node(), load->indices[d]});
    return mutate(substitute(st->body, sub));
  }

 private:
  const Schedule& sched_;
};

constexpr int64_t kMaxStackBytes = 16 * 1024;

struct Guard {
  Expr cond;
  int depth;  // position of the innermost leaf it uses (-1: none)
};

class NestBuilder {
 public:
  explicit NestBuilder(const Schedule& s) : sched_(s), inliner_(s) {}

  Stmt build() {
    Stmt body = make_nop();
    const auto& stages = sched_.stages();
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
      StageNode* st = it->get();
      if (st->attach != AttachKind::kRoot) continue;
      std::vector<Range> dom;
      for (int64_t e : st->op.shape()) dom.push_back(Range::from_extent(e));
      Stmt nest = make_stage(st, dom);
      if (st->is_output) {
        body = Block::make({nest, body});
      } else {
        body = ProducerRealize::make(st->op, dom, st->scope, Block::make({nest, body}));
      }
    }
    for (const auto& st : stages) {
      if (st->attach == AttachKind::kAt && !placed_.count(st.get())) {
        throw UserError(UserErrorKind::kInvalidArgument, "stage '" + st->op.name() + "'",
                        "is attached (compute_at) to a loop of '" + st->attach_stage->op.name() +
                            "' that is not built (that stage is itself inlined or attached to a removed loop)",
                        "attach it to a stage that is computed");
      }
    }
    return body;
  }

 private:
  // Loop nest of one stage whose root axes cover `root_dom` (constant extents).
  Stmt make_stage(StageNode* st, const std::vector<Range>& root_dom) {
    std::map<const IterVarNode*, int64_t> ext;
    std::vector<Guard> guards;
    for (size_t d = 0; d < st->root_axis.size(); ++d) {
      int64_t e;
      KILN_ICHECK(as_const_int(root_dom[d].extent, &e)) << "non-constant extent for " << st->op.name();
      ext[st->root_axis[d].get()] = e;
    }
    for (const IterVar& r : st->reduce_axis) {
      int64_t e;
      KILN_ICHECK(as_const_int(r->dom.extent, &e)) << "non-constant reduction extent";
      ext[r.get()] = e;
    }
    struct SplitGuard {
      const IterVarNode* parent;
      int64_t extent;
    };
    std::vector<SplitGuard> split_guards;
    for (const IterRelation& rel : st->relations) {
      if (rel.kind == IterRelation::Kind::kSplit) {
        const SplitRelation& s = rel.split;
        const int64_t e = ext.at(s.parent.get());
        const int64_t f = s.factor > 0 ? s.factor : (e + s.nparts - 1) / s.nparts;
        const int64_t o = s.factor > 0 ? (e + f - 1) / f : s.nparts;
        ext[s.inner.get()] = std::max<int64_t>(f, 1);
        ext[s.outer.get()] = o;
        if (o * f != e) split_guards.push_back({s.parent.get(), e});
      } else {
        const FuseRelation& f = rel.fuse;
        ext[f.fused.get()] = ext.at(f.outer.get()) * ext.at(f.inner.get());
      }
    }
    // Values of every axis in terms of the leaves (relative to the root minimum).
    std::map<const IterVarNode*, Expr> value;
    for (const IterVar& l : st->leaf) value[l.get()] = l.var();
    for (auto it = st->relations.rbegin(); it != st->relations.rend(); ++it) {
      if (it->kind == IterRelation::Kind::kSplit) {
        const SplitRelation& s = it->split;
        value[s.parent.get()] = value.at(s.outer.get()) * make_int(ext.at(s.inner.get())) + value.at(s.inner.get());
      } else {
        const FuseRelation& f = it->fuse;
        const Expr fv = value.at(f.fused.get());
        const Expr ie = make_int(ext.at(f.inner.get()));
        value[f.outer.get()] = floordiv(fv, ie);
        value[f.inner.get()] = floormod(fv, ie);
      }
    }
    std::vector<std::pair<const Variable*, Expr>> sub;
    std::vector<Expr> idx;
    for (size_t d = 0; d < st->root_axis.size(); ++d) {
      Expr v = simplify(root_dom[d].min + value.at(st->root_axis[d].get()));
      sub.push_back({st->root_axis[d].var().node(), v});
      idx.push_back(v);
    }
    for (const IterVar& r : st->reduce_axis) sub.push_back({r.var().node(), value.at(r.get())});

    auto leaf_depth = [&](const Expr& e) {
      int depth = -1;
      struct Uses : IRVisitor {
        std::vector<const Variable*> vars;
        void visit(const Variable* v) override { vars.push_back(v); }
      } uses;
      uses.visit_expr(e);
      for (int k = 0; k < static_cast<int>(st->leaf.size()); ++k) {
        for (const Variable* v : uses.vars) {
          if (v == st->leaf[k].var().node()) depth = std::max(depth, k);
        }
      }
      return depth;
    };
    for (const SplitGuard& g : split_guards) {
      Expr c = value.at(g.parent) < make_int(g.extent);
      guards.push_back({c, leaf_depth(c)});
    }
    if (st->attach == AttachKind::kAt) {
      for (size_t d = 0; d < st->root_axis.size(); ++d) {
        Expr c = idx[d] < make_int(st->op.shape()[d]) && idx[d] >= make_int(0);
        guards.push_back({c, leaf_depth(c)});
      }
    }

    // The computation at the innermost level.
    Expr body = inliner_.mutate(st->body);
    Stmt main, init;
    if (const auto* red = body.as<Reduce>()) {
      Expr src = substitute(red->source, sub);
      Expr acc = TensorLoad::make(st->op, idx);
      Expr combined;
      switch (red->op) {
        case ReduceOp::kSum: combined = acc + src; break;
        case ReduceOp::kMax: combined = max(acc, src); break;
        case ReduceOp::kMin: combined = min(acc, src); break;
        case ReduceOp::kProd: combined = acc * src; break;
      }
      main = ProducerStore::make(st->op, combined, idx);
      init = ProducerStore::make(st->op, reduce_identity(red->op, Type(st->op.dtype())), idx);
    } else {
      main = ProducerStore::make(st->op, substitute(body, sub), idx);
    }

    // Where the init goes: at the first reduction leaf when all data-parallel leaves precede it.
    int first_reduce = -1;
    bool interleaved = false;
    for (int k = 0; k < static_cast<int>(st->leaf.size()); ++k) {
      if (st->leaf[k]->kind == IterKind::kReduce) {
        if (first_reduce < 0) first_reduce = k;
      } else if (first_reduce >= 0) {
        interleaved = true;
      }
    }

    const int n = static_cast<int>(st->leaf.size());
    const std::vector<std::vector<Stmt>> prefetch = prefetch_stmts(st, body, sub, ext);
    Stmt s = main;
    for (int d = n - 1; d >= -1; --d) {
      for (const Guard& g : guards) {
        if (g.depth == d) s = IfThenElse::make(g.cond, s);
      }
      if (d < 0) break;
      s = attach_stages(st, d, body, sub, ext, s);
      if (!prefetch[d].empty()) {
        std::vector<Stmt> seq = prefetch[d];
        seq.push_back(s);
        s = Block::make(seq);
      }
      const IterVar& l = st->leaf[d];
      s = For::make(l.var(), make_int(0), make_int(ext.at(l.get())), st->kind_of(l), s);
      if (init.defined() && !interleaved && d == first_reduce) s = Block::make({init, s});
    }
    if (init.defined() && interleaved) {
      Stmt is = init;
      for (int d = n - 1; d >= -1; --d) {
        for (const Guard& g : guards) {
          if (g.depth == d && (d < 0 || st->leaf[d]->kind == IterKind::kDataPar)) is = IfThenElse::make(g.cond, is);
        }
        if (d < 0) break;
        const IterVar& l = st->leaf[d];
        if (l->kind == IterKind::kReduce) continue;
        is = For::make(l.var(), make_int(0), make_int(ext.at(l.get())), st->kind_of(l), is);
      }
      s = Block::make({is, s});
    }
    return s;
  }

  // The prefetch hints of `st` (Stage::prefetch) per leaf depth: for each element of the tensor
  // that the (inlined) body reads, Evaluate(prefetch(tensor[index])) with the index at the leaf
  // `axis` + offset and the leaves inside it at 0; identical accesses once. A spread prefetch
  // goes to the spread leaf instead (spread_prefetch).
  std::vector<std::vector<Stmt>> prefetch_stmts(const StageNode* st, const Expr& body,
                                                const std::vector<std::pair<const Variable*, Expr>>& sub,
                                                const std::map<const IterVarNode*, int64_t>& ext) const {
    std::vector<std::vector<Stmt>> at(st->leaf.size());
    const Expr src = body.as<Reduce>() ? body.as<Reduce>()->source : body;
    for (const PrefetchSpec& pf : st->prefetches) {
      const int d = leaf_position(st, pf.axis);
      std::vector<int> spread_at;  // the spread leaves' positions, increasing, all inside d
      for (const IterVar& sv : pf.spread) {
        const int p = leaf_position(st, sv);
        if (p <= (spread_at.empty() ? d : spread_at.back())) {
          throw UserError(UserErrorKind::kInvalidArgument, "stage '" + st->op.name() + "'",
                          "spreads its prefetch of '" + pf.tensor.name() + "' over loop '" + sv.var().name() +
                              "', which is not inside loop '" + pf.axis.var().name() + "' (and the spread loops before it)",
                          "spread over loops nested inside the prefetch's axis, outermost first");
        }
        spread_at.push_back(p);
      }
      const int ds = spread_at.empty() ? d : spread_at.back();
      for (int k = 0; k <= ds; ++k) {
        if (st->kind_of(st->leaf[k]) == ForKind::kVectorized) {
          throw UserError(UserErrorKind::kInvalidArgument, "stage '" + st->op.name() + "'",
                          "prefetches '" + pf.tensor.name() + "' inside loop '" + st->leaf[ds].var().name() +
                              "', which is (or lies in) the vectorized loop '" + st->leaf[k].var().name() +
                              "': a prefetch is one scalar address",
                          "prefetch at a loop outside the vectorized one");
        }
      }
      std::vector<std::pair<const Variable*, Expr>> shift = {{st->leaf[d].var().node(), st->leaf[d].var() + make_int(pf.offset)}};
      for (size_t k = d + 1; k < st->leaf.size(); ++k) shift.push_back({st->leaf[k].var().node(), make_int(0)});
      std::vector<std::vector<Expr>> seen;
      for (const auto& idx : reads_of(src, pf.tensor.get())) {
        std::vector<Expr> a;
        for (const Expr& i : idx) a.push_back(simplify(substitute(substitute(i, sub), shift)));
        const bool dup = std::any_of(seen.begin(), seen.end(), [&](const std::vector<Expr>& b) {
          return std::equal(a.begin(), a.end(), b.begin(), [](const Expr& x, const Expr& y) { return equal(x, y); });
        });
        if (dup) continue;
        seen.push_back(a);
        if (!spread_at.empty()) {
          for (Stmt& p : spread_prefetch(st, pf, d, spread_at, idx, a, sub, ext)) at[ds].push_back(std::move(p));
        } else {
          at[d].push_back(Evaluate::make(Call::make(CallOp::kPrefetch, {TensorLoad::make(pf.tensor, a)})));
        }
      }
      if (seen.empty()) {
        throw UserError(UserErrorKind::kInvalidArgument, "stage '" + st->op.name() + "'",
                        "prefetches '" + pf.tensor.name() + "', which its own loops do not read (it is read by a stage it reads)",
                        "prefetch in the stage whose body reads the tensor");
      }
    }
    return at;
  }

  // A spread prefetch (Stage::prefetch with spread leaves): the span of flat elements that one
  // read `idx` covers over every iteration of the leaves inside `axis` (leaf d), with `axis`
  // `offset` iterations ahead, cut into cache lines; iteration p of the spread leaves (at
  // `spread_at`, counted together: P iterations) prefetches lines [p * L, (p + 1) * L),
  // L = ceil(lines / P). Each address is the read at the first inner iteration (`first_idx`)
  // with the line's element offset added to its last dimension (the flattener's sum of index x
  // stride gives the same address, also for a buffer realized over a region). The read's flat
  // index must be affine in the inner leaves (a bounded difference from its value at their first
  // iteration).
  std::vector<Stmt> spread_prefetch(const StageNode* st, const PrefetchSpec& pf, int d, const std::vector<int>& spread_at,
                                    const std::vector<Expr>& idx, const std::vector<Expr>& first_idx,
                                    const std::vector<std::pair<const Variable*, Expr>>& sub,
                                    const std::map<const IterVarNode*, int64_t>& ext) const {
    constexpr int64_t kLineBytes = 64;
    const ir::Shape& shape = pf.tensor.shape();
    Expr flat = make_int(0);
    for (size_t i = 0; i < idx.size(); ++i) {
      int64_t stride = 1;
      for (size_t j = i + 1; j < shape.size(); ++j) stride *= shape[j];
      flat = flat + substitute(idx[i], sub) * make_int(stride);
    }
    flat = simplify(substitute(flat, {{st->leaf[d].var().node(), st->leaf[d].var() + make_int(pf.offset)}}));
    std::vector<std::pair<const Variable*, Expr>> first;
    VarBounds inner;
    for (size_t k = d + 1; k < st->leaf.size(); ++k) {
      first.push_back({st->leaf[k].var().node(), make_int(0)});
      inner[st->leaf[k].var().node()] = Interval::range(0, ext.at(st->leaf[k].get()) - 1);
    }
    const Expr base = simplify(substitute(flat, first));
    const Interval span = bound_of(simplify(flat - base), inner);
    if (!span.has_lo() || !span.has_hi()) {
      throw UserError(UserErrorKind::kInvalidArgument, "stage '" + st->op.name() + "'",
                      "spreads a prefetch of '" + pf.tensor.name() + "' whose index " + to_string(flat) +
                          " is not affine in the loops inside '" + pf.axis.var().name() + "'",
                      "prefetch without a spread loop");
    }
    const int64_t elem = static_cast<int64_t>(ir::dtype_size(pf.tensor.dtype()));
    const int64_t bytes = (span.hi - span.lo + 1) * elem;
    const int64_t lines = bytes / kLineBytes + (bytes % kLineBytes != 0 ? 1 : 0);
    int64_t parts = 1;
    Expr part = make_int(0);
    for (int p : spread_at) {
      const int64_t e = ext.at(st->leaf[p].get());
      part = part * make_int(e) + st->leaf[p].var();
      parts *= e;
    }
    const int64_t per_part = (lines + parts - 1) / parts;
    const int64_t line_elems = std::max<int64_t>(1, kLineBytes / elem);
    std::vector<Stmt> out;
    for (int64_t l = 0; l < per_part; ++l) {
      std::vector<Expr> at = first_idx;
      at.back() = simplify(at.back() + make_int(span.lo) + (part * make_int(per_part) + make_int(l)) * make_int(line_elems));
      out.push_back(Evaluate::make(Call::make(CallOp::kPrefetch, {TensorLoad::make(pf.tensor, at)})));
    }
    return out;
  }

  // Wraps `inner` (the body of leaf loop `d` of `consumer`) with the stages attached there.
  Stmt attach_stages(StageNode* consumer, int d, const Expr& consumer_body,
                     const std::vector<std::pair<const Variable*, Expr>>& sub,
                     const std::map<const IterVarNode*, int64_t>& ext, Stmt inner) {
    const auto& stages = sched_.stages();
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
      StageNode* p = it->get();
      if (p->attach != AttachKind::kAt || p->attach_stage != consumer || !p->attach_axis.same_as(consumer->leaf[d])) {
        continue;
      }
      std::vector<Range> region = infer_region(p, consumer, d, consumer_body, sub, ext);
      placed_[p] = true;
      Stmt nest = make_stage(p, region);
      // A small region inside a loop lives on the stack (per iteration, per thread).
      int64_t bytes = static_cast<int64_t>(ir::dtype_size(p->op.dtype()));
      for (const Range& r : region) bytes *= r.extent.as<IntImm>()->value;
      const MemoryScope scope = bytes <= kMaxStackBytes ? MemoryScope::kStack : p->scope;
      inner = ProducerRealize::make(p->op, region, scope, Block::make({nest, inner}));
    }
    return inner;
  }

  // The region of `p` that the iterations of `consumer`'s leaves deeper than `d` read: directly in
  // the consumer's body, or in the bodies of stages attached inside that loop (over their own
  // regions).
  std::vector<Range> infer_region(StageNode* p, StageNode* consumer, int d, const Expr& consumer_body,
                                  const std::vector<std::pair<const Variable*, Expr>>& sub,
                                  const std::map<const IterVarNode*, int64_t>& ext) {
    std::vector<std::vector<Expr>> accesses;  // in terms of the consumer's leaves (and `extra`)
    std::map<const Variable*, int64_t> inner;  // inner var -> extent, iterating from 0
    for (const auto& idx : reads_of(consumer_body, p)) {
      std::vector<Expr> a;
      for (const Expr& i : idx) a.push_back(simplify(substitute(i, sub)));
      accesses.push_back(a);
    }
    for (int k = d + 1; k < static_cast<int>(consumer->leaf.size()); ++k) {
      inner[consumer->leaf[k].var().node()] = ext.at(consumer->leaf[k].get());
    }
    for (const auto& ys : sched_.stages()) {
      StageNode* y = ys.get();
      if (y == p || y->attach != AttachKind::kAt || y->attach_stage != consumer) continue;
      Expr ybody = inliner_.mutate(y->body);
      if (const auto* r = ybody.as<Reduce>()) ybody = r->source;
      const auto yreads = reads_of(ybody, p);
      if (yreads.empty()) continue;
      const int dy = leaf_position(consumer, y->attach_axis);
      if (dy < d) {
        throw UserError(UserErrorKind::kInvalidArgument, "stage '" + p->op.name() + "'",
                        "is computed inside loop '" + consumer->leaf[d].var().name() + "' of '" + consumer->op.name() +
                            "' but its reader '" + y->op.name() + "' is computed outside that loop",
                        "attach '" + p->op.name() + "' at or outside the loop where '" + y->op.name() + "' is attached");
      }
      std::vector<Range> yregion = infer_region(y, consumer, dy, consumer_body, sub, ext);
      std::vector<std::pair<const Variable*, Expr>> ysub;
      for (size_t k = 0; k < y->root_axis.size(); ++k) {
        Var fresh(y->root_axis[k].var().name());
        inner[fresh.node()] = yregion[k].extent.as<IntImm>()->value;
        ysub.push_back({y->root_axis[k].var().node(), yregion[k].min + fresh});
      }
      for (const IterVar& r : y->reduce_axis) {
        Var fresh(r.var().name());
        inner[fresh.node()] = r->dom.extent.as<IntImm>()->value;
        ysub.push_back({r.var().node(), fresh});
      }
      for (const auto& idx : yreads) {
        std::vector<Expr> a;
        for (const Expr& i : idx) a.push_back(simplify(substitute(i, ysub)));
        accesses.push_back(a);
      }
    }
    if (accesses.empty()) {
      throw UserError(UserErrorKind::kInvalidArgument, "stage '" + p->op.name() + "'",
                      "is attached to loop '" + consumer->leaf[d].var().name() + "' of '" + consumer->op.name() +
                          "', but neither that stage nor a stage attached to it reads it",
                      "attach it inside a stage that reads it");
    }
    VarBounds all;  // every variable over its full range, for the fallback
    for (const IterVar& l : consumer->leaf) all[l.var().node()] = Interval::range(0, ext.at(l.get()) - 1);
    for (const auto& [v, e] : inner) all[v] = Interval::range(0, e - 1);

    std::vector<Range> region;
    for (int dim = 0; dim < p->op.ndim(); ++dim) {
      const int64_t size = p->op.shape()[dim];
      bool ok = true;
      Expr sym;
      int64_t lo = Interval::kPosInf, hi = Interval::kNegInf;
      for (const auto& acc : accesses) {
        if (!ok) break;
        const Expr& e = acc[dim];
        Linear l = to_linear(e);
        Linear s;
        s.type = l.type;
        int64_t alo = l.constant, ahi = l.constant;
        for (const LinearTerm& t : l.terms) {
          const auto* v = t.term.as<Variable>();
          if (v && inner.count(v)) {
            const int64_t span = t.coeff * (inner.at(v) - 1);
            alo += std::min<int64_t>(0, span);
            ahi += std::max<int64_t>(0, span);
            continue;
          }
          bool uses_inner = false;
          struct Uses : IRVisitor {
            const std::map<const Variable*, int64_t>* inner;
            bool* found;
            void visit(const Variable* v) override { *found = *found || inner->count(v); }
          } u;
          u.inner = &inner;
          u.found = &uses_inner;
          u.visit_expr(t.term);
          if (uses_inner) {
            // Non-linear in the inner loops: bound it over all loops' ranges.
            Interval b = bound_of(t.term * make_int(t.coeff), all);
            if (!b.has_lo() || !b.has_hi()) {
              ok = false;
              break;
            }
            alo += b.lo;
            ahi += b.hi;
            continue;
          }
          s.add_term(t.term, t.coeff);
        }
        if (!ok) break;
        s.normalize();
        Expr se = from_linear(s);
        if (!sym.defined()) {
          sym = se;
        } else if (!equal(sym, se)) {
          ok = false;
          break;
        }
        lo = std::min(lo, alo);
        hi = std::max(hi, ahi);
      }
      if (!ok || hi - lo + 1 >= size) {
        region.push_back(Range::from_extent(size));
      } else {
        region.emplace_back(simplify(sym + make_int(lo)), make_int(hi - lo + 1));
      }
    }
    return region;
  }

  static std::vector<std::vector<Expr>> reads_of(const Expr& body, const StageNode* p) { return reads_of(body, p->op.get()); }
  static std::vector<std::vector<Expr>> reads_of(const Expr& body, const OperationNode* target) {
    struct Collect : IRVisitor {
      const OperationNode* target;
      std::vector<std::vector<Expr>> accesses;
      void visit(const TensorLoad* op) override {
        if (op->op.get() == target) accesses.push_back(op->indices);
        IRVisitor::visit(op);
      }
    } c;
    c.target = target;
    c.visit_expr(body);
    return c.accesses;
  }

  static int leaf_position(const StageNode* st, const IterVar& iv) {
    for (int k = 0; k < static_cast<int>(st->leaf.size()); ++k) {
      if (st->leaf[k].same_as(iv)) return k;
    }
    KILN_IFAIL() << "axis " << iv.var().name() << " is not a loop of " << st->op.name();
  }

  const Schedule& sched_;
  Inliner inliner_;
  std::map<const StageNode*, bool> placed_;
};

// ---- storage flattening ----

struct Binding {
  Buffer buffer;
  std::vector<Expr> mins;
  std::vector<int64_t> strides;
};

class Flattener : public IRMutator {
 public:
  explicit Flattener(const std::vector<std::pair<const OperationNode*, Buffer>>& params) {
    for (const auto& [op, buf] : params) {
      Binding b;
      b.buffer = buf;
      b.mins.assign(buf->shape.size(), make_int(0));
      b.strides = strides_of(buf->shape);
      map_[op].push_back(b);
    }
  }

 protected:
  static std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
    return s;
  }

  const Binding& binding(const OperationNode* op) {
    auto it = map_.find(op);
    if (it == map_.end() || it->second.empty()) {
      throw UserError(UserErrorKind::kInvalidArgument, "tensor '" + op->name + "'",
                      "is read by the kernel but is not among its arguments",
                      "pass every placeholder (and every output) in lower()'s argument list");
    }
    return it->second.back();
  }

  Expr flat(const Binding& b, const std::vector<Expr>& idx) {
    Expr e = make_int(0);
    for (size_t d = 0; d < idx.size(); ++d) e = e + (mutate(idx[d]) - b.mins[d]) * make_int(b.strides[d]);
    return e;
  }

  Expr visit(const TensorLoad* op) override {
    const Binding& b = binding(op->op.get());
    return Load::make(b.buffer, flat(b, op->indices));
  }

  Stmt visit(const ProducerStore* op) override {
    const Binding& b = binding(op->op.get());
    return Store::make(b.buffer, mutate(op->value), flat(b, op->indices));
  }

  Stmt visit(const ProducerRealize* op) override {
    std::vector<int64_t> shape;
    Binding b;
    for (const Range& r : op->bounds) {
      int64_t e;
      KILN_ICHECK(as_const_int(r.extent, &e)) << "realize of " << op->op->name << " with a non-constant extent";
      shape.push_back(e);
      b.mins.push_back(mutate(r.min));
    }
    b.buffer = Buffer::make(op->op->name, op->op->dtype, shape);
    b.strides = strides_of(shape);
    map_[op->op.get()].push_back(b);
    Stmt body = mutate(op->body);
    map_[op->op.get()].pop_back();
    return Allocate::make(b.buffer, op->scope, 64, body);
  }

 private:
  std::map<const OperationNode*, std::vector<Binding>> map_;
};

}  // namespace

Stmt schedule_ops(const Schedule& sched) { return NestBuilder(sched).build(); }

Stmt storage_flatten(const Stmt& s, const std::vector<std::pair<const OperationNode*, Buffer>>& params) {
  return Flattener(params).mutate(s);
}

}  // namespace kiln::tir::detail
