// Row schedule of the last-axis normalizations (softmax, log_softmax, layer_norm, rms_norm; reduce.cc) and of
// instance_norm (normalization_spatial.cc, rows = [N, C]):
// one parallel loop over rows, and inside each row every stage the compute named "row.<...>"
// (lane-reduction partials and totals, exp(x - max), 1 / sqrt(var + eps)) computed for that row
// only, then the row's output in vectors. So a normalization is one pass over the rows with one
// fork/join, and each row stays in L1 between its reductions and its output.
#include <algorithm>

#include "kiln/support/error.h"
#include "topi/schedule_util.h"

namespace kiln::topi {

using tir::IterVar;
using tir::Stage;

namespace {

constexpr int64_t kMaxRowElements = 16384;  // per-row buffers live on the stack

bool is_row_part(const std::string& name) { return name.rfind("row.", 0) == 0; }

}  // namespace

bool has_row_parts(const ComputeResult& r) {
  for (const auto& [name, t] : r.parts) {
    if (is_row_part(name)) return true;
  }
  return false;
}

void schedule_rows(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  const int64_t vector = k.get("vector"), parallel_min = k.get("parallel_min");
  const bool usable = r.outputs.size() == 1 && r.outputs[0].ndim() >= 2 && r.outputs[0].shape().back() <= kMaxRowElements;
  if (!usable) {
    schedule_rest(s, r, k, {});
    return;
  }
  const tir::Tensor out = r.outputs[0];
  Stage so = s[out];
  const size_t rank = static_cast<size_t>(out.ndim());
  int64_t numel = 1;
  for (int64_t d : out.shape()) numel *= d;
  // A row is the output's leading axes that index the per-row reductions (the anchor's axes):
  // all but the last for softmax/layer_norm, [N, C] for instance_norm (its spatial axes are the row).
  const auto anchor = r.parts.find("anchor");
  const size_t row_rank = anchor != r.parts.end() && anchor->second.ndim() >= 1 &&
                                  static_cast<size_t>(anchor->second.ndim()) < rank
                              ? static_cast<size_t>(anchor->second.ndim())
                              : rank - 1;
  const IterVar row = fuse_leading(so, row_rank);
  const int64_t n = out.shape().back();
  if (vector > 1 && n >= vector) {
    const IterVar last = so.leaf_axes().back();  // a copy: split rewrites the leaf list
    auto [vo, vi] = so.split(last, vector);
    so.vectorize(vi);
  }
  // The work of a row is its longest per-row stage, reductions included: a plain reduction's
  // output has one element per row (a ReduceMean of 8400 rows of 367 is 3M elements of work).
  int64_t work = numel;
  for (const auto& [name, t] : r.parts) {
    if (!is_row_part(name)) continue;
    int64_t n_part = 1;
    for (const IterVar& iv : s[t].node()->root_axis) n_part *= extent_of(iv);
    for (const IterVar& iv : s[t].node()->reduce_axis) n_part *= extent_of(iv);
    work = std::max(work, n_part);
  }
  if (work >= parallel_min) so.parallel(row);
  std::vector<tir::Tensor> handled = {out};
  for (const auto& [name, t] : r.parts) {
    if (!is_row_part(name)) continue;
    handled.push_back(t);
    Stage st = s[t];
    st.compute_at(so, row);
    tir::StageNode* node = st.node();
    const size_t ndata = node->root_axis.size();
    const IterVar last = ndata > 0 ? node->root_axis.back() : IterVar();
    const int64_t inner = ndata > 0 ? extent_of(last) : 0;
    if (!node->reduce_axis.empty()) {
      // Lane partials (the row's axes + lanes): reduction outside, lanes in a vector. A per-row
      // total has only the row's axes; its last one is not a lane axis even when its extent is.
      if (vector > 1 && inner == vector && ndata == row_rank + 1) {
        std::vector<IterVar> order = node->reduce_axis;
        order.push_back(last);
        st.reorder(order);
        st.vectorize(last);
      }
    } else if (vector > 1 && ndata == rank && inner >= vector && inner == n) {  // a row of values
      auto [vo, vi] = st.split(last, vector);
      st.vectorize(vi);
    }
  }
  schedule_rest(s, r, k, handled);
}

}  // namespace kiln::topi
