// Schedule template of the Winograd convolution (kConv2dWinograd, compute in conv2d_winograd.cc).
// Knobs (defaults from the target in winograd_default_knobs):
//   tile_p, tile_mb  register tile of the batched product: tile_p tiles x tile_mb output-channel
//                    blocks of ob lanes, accumulated over C in registers (cache_write);
//                    tile_p * tile_mb * ob / lanes accumulators, leaving 4 vector registers for
//                    the weight vectors and the broadcast input;
//   prefetch         1: the product prefetches the next output-channel chunk's transformed weights
//                    while it multiplies the current one, so their first pass does not wait on
//                    memory: spread over the chunk's passes and channel steps (a steady stream),
//                    or, by tile block (over 32 tiles, or a chunk's products over 16 KiB), one
//                    line per channel step a whole panel ahead; 0: none;
//   wino_tile, ic_block  m and the input's channel block (layout: fixed by the op and its input).
// Stages:
//   input    (tile, channel block) parallel, the zero-padded window read through read_or, the a x a points unrolled (folding the per-point
//            select to one sum), the channel block vectorized;
//   anchor   (point e, point nu, output-channel chunk) parallel; inside a chunk the passes over
//            tile_p tiles at a time (the tail a guard-free shorter tile), each [C, tile_p,
//            tile_mb, ob] in registers, into a stack buffer of the chunk's products that the
//            anchor's own loop copies out (schedule_product_by_chunk); with more than 32 tiles
//            or where those exceed 16 KiB the tile blocks are the anchor's loop
//            (schedule_product_by_tile_block);
//   outputs  (the group's outputs: the output transform with any fused elementwise consumers
//            inlined) split by m in rows and columns: (n, mo, tile row) parallel, tile column
//            serial, the m x m positions unrolled (folding the select), ob vectorized.
#include <algorithm>

#include "kiln/support/error.h"
#include "topi/schedule_util.h"

namespace kiln::topi {

using tir::IterVar;
using tir::Stage;

namespace {

// The product runs by chunk (below) where few tiles use each weight panel, so that its stream
// from DRAM is a large share of the kernel: ResNet-50's 14x14 F(4x4) and 7x7 F(2x2) layers (16
// tiles) 11-15 % faster at 2 threads on Zen 3; the 28x28 layer (49 tiles) 2-3 % slower and the
// 56x56 one (196 tiles) 8 % slower, their panels reused enough that the chunk buffer's extra
// copy costs more (docs/performance.md). And only where a chunk's products (all tiles x tile_mb
// x ob) fit the stack.
constexpr int64_t kFewTiles = 32, kChunkAccumulatorBytes = 16 << 10;

// The product by output-channel chunk: the stage of mt only copies each chunk's products (all
// tiles) out of the accumulator stage, which is attached at the chunk (the parallel loop split
// once more by 1: a fused loop's region is not a tile) and makes the passes over the tiles,
// tile_p at a time, each over the whole channel extent into registers. With prefetch, the next
// chunk's weight panel u[e, nu, mo + tile_mb, :, :] (it follows this one in memory) is
// prefetched while this chunk runs, spread over its passes and channel steps (the channel loop
// split so that passes x outer steps give about one step per cache line): a steady stream from
// DRAM instead of the whole panel during the first pass.
void schedule_product_by_chunk(tir::Schedule& s, const tir::Tensor& mt, const tir::Tensor& ml, const tir::Tensor& v,
                               int64_t tile_p, int64_t tile_mb, bool prefetch) {
  const int64_t ob = mt.shape()[4];
  Stage sm = s[mt];
  auto [moo, moi] = sm.split(sm.axis(2), tile_mb);
  auto [mot, mou] = sm.split(moo, 1);
  sm.reorder({sm.axis(0), sm.axis(1), mot, mou, sm.axis(3), moi, sm.axis(4)});
  sm.parallel(fuse_leading(sm, 3));
  if (ob > 1) sm.vectorize(sm.leaf_axes().back());
  Stage sl = s[ml];
  sl.compute_at(sm, mou);
  auto [mlo, mli] = sl.split(sl.axis(2), tile_mb);  // mlo: one iteration (this chunk)
  auto [po, pi] = sl.split(sl.axis(3), tile_p);
  const int64_t c = extent_of(sl.reduce_axis(0));
  const int64_t passes = (mt.shape()[3] + tile_p - 1) / tile_p;
  const int64_t lines = std::max<int64_t>(1, c * tile_mb * ob * static_cast<int64_t>(ir::dtype_size(mt.dtype())) / 64);
  int64_t f = 1;
  for (int64_t d = 2; d <= c; ++d) {
    if (c % d == 0 && passes * (c / d) >= lines) f = d;
  }
  IterVar steps = sl.reduce_axis(0);
  if (prefetch && f > 1) {
    auto [rco, rci] = sl.split(sl.reduce_axis(0), f);
    sl.reorder({mlo, po, rco, rci, pi, mli, sl.axis(4)});
    steps = rco;
  } else {
    sl.reorder({mlo, po, steps, pi, mli, sl.axis(4)});
  }
  if (prefetch) {
    for (const tir::Tensor& in : mt->inputs()) {
      if (!in.same_as(v)) sl.prefetch(in, mlo, 1, {po, steps});
    }
  }
  sl.unroll(pi);
  sl.unroll(mli);
  if (ob > 1) sl.vectorize(sl.axis(4));
}

// The product by tile block (chunks whose products exceed the stack: large images): the stage of
// mt runs (chunk, tile block) with the accumulator stage attached at the block, its
// [C, tile_p, tile_mb, ob] in registers; with prefetch, each channel step prefetches the line one
// panel ahead (the next chunk's).
void schedule_product_by_tile_block(tir::Schedule& s, const tir::Tensor& mt, const tir::Tensor& ml,
                                    const tir::Tensor& v, int64_t tile_p, int64_t tile_mb, bool prefetch) {
  const int64_t ob = mt.shape()[4];
  Stage sm = s[mt];
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
  if (prefetch) {
    for (const tir::Tensor& in : mt->inputs()) {
      if (!in.same_as(v)) sl.prefetch(in, sl.reduce_axis(0), extent_of(sl.reduce_axis(0)));
    }
  }
}

}  // namespace

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
  const bool prefetch = !k.has("prefetch") || k.get("prefetch") != 0;  // records made before the knob: on
  const int64_t elem = static_cast<int64_t>(ir::dtype_size(mt.dtype()));
  if (mt.shape()[3] <= kFewTiles && mt.shape()[3] * tile_mb * ob * elem <= kChunkAccumulatorBytes) {
    schedule_product_by_chunk(s, mt, ml, v, tile_p, tile_mb, prefetch);
  } else {
    schedule_product_by_tile_block(s, mt, ml, v, tile_p, tile_mb, prefetch);
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
