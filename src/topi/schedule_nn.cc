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
  const tir::Tensor a = r.parts.at("anchor"), p = r.parts.at("pack_b");
  const int64_t tile_m = k.get("tile_m"), nb = k.get("n_block");
  const size_t nbatch = static_cast<size_t>(a.ndim()) - 2;
  schedule_pack(s, p);
  const tir::Tensor al = s.cache_write(a);
  Stage sa = s[a];
  auto [io, ii] = sa.split(sa.axis(static_cast<int>(nbatch)), tile_m);
  auto [jo, ji] = sa.split(sa.axis(static_cast<int>(nbatch) + 1), nb);
  sa.reorder({io, jo, ii, ji});
  sa.parallel(fuse_leading(sa, nbatch + 1));
  sa.vectorize(ji);
  Stage sl = s[al];
  sl.compute_at(sa, jo);
  sl.reorder({sl.reduce_axis(0), sl.axis(static_cast<int>(nbatch)), sl.axis(static_cast<int>(nbatch) + 1)});
  sl.unroll(sl.axis(static_cast<int>(nbatch)));
  sl.vectorize(sl.axis(static_cast<int>(nbatch) + 1));
  schedule_rest(s, r, k, {a, al, p});
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

namespace {

// Blocked depthwise (anchor [N, C/b, OH, OW, b]): the stage that writes the kernel's output runs
// the loops (n, cb, oh) fused and parallel, then tiles of tile_ow columns; the window sum of one
// tile is accumulated in registers (columns unrolled, the channel block one vector) attached
// inside the tile, and the epilogue (bias, activation, clip: the output stage's inlined
// expression) is applied to the registers before the single store. The zero-padded input rows
// that one band of output rows reads are built per band (L1/L2).
void schedule_depthwise_nchwc(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  const tir::Tensor a = r.parts.at("anchor");
  const int64_t tile_ow = k.get("tile_ow");
  std::vector<tir::Tensor> handled = {a};
  // The stage that owns the loop nest: the single output when it is an elementwise function of
  // the window sum (same shape), else the window sum itself with a cache_write accumulator.
  tir::Tensor top = a, red = a;
  const tir::Tensor out = r.outputs[0];
  if (r.outputs.size() == 1 && !out.same_as(a) && out.shape() == a.shape()) {
    top = out;
  } else {
    red = s.cache_write(a);
  }
  handled.push_back(top);
  handled.push_back(red);
  Stage st = s[top];
  // Bands of rows_per_band output rows: (n, cb, band) fused and parallel; the padded input rows
  // a band reads are built once per band ((band - 1) * stride + kh rows instead of kh per row).
  const int64_t band = k.get("rows_per_band");
  auto [oho, ohi] = st.split(st.axis(2), band);
  auto [owo, owi] = st.split(st.axis(3), tile_ow);
  const IterVar rows = fuse_leading(st, 3);
  st.parallel(rows);
  st.unroll(owi);
  st.vectorize(st.leaf_axes().back());
  Stage sr = s[red];
  sr.compute_at(st, owo);
  sr.reorder({sr.reduce_axis(0), sr.reduce_axis(1), sr.axis(3), sr.axis(4)});
  if (k.get("unroll_taps") != 0) {
    sr.unroll(sr.reduce_axis(0));
    sr.unroll(sr.reduce_axis(1));
  }
  sr.unroll(sr.axis(3));
  sr.vectorize(sr.axis(4));
  if (r.parts.count("pad")) {
    const tir::Tensor pad = r.parts.at("pad");
    Stage sp = s[pad];
    sp.compute_at(st, rows);
    sp.vectorize(sp.axis(4));
    handled.push_back(pad);
  }
  schedule_rest(s, r, k, handled);
}

}  // namespace

void schedule_depthwise(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  const tir::Tensor a = r.parts.at("anchor");
  if (a.ndim() == 5) {
    schedule_depthwise_nchwc(s, r, k);
    return;
  }
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
