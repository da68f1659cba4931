// Schedule templates of the heavy operators: matmul/gemm (packed B, register tile), blocked conv2d
// (register tile over output columns x output-channel block) and depthwise conv2d. Each takes its
// knobs from `k` (default rules in schedule.cc) and leaves the remaining stages (padding, packing,
// unpacking, epilogues) to schedule_rest.
#include "kiln/support/error.h"
#include "topi/schedule_util.h"

namespace kiln::topi {

using tir::IterVar;
using tir::Stage;

namespace {

// Packing stages: leading axes (all but the last two) fused and parallel, innermost vectorized.
void schedule_pack(tir::Schedule& s, const tir::Tensor& p) {
  Stage sp = s[p];
  const size_t rank = sp.node()->root_axis.size();
  if (rank >= 3) sp.parallel(fuse_leading(sp, rank - 2));
  const IterVar inner = sp.leaf_axes().back();
  if (extent_of(inner) > 1) sp.vectorize(inner);
}

}  // namespace

void schedule_matmul(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  const tir::Tensor a = r.parts.at("anchor");
  const int64_t tile_m = k.get("tile_m"), nb = k.get("n_block");
  const size_t nbatch = static_cast<size_t>(a.ndim()) - 2;
  std::vector<tir::Tensor> handled = {a};
  if (r.parts.count("pack_b")) {  // absent when B comes packed (matmul_packed)
    schedule_pack(s, r.parts.at("pack_b"));
    handled.push_back(r.parts.at("pack_b"));
  }
  // The register tile is computed inside the loops of the stage that is written out: the single
  // output when it has the product's shape (the epilogue -- bias, residual add, activation --
  // then runs on the tile while it is in registers, its stages inlined), else the product itself
  // through a local copy.
  const bool epilogue = r.outputs.size() == 1 && !r.outputs[0].same_as(a) && r.outputs[0].shape() == a.shape();
  const tir::Tensor out = epilogue ? r.outputs[0] : a;
  const tir::Tensor al = epilogue ? a : s.cache_write(a);
  Stage so = s[out];
  auto [io, ii] = so.split(so.axis(static_cast<int>(nbatch)), tile_m);
  auto [jo, ji] = so.split(so.axis(static_cast<int>(nbatch) + 1), nb);
  // panel_outer=1: each packed panel of B (K x nb) stays in cache while every row tile of A
  // passes; 0: a band of A rows stays while all of B streams.
  if (k.get("panel_outer") != 0) {
    so.reorder({jo, io, ii, ji});
  } else {
    so.reorder({io, jo, ii, ji});
  }
  so.parallel(fuse_leading(so, nbatch + 1));
  so.vectorize(ji);
  Stage sl = s[al];
  sl.compute_at(so, k.get("panel_outer") != 0 ? io : jo);
  sl.reorder({sl.reduce_axis(0), sl.axis(static_cast<int>(nbatch)), sl.axis(static_cast<int>(nbatch) + 1)});
  sl.unroll(sl.axis(static_cast<int>(nbatch)));
  sl.vectorize(sl.axis(static_cast<int>(nbatch) + 1));
  handled.push_back(al);
  handled.push_back(out);
  schedule_rest(s, r, k, handled);
}

void schedule_conv2d_nchwc(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  const tir::Tensor a = r.parts.at("anchor");
  const int64_t tile_ow = k.get("tile_ow");
  const int64_t ob = a.shape()[4];
  std::vector<tir::Tensor> handled = {a};
  for (const char* pack : {"pack_w", "pack_x"}) {
    if (r.parts.count(pack)) {
      schedule_pack(s, r.parts.at(pack));
      handled.push_back(r.parts.at(pack));
    }
  }
  const tir::Tensor al = s.cache_write(a);
  handled.push_back(al);
  Stage sa = s[a];
  auto [owo, owi] = sa.split(sa.axis(3), tile_ow);
  if (k.get("rows_outer") != 0) sa.reorder({sa.axis(2), sa.axis(1)});
  sa.parallel(fuse_leading(sa, 3));
  if (ob > 1) sa.vectorize(sa.leaf_axes().back());
  Stage sl = s[al];
  sl.compute_at(sa, owo);
  sl.reorder({sl.reduce_axis(0), sl.reduce_axis(1), sl.reduce_axis(2), sl.reduce_axis(3), sl.axis(3), sl.axis(4)});
  sl.unroll(sl.axis(3));
  if (ob > 1) sl.vectorize(sl.axis(4));
  schedule_rest(s, r, k, handled);
}

void schedule_depthwise(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  const tir::Tensor a = r.parts.at("anchor");
  const int64_t tile_ow = k.get("tile_ow"), vector = k.get("vector");
  const tir::Tensor al = s.cache_write(a);
  Stage sa = s[a];
  auto [owo, owi] = sa.split(sa.axis(3), tile_ow);
  sa.parallel(fuse_leading(sa, 3));
  if (tile_ow > 1) sa.vectorize(owi);
  Stage sl = s[al];
  sl.compute_at(sa, owo);
  sl.reorder({sl.reduce_axis(0), sl.reduce_axis(1), sl.axis(3)});
  if (tile_ow > vector && tile_ow % vector == 0) {
    auto [vo, vi] = sl.split(sl.axis(3), vector);
    sl.unroll(vo);
    sl.vectorize(vi);
  } else if (tile_ow > 1) {
    sl.vectorize(sl.axis(3));
  }
  schedule_rest(s, r, k, {a, al});
}

}  // namespace kiln::topi
