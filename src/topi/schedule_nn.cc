// Schedule templates of the heavy operators: matmul/gemm (packed B, register tile), blocked conv2d
// (register tile over output columns x output-channel block) and depthwise conv2d. Each takes its
// knobs from `k` (default rules in schedule.cc) and leaves the remaining stages (padding, packing,
// unpacking, epilogues) to schedule_rest.
#include "kiln/support/error.h"
#include "kiln/tir/ir_visitor.h"
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

// Collects the tensor reads of an expression.
class LoadCollector : public tir::IRVisitor {
 public:
  std::vector<const tir::TensorLoad*> loads;

 protected:
  void visit(const tir::TensorLoad* op) override {
    loads.push_back(op);
    tir::IRVisitor::visit(op);
  }
};

bool depends_on(const tir::Tensor& t, const tir::Tensor& anchor) {
  if (t.same_as(anchor)) return true;
  for (const tir::Tensor& in : t->inputs()) {
    if (depends_on(in, anchor)) return true;
  }
  return false;
}

// Same rank and no dimension larger: the output of a product over padded tiles.
bool fits_in(const ir::Shape& out, const ir::Shape& anchor) {
  if (out.size() != anchor.size()) return false;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] > anchor[d]) return false;
  }
  return true;
}

}  // namespace

bool is_elementwise_chain(const tir::Tensor& out, const tir::Tensor& anchor) {
  if (out.same_as(anchor)) return true;
  if (out->kind != tir::OpKind::kCompute || !out->reduce_axis().empty() || out.shape() != anchor.shape()) return false;
  LoadCollector c;
  c.visit_expr(out->body);
  for (const tir::TensorLoad* load : c.loads) {
    const tir::Tensor producer(load->op);
    if (!depends_on(producer, anchor)) continue;
    if (producer.shape() != out.shape() || load->indices.size() != out->axis.size()) return false;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      // The axis itself, or 0 on an axis of extent 1 (broadcast_indices writes that).
      int64_t c = -1;
      const bool unit_zero = out.shape()[d] == 1 && tir::as_const_int(load->indices[d], &c) && c == 0;
      if (!unit_zero && !load->indices[d].same_as(out->axis[d].var())) return false;
    }
    if (!is_elementwise_chain(producer, anchor)) return false;
  }
  return true;
}

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
  // (The anchor may be padded to whole tiles: the output is then its top-left [.., M, N] corner.)
  // A split-K anchor (k_split: its rows are partial sums) never carries the epilogue.
  const bool epilogue = r.outputs.size() == 1 && !r.outputs[0].same_as(a) && !k.has("k_split") &&
                        fits_in(r.outputs[0].shape(), a.shape());
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
  const int64_t tile_ow = k.get("tile_ow"), oc_tile = k.get("oc_tile");
  const int64_t tile_oh = k.get("tile_oh");
  // Flat pixels (conv2d_nchwc in nn.h): the anchor is [N, M/ob, OH*OW, ob] and the convolution's
  // 5-D result the "unflatten" view of it; tiles of tile_ow pixels (tile_oh must be 1).
  const bool flat = a.ndim() == 4;
  const tir::Tensor y = flat ? r.parts.at("unflatten") : a;
  if (flat && tile_oh != 1) {
    throw UserError(UserErrorKind::kInvalidArgument, "schedule knob 'tile_oh'",
                    "is " + std::to_string(tile_oh) + " on a convolution over flat pixels (one row)", "set tile_oh=1");
  }
  const int64_t ob = a.shape().back();
  std::vector<tir::Tensor> handled = {a};
  for (const char* pack : {"pack_w", "pack_x"}) {
    if (r.parts.count(pack)) {
      schedule_pack(s, r.parts.at(pack));
      handled.push_back(r.parts.at(pack));
    }
  }
  // The stage that carries the tile loops: the group's single output when it is an elementwise
  // chain of the convolution's result (bias, residual add, ReLU/Clip applied to the register tile
  // as it is written back: each output element written once, the anchor never stored), else the
  // anchor.
  const tir::Tensor o = s.outputs().size() == 1 && (!s.outputs()[0].same_as(a) || flat) &&
                                is_elementwise_chain(s.outputs()[0], y)
                            ? s.outputs()[0]
                            : a;
  const tir::Tensor al = s.cache_write(a);
  handled.push_back(al);
  if (!o.same_as(a)) {
    s[a].compute_inline();
    handled.push_back(o);
  }
  if (flat && !o.same_as(a) && !o.same_as(y)) {
    s[y].compute_inline();
    handled.push_back(y);
  }
  // Tile: oc_tile channel blocks x tile_oh rows x tile_ow columns (or tile_ow flat pixels) x ob
  // lanes of accumulators, with the reduction (C-block, kh, kw, c) outside it; (n, oh-tile,
  // oc-tile) or (n, oc-tile, oh-tile) fused and parallel.
  Stage so = s[o];
  const bool o_flat = o.ndim() == 4;  // the anchor itself, flat
  const IterVar oc = so.axis(1), lanes = so.axis(o_flat ? 3 : 4);
  auto [oco, oci] = so.split(oc, oc_tile);
  // k_chunk > 0 (K-blocking): the reduction's input-channel blocks (rco) in chunks of k_chunk,
  // the chunk loop outside the register tiles. Every tile of the channel tile then accumulates
  // one chunk before the next chunk starts, into an accumulator of the channel tile's whole
  // output (oc_tile x pixels x ob, on the stack), so the chunk's weights (oc_tile x k_chunk x
  // kh x kw x icb) and input channels stay cached while all the tiles pass, instead of every tile
  // streaming the whole weight panel and its input from L2/L3 (a 3x3 512-channel conv on 7x7:
  // a 295 KiB panel per output block beside a 512 KiB padded input, over a 512 KiB L2). The
  // register tile loads and stores its accumulators once per chunk.
  const int64_t rco_extent = extent_of(s[al].reduce_axis(0));
  const int64_t k_chunk = k.has("k_chunk") ? k.get("k_chunk") : 0;
  const bool k_blocked = k_chunk > 0 && k_chunk < rco_extent;
  const bool rows_outer = k.get("rows_outer") != 0 && !k_blocked;
  IterVar attach;                   // where the register tile is computed
  std::vector<IterVar> tile_axes;   // the output loops inside it, unrolled (lanes vectorized)
  // The channel-tile loop split once more by 1: its outer part joins the parallel loop, the unit
  // inner part is where a K-blocked accumulator is attached (a fused loop's region is not a tile).
  IterVar oc_attach;
  if (k_blocked) {
    auto [ot, oa] = so.split(oco, 1);
    oco = ot;
    oc_attach = oa;
  }
  if (flat) {
    const IterVar pix = o_flat ? so.axis(2) : so.fuse(so.axis(2), so.axis(3));
    auto [po, pi] = so.split(pix, tile_ow);
    // The tile loop split once more by 1: its outer part joins the parallel loop, the unit inner
    // part is where the register tile is attached (a fused loop's region is not a tile).
    auto [pt, at] = so.split(po, 1);
    if (k_blocked) {
      so.reorder({so.axis(0), oco, oc_attach, pt, at, oci, pi, lanes});
    } else {
      so.reorder(rows_outer ? std::vector<IterVar>{so.axis(0), pt, oco, at, oci, pi, lanes}
                            : std::vector<IterVar>{so.axis(0), oco, pt, at, oci, pi, lanes});
    }
    attach = at;
    tile_axes = {oci, pi};
  } else {
    auto [oho, ohi] = so.split(so.axis(2), tile_oh);
    auto [owo, owi] = so.split(so.axis(3), tile_ow);
    if (k_blocked) {
      so.reorder({so.axis(0), oco, oc_attach, oho, owo, oci, ohi, owi, lanes});
    } else if (rows_outer) {
      so.reorder({so.axis(0), oho, oco, owo, oci, ohi, owi, lanes});
    } else {
      so.reorder({so.axis(0), oco, oho, owo, oci, ohi, owi, lanes});
    }
    attach = owo;
    tile_axes = {oci, ohi, owi};
  }
  so.parallel(fuse_leading(so, k_blocked ? 2 : 3));
  // The write-back unrolled too: constant offsets into the accumulator keep it in registers.
  for (const IterVar& t : tile_axes) so.unroll(t);
  if (ob > 1) so.vectorize(lanes);
  Stage sl = s[al];
  const int rank = al.ndim();
  if (k_blocked) {
    // The accumulator of the channel tile: (chunk, pixel tiles, chunk blocks, kh, kw, icb lanes)
    // outside the register tile (oc_tile x pixels x ob), which is unrolled but for the lanes.
    sl.compute_at(so, oc_attach);
    auto [kco, kci] = sl.split(sl.reduce_axis(0), k_chunk);
    std::vector<IterVar> order = {sl.axis(0), kco}, tile;
    std::vector<IterVar> pixel_tiles;  // the loops over register tiles
    if (rank == 4) {  // flat pixels
      auto [ppo, ppi] = sl.split(sl.axis(2), tile_ow);
      order.push_back(ppo);
      pixel_tiles = {ppo};
      tile = {sl.axis(1), ppi};
    } else {
      auto [sho, shi] = sl.split(sl.axis(2), tile_oh);
      auto [swo, swi] = sl.split(sl.axis(3), tile_ow);
      order.push_back(sho);
      order.push_back(swo);
      pixel_tiles = {sho, swo};
      tile = {sl.axis(1), shi, swi};
    }
    for (const IterVar& rv : {kci, sl.reduce_axis(1), sl.reduce_axis(2), sl.reduce_axis(3)}) order.push_back(rv);
    for (const IterVar& t : tile) order.push_back(t);
    order.push_back(sl.axis(rank - 1));
    sl.reorder(order);
    for (const IterVar& t : tile) sl.unroll(t);
    if (ob > 1) sl.vectorize(sl.axis(rank - 1));
    // prefetch=1: the next chunk's weights (the next channel tile's first chunk after the last:
    // the packed panels follow each other in memory) prefetched while this chunk runs, spread
    // evenly over its pixel tiles and, inside each, over the chunk's blocks and taps (a line or
    // a few per step), so that the weights of late layers, which come from DRAM, arrive at a
    // steady rate instead of stalling the chunk's first tile. (Spread over the pixel tiles only,
    // a 3x3 512 conv on 4x5 pixels issued 72 prefetches at the top of each of its 4 tiles and
    // ran 11 % slower than without K-blocking; spread this way, 25 % faster.)
    if (k.has("prefetch") && k.get("prefetch") != 0) {
      std::vector<IterVar> spread = pixel_tiles;
      for (const IterVar& rv : {kci, sl.reduce_axis(1), sl.reduce_axis(2)}) spread.push_back(rv);
      for (const tir::Tensor& in : a->inputs()) {
        if (in.ndim() == 6) sl.prefetch(in, kco, 1, spread);  // the packed weights
      }
    }
    schedule_rest(s, r, k, handled);
    return;
  }
  // The accumulator ([n, oc, pixels or rows x columns, ob]): the reduction outside its data axes,
  // which are unrolled but for the lanes (vectorized).
  sl.compute_at(so, attach);
  std::vector<IterVar> order;
  for (int i = 0; i < 4; ++i) order.push_back(sl.reduce_axis(i));
  for (int i = 1; i < rank; ++i) order.push_back(sl.axis(i));
  sl.reorder(order);
  for (int i = 1; i + 1 < rank; ++i) sl.unroll(sl.axis(i));
  if (ob > 1) sl.vectorize(sl.axis(rank - 1));
  // prefetch=1: the packed weights w[mo, rco, rh, rw, rci, o] of the next channel tile follow
  // this tile's in memory; each step of the innermost reduction (rci) prefetches the line one
  // tile's panel (oc_tile x the whole reduction) ahead, so the next tile's first pass over its
  // weights does not wait on memory (the weights of a model's late layers come from DRAM).
  if (k.has("prefetch") && k.get("prefetch") != 0) {
    int64_t panel = oc_tile;
    for (int i = 0; i < 4; ++i) panel *= extent_of(sl.reduce_axis(i));
    for (const tir::Tensor& in : a->inputs()) {
      if (in.ndim() == 6) sl.prefetch(in, sl.reduce_axis(3), panel);  // the packed weights
    }
  }
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
