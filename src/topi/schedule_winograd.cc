// Schedule template of the Winograd convolution (kConv2dWinograd, compute in conv2d_winograd.cc).
// Knobs (defaults from the target in winograd_default_knobs):
//   tile_p, tile_mb  register tile of the batched product: tile_p tiles x tile_mb output-channel
//                    blocks of ob lanes, accumulated over C in registers (cache_write);
//                    tile_p * tile_mb * ob / lanes accumulators, leaving 4 vector registers for
//                    the weight vectors and the broadcast input;
//   prefetch         1: the product prefetches the next output-channel chunk's transformed weights
//                    (one cache line per channel step, a whole panel ahead) while it multiplies
//                    the current one, so their first pass does not wait on memory; 0: none;
//   wino_tile, ic_block  m and the input's channel block (layout: fixed by the op and its input).
// Stages:
//   input    (tile, channel block) parallel, the zero-padded window read through read_or, the a x a points unrolled (folding the per-point
//            select to one sum), the channel block vectorized;
//   anchor   (point e, point nu, output-channel chunk) parallel, the tile loop serial inside (its
//            tail becomes a guard-free shorter tile), then [C, tile_p, tile_mb, ob] in registers;
//   outputs  (the group's outputs: the output transform with any fused elementwise consumers
//            inlined) split by m in rows and columns: (n, mo, tile row) parallel, tile column
//            serial, the m x m positions unrolled (folding the select), ob vectorized.
#include <algorithm>

#include "kiln/support/error.h"
#include "topi/schedule_util.h"

namespace kiln::topi {

using tir::IterVar;
using tir::Stage;

void winograd_default_knobs(const ComputeResult& r, const LayoutHints& hints, Knobs& k) {
  const tir::Tensor a = r.parts.at("anchor");
  const int64_t mb = a.shape()[2], tiles = a.shape()[3], ob = a.shape()[4];
  const int64_t vecs = std::max<int64_t>(1, ob / hints.vector_lanes_f32);
  const int64_t budget = std::max<int64_t>(1, hints.num_vector_regs - 4);
  // Two output-channel vectors per row when possible (fewer broadcasts per FMA), then as many
  // tiles as the remaining accumulators allow; an exact divisor of the tile count within 3/4 of
  // that is preferred (no tail).
  int64_t tile_mb = vecs >= 2 ? 1 : (mb % 2 == 0 ? 2 : 1);
  const int64_t cap = std::max<int64_t>(1, std::min<int64_t>(tiles, budget / (tile_mb * vecs)));
  int64_t tile_p = cap;
  for (int64_t t = cap; t * 4 >= cap * 3; --t) {
    if (tiles % t == 0) {
      tile_p = t;
      break;
    }
  }
  k.set("tile_p", tile_p);
  k.set("tile_mb", tile_mb);
  k.set("prefetch", 1);
}

void schedule_conv2d_winograd(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  const tir::Tensor v = r.parts.at("input"), mt = r.parts.at("anchor");
  const int64_t m = k.get("wino_tile"), tile_p = k.get("tile_p"), tile_mb = k.get("tile_mb");
  const int64_t mb = mt.shape()[2], ob = mt.shape()[4], xb = k.get("ic_block");
  if (mb % tile_mb != 0) {
    throw UserError(UserErrorKind::kInvalidArgument, "schedule knob 'tile_mb'",
                    "is " + std::to_string(tile_mb) + ", which does not divide the " + std::to_string(mb) +
                        " output-channel blocks",
                    "");
  }
  std::vector<tir::Tensor> handled = {v, mt};

  // Padded input: (n, cb, h) parallel, (w, ci) inner with ci vectorized.

  // Input transform: (p, c-block) parallel; points unrolled; channel block vectorized.
  Stage sv = s[v];
  {
    auto [co, ci] = sv.split(sv.axis(3), xb);
    sv.reorder({sv.axis(2), co, sv.axis(0), sv.axis(1), ci});
    sv.parallel(sv.fuse(sv.axis(2), co));
    sv.unroll(sv.axis(0));
    sv.unroll(sv.axis(1));
    if (xb > 1) sv.vectorize(ci);
  }

  // Batched product, register-tiled.
  const tir::Tensor ml = s.cache_write(mt);
  handled.push_back(ml);
  Stage sm = s[mt];
  {
    auto [moo, moi] = sm.split(sm.axis(2), tile_mb);
    auto [po, pi] = sm.split(sm.axis(3), tile_p);
    sm.reorder({sm.axis(0), sm.axis(1), moo, po, pi, moi, sm.axis(4)});
    sm.parallel(fuse_leading(sm, 3));
    if (ob > 1) sm.vectorize(sm.leaf_axes().back());
    Stage sl = s[ml];
    sl.compute_at(sm, po);
    sl.reorder({sl.reduce_axis(0), sl.axis(3), sl.axis(2), sl.axis(4)});
    sl.unroll(sl.axis(3));
    sl.unroll(sl.axis(2));
    if (ob > 1) sl.vectorize(sl.axis(4));
    // The weight panel u[e, nu, mo, :, :] of the next chunk follows this one in memory: prefetched
    // one panel (the channel extent) ahead along the channel loop.
    if (!k.has("prefetch") || k.get("prefetch") != 0) {  // records made before the knob: on
      for (const tir::Tensor& in : mt->inputs()) {
        if (!in.same_as(v)) sl.prefetch(in, sl.reduce_axis(0), extent_of(sl.reduce_axis(0)));
      }
    }
  }

  // Outputs of the group (same shape as the output transform): tiled by m, positions unrolled.
  for (const tir::Tensor& t : r.outputs) {
    handled.push_back(t);
    Stage so = s[t];
    const ir::Shape& ts = t.shape();
    if (ts.size() != 5 || ts[1] != mb || ts[4] != ob) {
      schedule_injective_stage(so, k.get("vector"), k.get("parallel_min"));
      continue;
    }
    auto [hoo, hoi] = so.split(so.axis(2), m);
    auto [woo, woi] = so.split(so.axis(3), m);
    so.reorder({so.axis(0), so.axis(1), hoo, woo, hoi, woi, so.axis(4)});
    so.parallel(fuse_leading(so, 3));
    so.unroll(hoi);
    so.unroll(woi);
    if (ob > 1) so.vectorize(so.axis(4));
  }
  schedule_rest(s, r, k, handled);
}

}  // namespace kiln::topi
