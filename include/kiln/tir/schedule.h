// Schedules: *how* to compute a set of tensor expressions. A Schedule has one Stage per compute
// operation reachable from its outputs; each stage holds its loop structure as data:
//   - root axes (the compute's data-parallel axes, then its reduction axes),
//   - relations derived from them by split and fuse,
//   - the ordered leaf axes (the loops, outermost first) with a ForKind each,
//   - where it is computed: at the root of the kernel, inlined into its consumers, or inside a
//     loop of another stage (compute_at).
// Every primitive application is also recorded as a printable step (`Schedule::steps()`), so a
// schedule can be logged, compared in tests and, later, stored as tuning records.
//
// Misuse (an axis of another stage, inlining an output or a reduction, attaching to a loop that
// is not a leaf, ...) throws UserError naming the stage and the axis.
#ifndef KILN_TIR_SCHEDULE_H_
#define KILN_TIR_SCHEDULE_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/tir/stmt.h"
#include "kiln/tir/tensor.h"

namespace kiln::tir {

// parent = outer * factor + inner; exactly one of factor/nparts is set (> 0) at creation.
struct SplitRelation {
  IterVar parent, outer, inner;
  int64_t factor = 0;  // inner extent
  int64_t nparts = 0;  // outer extent
};
// fused = outer * extent(inner) + inner
struct FuseRelation {
  IterVar outer, inner, fused;
};
struct IterRelation {
  enum class Kind { kSplit, kFuse } kind;
  SplitRelation split;
  FuseRelation fuse;
};

enum class AttachKind : uint8_t { kRoot, kInline, kAt };

// A software prefetch (Stage::prefetch): at the top of each iteration of leaf `axis`, the cache
// line of every element of `tensor` the stage reads is prefetched as it would be `offset`
// iterations of `axis` later (the leaves inside `axis` at their first iteration). With spread
// leaves, the whole span that iteration reads is prefetched instead, in equal parts at the top of
// each iteration of the `spread` leaves (inside `axis`, outermost first) taken together.
struct PrefetchSpec {
  Tensor tensor;
  IterVar axis;
  int64_t offset = 0;
  std::vector<IterVar> spread;  // empty: no spread
};

class Schedule;

struct StageNode {
  Tensor op;                           // the compute (its identity: the tensor it produces)
  Expr body;                           // what it computes (cache_write may redirect it)
  std::vector<IterVar> root_axis;      // data-parallel axes of the output
  std::vector<IterVar> reduce_axis;    // reduction axes (empty unless body is a Reduce)
  std::vector<IterRelation> relations;
  std::vector<IterVar> leaf;           // loop order, outermost first
  std::vector<std::pair<const IterVarNode*, ForKind>> kinds;  // non-serial leaves
  AttachKind attach = AttachKind::kRoot;
  StageNode* attach_stage = nullptr;
  IterVar attach_axis;
  bool is_output = false;
  MemoryScope scope = MemoryScope::kHeap;  // storage of an intermediate
  std::vector<PrefetchSpec> prefetches;
  ForKind kind_of(const IterVar& iv) const;
};

// A handle to one stage of a Schedule (valid while the Schedule lives).
class Stage {
 public:
  Stage(Schedule* sched, StageNode* node) : sched_(sched), node_(node) {}

  // The i-th data-parallel / reduction root axis.
  IterVar axis(int i) const;
  IterVar reduce_axis(int i) const;
  const std::vector<IterVar>& leaf_axes() const { return node_->leaf; }
  const std::string& name() const { return node_->op.name(); }

  // Splits `parent` (a leaf) into outer and inner leaves with inner extent `factor`. When the
  // extent is not a multiple, lowering guards the body with `parent < extent`.
  std::pair<IterVar, IterVar> split(const IterVar& parent, int64_t factor);
  // Splits `parent` into `nparts` outer iterations (inner extent ceil(extent / nparts)).
  std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, int64_t nparts);
  // split(x, fx), split(y, fy), reorder(x.outer, y.outer, x.inner, y.inner): a 2-D tile.
  // Returns {x.outer, y.outer, x.inner, y.inner}; recorded as those three steps.
  std::vector<IterVar> tile(const IterVar& x, const IterVar& y, int64_t fx, int64_t fy);
  // Fuses two adjacent leaves (outer immediately before inner) into one.
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  // Reorders the given leaves among the positions they occupy; others keep their places.
  Stage& reorder(const std::vector<IterVar>& order);
  Stage& vectorize(const IterVar& iv);
  Stage& unroll(const IterVar& iv);
  Stage& parallel(const IterVar& iv);
  // Software prefetch (TVM's prefetch): each iteration of leaf `axis` first prefetches the cache
  // lines of `tensor` (read by this stage's body) that the iteration `offset` steps later reads,
  // the loops inside `axis` at their first iteration. The address is not bounds-checked (a
  // prefetch never faults and never changes a value), so an offset may reach past the axis's
  // extent into the data the enclosing loops read next: e.g. a weight panel prefetched one whole
  // panel ahead (offset = the axis's extent) while the current one is multiplied.
  Stage& prefetch(const Tensor& tensor, const IterVar& axis, int64_t offset);
  // Spread prefetch: everything that iteration `offset` steps later of leaf `axis` reads of
  // `tensor` (the span of its flat addresses over the leaves inside `axis`: the index must be
  // affine in them), cut into cache lines and spread evenly over the iterations of the `spread`
  // leaves inside `axis` (outermost first; their iterations counted together, P in all):
  // iteration p of P prefetches the p-th P-th of the lines, at the top of the innermost spread
  // leaf. For data streamed from DRAM that each iteration of `axis` reads several times (once per
  // pass of the spread loops): one prefetch per line, issued at a steady rate over the whole
  // iteration, where the plain form issues the whole span in the first pass (as fast as the
  // loads it runs beside, so it waits on memory as they would) and again in every later one.
  Stage& prefetch(const Tensor& tensor, const IterVar& axis, int64_t offset, const std::vector<IterVar>& spread);
  // Computes this stage inside loop `axis` of `consumer`, for the region the consumer's loops
  // inside `axis` need.
  Stage& compute_at(const Stage& consumer, const IterVar& axis);
  // Substitutes this stage's expression into its consumers (no storage, no loops).
  Stage& compute_inline();
  Stage& compute_root();

  StageNode* node() const { return node_; }

 private:
  void check_leaf(const IterVar& iv, const char* primitive) const;
  Stage& set_kind(const IterVar& iv, ForKind kind, const char* primitive);

  Schedule* sched_;
  StageNode* node_;
};

class Schedule {
 public:
  // A schedule for computing `outputs` (and every compute they depend on), each stage at the root
  // in dependency order with its axes in their natural order.
  explicit Schedule(const std::vector<Tensor>& outputs);
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  Stage operator[](const Tensor& t);
  // Adds a stage that computes `t`'s expression into a local buffer (registers after codegen)
  // and turns `t`'s own stage into a copy from it; returns the new tensor ("<name>.local").
  // Attach it with compute_at inside a tile of `t` for register blocking.
  Tensor cache_write(const Tensor& t, MemoryScope scope = MemoryScope::kStack);

  // Stages in dependency order (producers first).
  const std::vector<std::unique_ptr<StageNode>>& stages() const { return stages_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }
  // The primitives applied so far, one per line: `split(C, i, factor=8) -> i.outer, i.inner`.
  const std::vector<std::string>& steps() const { return steps_; }
  std::string to_string() const;

  // Parses one step in the text form of steps() (what follows " -> " is ignored) and applies it,
  // naming stages by tensor name and axes by their current loop names. Replaying the steps of a
  // schedule on a fresh Schedule of the same tensors reproduces it (tuning records are steps).
  // Throws UserError (kParse) on malformed text, (kNotFound) on an unknown or ambiguous name.
  void apply(std::string_view step);

  void record(std::string step) { steps_.push_back(std::move(step)); }
  StageNode* find(const OperationNode* op) const;

 private:
  std::vector<Tensor> outputs_;
  std::vector<std::unique_ptr<StageNode>> stages_;
  std::vector<std::string> steps_;
};

}  // namespace kiln::tir

#endif  // KILN_TIR_SCHEDULE_H_
