// Internal pieces shared by the schedule templates (schedule.cc, schedule_nn.cc).
#ifndef KILN_SRC_TOPI_SCHEDULE_UTIL_H_
#define KILN_SRC_TOPI_SCHEDULE_UTIL_H_

#include <vector>

#include "kiln/tir/schedule.h"
#include "kiln/topi/schedule.h"

namespace kiln::topi {

// The tensors of every stage of `s`, producers first (a snapshot: cache_write adds stages).
std::vector<tir::Tensor> stage_tensors(const tir::Schedule& s);
// Fuses the first n leaves of `st` into one.
tir::IterVar fuse_leading(tir::Stage st, size_t n);
int64_t extent_of(const tir::IterVar& iv);
// All data axes fused; split by `vector` (vectorized inner part); the outer part parallel when
// the stage has at least parallel_min elements. Reduction stages are left alone.
void schedule_injective_stage(tir::Stage st, int64_t vector, int64_t parallel_min);
// Data-parallel axes fused and parallel; reduction loops inside. An innermost data axis of
// exactly `vector` elements stays innermost (inside the reduction loops) and is vectorized.
void schedule_reduction_stage(tir::Stage st, int64_t vector);
// Every stage not in `handled`: outputs, named parts and reductions at the root (injective or
// reduction treatment), other computes inlined.
void schedule_rest(tir::Schedule& s, const ComputeResult& r, const Knobs& k, const std::vector<tir::Tensor>& handled);

void schedule_matmul(tir::Schedule& s, const ComputeResult& r, const Knobs& k);
// Reductions whose compute names per-row stages "row.<...>" (schedule_rows.cc).
bool has_row_parts(const ComputeResult& r);
void schedule_rows(tir::Schedule& s, const ComputeResult& r, const Knobs& k);
// True when `out` reads `anchor` only elementwise: `out` and every compute between them have
// the anchor's shape and read their producer on that path at exactly their own axes.
bool is_elementwise_chain(const tir::Tensor& out, const tir::Tensor& anchor);
void schedule_conv2d_nchwc(tir::Schedule& s, const ComputeResult& r, const Knobs& k);
// The K-blocking shape (conv2d_k_chunk) of a blocked convolution's anchor ([N, M/ob, OH, OW, ob]
// or flat [N, M/ob, pixels, ob], reduction (rco, kh, kw, icb), reading its packed 5-D input)
// register-tiled over oc_tile channel blocks.
ConvChunkShape conv2d_chunk_shape(const tir::Tensor& anchor, int64_t oc_tile);
void schedule_depthwise(tir::Schedule& s, const ComputeResult& r, const Knobs& k);
// Winograd convolution (schedule_winograd.cc): its knob defaults and template.
void winograd_default_knobs(const ComputeResult& r, const LayoutHints& hints, Knobs& k);
// The int8 convolution template (int8_graph_ops.cc): knob tile_ow; layout oc_block.
void int8_conv2d_default_knobs(const ComputeResult& r, Knobs& k);
void schedule_int8_conv2d(tir::Schedule& s, const ComputeResult& r, const Knobs& k);
// The int8 matmul template (int8_matmul_ops.cc): knob tile_m; layout n_block.
void int8_matmul_default_knobs(const ComputeResult& r, Knobs& k);
void schedule_int8_matmul(tir::Schedule& s, const ComputeResult& r, const Knobs& k);
void schedule_conv2d_winograd(tir::Schedule& s, const ComputeResult& r, const Knobs& k);

}  // namespace kiln::topi

#endif  // KILN_SRC_TOPI_SCHEDULE_UTIL_H_
