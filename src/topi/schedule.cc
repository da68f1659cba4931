// Schedule templates (see include/kiln/topi/schedule.h): knobs, their default rules, and the
// generic templates (injective, reduction). The heavy-op templates are in schedule_nn.cc.
#include "kiln/topi/schedule.h"

#include <algorithm>
#include <sstream>

#include "kiln/support/error.h"
#include "topi/schedule_util.h"
#include "topi/topi_util.h"

namespace kiln::topi {

int64_t Knobs::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    throw UserError(UserErrorKind::kInvalidArgument, "schedule knob '" + name + "'", "is not set",
                    "start from default_knobs() and change the values, not the names (have: " + to_string() + ")");
  }
  return it->second;
}

std::string Knobs::to_string() const {
  std::ostringstream s;
  bool first = true;
  for (const auto& [k, v] : values_) {
    s << (first ? "" : " ") << k << "=" << v;
    first = false;
  }
  return s.str();
}

LayoutHints layout_hints(const codegen::Target& target) {
  LayoutHints h;
  h.vector_lanes_f32 = std::max(1, target.vector_lanes(32));
  h.num_vector_regs = target.num_vector_regs;
  return h;
}

namespace {

using tir::IterVar;
using tir::Stage;
using tir::StageNode;

int element_bits(ir::DType dt) { return dt == ir::DType::kBool ? 8 : static_cast<int>(ir::dtype_size(dt)) * 8; }

int64_t largest_divisor(int64_t n, int64_t cap) {
  for (int64_t t = std::min(cap, n); t > 1; --t) {
    if (n % t == 0) return t;
  }
  return 1;
}

bool is_part(const ComputeResult& r, const tir::Tensor& t) {
  for (const auto& [name, part] : r.parts) {
    if (part.same_as(t)) return true;
  }
  return false;
}

}  // namespace

// ---- shared helpers (schedule_util.h) ----

std::vector<tir::Tensor> stage_tensors(const tir::Schedule& s) {
  std::vector<tir::Tensor> out;
  for (const auto& node : s.stages()) out.push_back(node->op);
  return out;
}

IterVar fuse_leading(Stage st, size_t n) {
  std::vector<IterVar> leaves = st.leaf_axes();
  KILN_ICHECK(n >= 1 && n <= leaves.size()) << "fuse_leading " << n << " of " << leaves.size();
  IterVar fused = leaves[0];
  for (size_t k = 1; k < n; ++k) fused = st.fuse(fused, leaves[k]);
  return fused;
}

ConvChunkShape conv2d_chunk_shape(const tir::Tensor& anchor, int64_t oc_tile) {
  const ir::Shape& as = anchor.shape();
  const int64_t elem = static_cast<int64_t>(ir::dtype_size(anchor.dtype()));
  const std::vector<IterVar>& red = anchor.get()->reduce_axis();
  KILN_ICHECK(red.size() == 4) << "a blocked convolution with " << red.size() << " reduction axes";
  ConvChunkShape c;
  c.in_blocks = extent_of(red[0]);
  c.panel_block_bytes = oc_tile * as.back() * extent_of(red[1]) * extent_of(red[2]) * extent_of(red[3]) * elem;
  int64_t pixels = 1;
  for (size_t d = 2; d + 1 < as.size(); ++d) pixels *= as[d];
  c.accumulator_bytes = oc_tile * pixels * as.back() * elem;
  c.pixels = pixels * as[0];
  c.channel_tiles = std::max<int64_t>(1, as[1] / std::max<int64_t>(1, oc_tile));
  for (const tir::Tensor& in : anchor->inputs()) {
    if (in.ndim() == 5) c.input_block_bytes = in.shape()[2] * in.shape()[3] * in.shape()[4] * elem;
  }
  return c;
}

int64_t extent_of(const IterVar& iv) {
  int64_t e = 0;
  KILN_ICHECK(tir::as_const_int(iv->dom.extent, &e)) << "non-constant extent";
  return e;
}

void schedule_injective_stage(Stage st, int64_t vector, int64_t parallel_min) {
  StageNode* node = st.node();
  const size_t ndata = node->root_axis.size();
  if (ndata == 0 || !node->reduce_axis.empty()) return;
  int64_t numel = 1;
  for (const IterVar& iv : node->root_axis) numel *= extent_of(iv);
  const bool par = numel >= parallel_min;
  const int64_t inner_extent = extent_of(node->root_axis.back());
  // An innermost axis of 16 or more that divides the vector (an 8-bit NCHW16c block: 32 lanes)
  // is vectorized on its own: its indices stay ramps (the flat loop below would gather them).
  if (ndata >= 2 && inner_extent >= 16 && inner_extent < vector && vector % inner_extent == 0) vector = inner_extent;
  if (ndata >= 2 && vector > 1 && inner_extent >= vector) {
    // Rows: the outer axes fused (parallel), the innermost axis split by the vector width, so
    // its indices stay contiguous ramps (the tail is a shorter vector after partition_tails).
    IterVar outer = fuse_leading(st, ndata - 1);
    auto [vo, vi] = st.split(node->root_axis.back(), vector);
    st.vectorize(vi);
    if (par) st.parallel(outer);
    return;
  }
  // A small innermost axis (7x7 planes, 3-lane blocks): the fewest trailing axes whose elements
  // fill two vectors become one row, split by the vector width, the leading axes fused above it
  // (parallel). Elements contiguous within a row keep ramp indices (a channel permutation of 7x7
  // planes reads each plane as 6 vectors + 1), and the row's index arithmetic (divisions by the
  // leading extents) runs once per row instead of once per lane of a flat loop's vectors.
  if (ndata >= 2 && vector > 1) {
    size_t row_axes = 1;
    int64_t row = inner_extent;
    while (row_axes < ndata && row < 2 * vector) row *= extent_of(node->root_axis[ndata - 1 - row_axes++]);
    if (row >= 2 * vector && row_axes < ndata) {
      std::vector<IterVar> leaves = st.leaf_axes();
      IterVar row_axis = leaves[ndata - row_axes];
      for (size_t k = ndata - row_axes + 1; k < ndata; ++k) row_axis = st.fuse(row_axis, leaves[k]);
      IterVar outer = fuse_leading(st, ndata - row_axes);
      auto [vo, vi] = st.split(row_axis, vector);
      st.vectorize(vi);
      if (par) st.parallel(outer);
      return;
    }
  }
  // Rank 1, or every axis needed to fill two vectors: one flat loop over every element.
  IterVar fused = fuse_leading(st, ndata);
  if (vector > 1 && numel >= vector) {
    auto [outer, inner] = st.split(fused, vector);
    st.vectorize(inner);
    if (par) st.parallel(outer);
  } else if (par) {
    st.parallel(fused);
  }
}

void schedule_reduction_stage(Stage st, int64_t vector) {
  StageNode* node = st.node();
  const size_t ndata = node->root_axis.size();
  if (ndata == 0) return;
  int64_t numel = 1;
  for (const IterVar& iv : node->root_axis) numel *= extent_of(iv);
  if (vector > 1 && extent_of(node->root_axis.back()) == vector) {
    // An innermost data axis of exactly one vector (partial results per lane, e.g. topi's lane
    // reductions, or an NCHW8c channel block): the reduction loops go outside it and it becomes
    // one vector accumulator.
    const IterVar lane = node->root_axis.back();
    if (ndata >= 2) {
      IterVar fused = fuse_leading(st, ndata - 1);
      if (numel / vector > 1) st.parallel(fused);
    }
    std::vector<IterVar> order = node->reduce_axis;
    order.push_back(lane);
    st.reorder(order);
    st.vectorize(lane);
    return;
  }
  IterVar fused = fuse_leading(st, ndata);
  if (numel > 1) st.parallel(fused);
}

void schedule_rest(tir::Schedule& s, const ComputeResult& r, const Knobs& k, const std::vector<tir::Tensor>& handled) {
  const int64_t vector = k.get("vector"), parallel_min = k.get("parallel_min");
  for (const tir::Tensor& t : stage_tensors(s)) {
    if (std::any_of(handled.begin(), handled.end(), [&](const tir::Tensor& h) { return h.same_as(t); })) continue;
    Stage st = s[t];
    const bool reduction = !st.node()->reduce_axis.empty();
    if (st.node()->is_output || is_part(r, t) || reduction) {
      if (reduction) {
        schedule_reduction_stage(st, vector);
      } else {
        schedule_injective_stage(st, vector, parallel_min);
      }
    } else {
      st.compute_inline();
    }
  }
}

ConvTile conv2d_register_tile(const ConvTileShape& shape, int num_vector_regs) {
  const int64_t v = shape.vectors_per_block;
  // Cycles of one reduction step of a tile of o blocks x r rows x t columns: the FMAs (2 units),
  // the latency of one accumulator's chain (4 cycles: fewer than 8 accumulators leave the units
  // idle) and the loads (r * t broadcasts + the weight vectors, 2 per cycle). The output splits
  // into full tiles plus shorter tails in rows and columns; the tile with the best useful-FMA
  // rate wins, ties going to more accumulators, then to wider tiles.
  auto cycles = [&](int64_t o, int64_t r, int64_t t) {
    const double fma = static_cast<double>(o * r * t * v);
    return std::max({fma / 2.0, 4.0, static_cast<double>(r * t + o * v) / 2.0});
  };
  auto rate = [&](int64_t o, int64_t r, int64_t t) {
    double total = 0;
    for (const auto& [rows, nrow] : {std::pair{r, shape.out_height / r}, std::pair{shape.out_height % r, int64_t{1}}}) {
      if (rows == 0 || nrow == 0) continue;
      if (shape.pad_tails) {  // whole tiles over the padded width
        total += static_cast<double>(nrow * ((shape.out_width + t - 1) / t)) * cycles(o, rows, t);
        continue;
      }
      for (const auto& [cols, ncol] : {std::pair{t, shape.out_width / t}, std::pair{shape.out_width % t, int64_t{1}}}) {
        if (cols == 0 || ncol == 0) continue;
        total += static_cast<double>(nrow * ncol) * cycles(o, rows, cols);
      }
    }
    return static_cast<double>(o * shape.out_height * shape.out_width * v) / 2.0 / total;
  };
  // Registers: accumulators + weight vectors + 3 (a broadcast and what LLVM keeps for the loads:
  // 12 + 2 + 1 spilled in measurements on Zen 3), and, with several blocks (each broadcast feeds
  // o FMAs and LLVM loads a step's broadcasts ahead), accumulators + weights + broadcasts <=
  // registers + 3 (on Zen 3: 10 + 2 + 5 and 12 + 4 + 3 ran at full speed, 12 + 2 + 6 spilled; the
  // AVX-512 code of 2 x 13 = 26 + 2 + 13 spilled in its inner loop, that of 4 x 6 does not).
  // A weight panel of o blocks (the weights one tile reads over the whole reduction) above
  // 256 KiB (half of a 512 KiB L2) is re-streamed from L3 for every tile: then one block per
  // tile, with up to registers - 2 x (vectors per block) accumulators over several rows, halves
  // those passes. With a one-vector block that is registers - 2 (one weight vector, usable as an
  // FMA memory operand: 1 x 2 x 7 = 14 ymm accumulators ran at full speed on Zen 3); a two-vector
  // block needs its two weight vectors in registers and a broadcast per pixel: 14 accumulators
  // (1 x 1 x 7) spilled and ran at 44-48 % of peak, 12 (2 x 3, 3 x 2) at 90 % on 14x14.
  constexpr int64_t kPanelLimit = 256 << 10;
  const bool big_panel = 2 * shape.weight_block_bytes > kPanelLimit;
  ConvTile best;
  double best_rate = -1;
  int64_t best_acc = 0;
  for (int64_t o : {1, 2, 3, 4}) {
    if (shape.oc_blocks % o != 0 || (o > 1 && o * shape.weight_block_bytes > kPanelLimit)) continue;
    // Blocks of different groups read different inputs: o x (r x t) broadcasts instead of r x t
    // (RegNet's groups of 8 with 2 x 5 tiles spilled, 37 % of peak).
    if (shape.blocks_per_group > 0 && shape.blocks_per_group % o != 0) continue;
    // One block of one vector: its weight vector is an FMA memory operand, so registers - 2
    // accumulators fit as with big panels (RegNet's grouped 3x3 convs on 28 columns, groups of 8:
    // 14-column tiles 58 GFLOP/s, 7-column 57, the former 10 + 10 + 8 columns 40).
    const int64_t max_acc = big_panel || (o == 1 && v == 1) ? num_vector_regs - 2 * v : num_vector_regs - 3 - o * v;
    for (int64_t r = 1; r <= (big_panel ? shape.out_height : 1); ++r) {
      for (int64_t t = 1; t <= shape.out_width; ++t) {
        const int64_t acc = o * r * t * v;
        if (acc > max_acc || (o > 1 && acc + o * v + r * t > num_vector_regs + 3)) break;
        const double x = rate(o, r, t);
        if (x > best_rate + 1e-9 || (x > best_rate - 1e-9 && acc > best_acc)) {
          best = {o, r, t, x};
          best_rate = x;
          best_acc = acc;
        }
      }
    }
  }
  return best;
}

ConvTile conv2d_flat_pixel_tile(const ConvTileShape& shape, int num_vector_regs) {
  ConvTileShape flat = shape;
  flat.out_height = 1;
  flat.out_width = shape.out_height * shape.out_width;
  // With pad_tails the pixels are padded to whole tiles (conv2d.cc: the extra pixels recompute
  // the last one), so no tile carries a bounds test in its reduction loop: a tail tile inside the
  // parallel loop kept one per accumulator (RegNetY's grouped 3x3 on 7x7, 10-pixel tiles: 41
  // GFLOP/s with the test, 58 with 7-pixel tiles and none).
  return conv2d_register_tile(flat, num_vector_regs);
}

bool conv2d_flatten_pixels(const ConvTileShape& shape, int num_vector_regs) {
  // A margin so that near-ties keep the rows x columns tile (measured at 90-95 % of peak on
  // 14x14 and larger outputs).
  ConvTileShape rows = shape;  // rows x columns: tails are shorter tiles (partitioned, not padded)
  rows.pad_tails = false;
  return conv2d_flat_pixel_tile(shape, num_vector_regs).rate > conv2d_register_tile(rows, num_vector_regs).rate + 0.02;
}

int64_t conv2d_k_chunk(const ConvChunkShape& shape) {
  // Zen 3's caches (32 KiB L1d, 512 KiB L2 per core). Measured on ResNet-50's shapes, single-layer
  // models alternated 8-12 rounds at 1 and 2 threads (docs/performance.md "K-blocking"): 3x3
  // 512 -> 512 stride 2 on 7x7 output (295 KiB panel) 4-13 % faster with chunks of 1 block,
  // 1x1 2048 -> 512 on 7x7 (128 KiB panel) 5-12 % with 4; 1x1 1024 -> 512 and 1024 -> 256 on
  // 14x14 (64 KiB panels) between 7 % faster and 13 % slower from run to run; slower (3-20 %)
  // where panel and input fit L2 (1x1 512 -> 2048 on 7x7, 256 -> 1024 on 14x14) or one block's
  // input does not fit L1 (3x3 256 stride 2 on 14x14 output). So: a panel of at least a quarter
  // of L2 (what each tile re-streams, evicted by the input it reads), panel + input over L2.
  // Also on (since the K-blocked nest prefetches the next chunk's weights spread over its pixel
  // tiles, section "Spreading the weight prefetch") where the weights come from DRAM in a
  // model's pass (more than L2 in all) and few pixels use each weight (at most 64: the first
  // tile's wait for them is then a large share of the kernel): 1x1 512 -> 2048 and 1024 -> 2048
  // stride 2 on 7x7 inside ResNet-50, 8-12 % faster at 1 and 2 threads; not on 14x14 (196 pixels:
  // 3-6 % slower).
  constexpr int64_t kL1Bytes = 32 << 10, kL2Bytes = 512 << 10, kStackBytes = 16 << 10, kFewPixels = 64;
  const int64_t per_block = shape.panel_block_bytes + shape.input_block_bytes;
  const bool cache_bound = shape.in_blocks * shape.panel_block_bytes >= kL2Bytes / 4 && shape.in_blocks * per_block > kL2Bytes;
  const bool dram_bound = shape.pixels <= kFewPixels && shape.in_blocks * shape.panel_block_bytes * shape.channel_tiles > kL2Bytes;
  if (shape.accumulator_bytes > kStackBytes || !(cache_bound || dram_bound)) return 0;
  for (int64_t d = std::min(shape.in_blocks - 1, kL1Bytes / std::max<int64_t>(1, per_block)); d >= 1; --d) {
    if (shape.in_blocks % d == 0) return d;
  }
  return 0;
}

Knobs default_knobs(const ComputeResult& result, const codegen::Target& target) {
  KILN_ICHECK(!result.outputs.empty()) << "compute without outputs";
  const LayoutHints hints = layout_hints(target);
  Knobs k;
  k.set("vector", std::max(1, target.vector_lanes(element_bits(result.outputs[0].dtype()))));
  k.set("parallel_min", 16384);
  for (const auto& [name, value] : result.layout) k.set(name, value);
  switch (result.schedule) {
    case ScheduleKind::kInjective:
    case ScheduleKind::kReduction:
      break;
    case ScheduleKind::kMatmul: {
      const tir::Tensor a = result.parts.at("anchor");
      const int64_t m = a.shape()[a.shape().size() - 2];
      // The row tile comes with the compute (its layout "row_tile", topi/matmul.cc: the anchor's
      // rows are padded to a multiple of it); another tile_m stays correct (bounds guards).
      KILN_ICHECK(k.has("row_tile")) << "a matmul compute without a row_tile layout";
      const int64_t tile_m = k.get("row_tile");
      k.set("tile_m", tile_m);
      // Parallel loop over panels of B when there are more of them than row tiles (always for a
      // matrix-vector product, M = 1): both threads get work and each panel is read once. On the
      // BERT shapes (M = 128) both orders measured the same (docs/performance.md).
      const int64_t n = a.shape().back(), nb = k.get("n_block");
      k.set("panel_outer", (m + tile_m - 1) / tile_m < (n + nb - 1) / nb ? 1 : 0);
      break;
    }
    case ScheduleKind::kConv2dNchwc: {
      // The anchor is [N, M/ob, OH, OW, ob], or [N, M/ob, OH*OW, ob] with flat pixels (one row).
      const tir::Tensor a = result.parts.at("anchor");
      const bool flat = a.ndim() == 4;
      const int64_t ow = flat ? a.shape()[2] : a.shape()[3], ob = a.shape().back(), mb = a.shape()[1];
      const int64_t oh = flat ? 1 : a.shape()[2];
      ConvTileShape shape;
      shape.oc_blocks = mb;
      shape.out_height = oh;
      shape.out_width = ow;
      shape.vectors_per_block = std::max<int64_t>(1, ob / hints.vector_lanes_f32);
      shape.weight_block_bytes = ob * static_cast<int64_t>(ir::dtype_size(a.dtype()));
      shape.blocks_per_group = k.has("oc_blocks_per_group") ? k.get("oc_blocks_per_group") : 0;
      for (const tir::IterVar& r : a.get()->reduce_axis()) shape.weight_block_bytes *= extent_of(r);
      // Flat pixels: the tile the compute padded the pixels for (layout "pixel_tile").
      ConvTile tile = conv2d_register_tile(shape, hints.num_vector_regs);
      if (flat && k.has("pixel_tile")) {
        shape.pad_tails = true;
        tile = conv2d_register_tile(shape, hints.num_vector_regs);
        tile.tile_ow = k.get("pixel_tile");
      }
      k.set("tile_oh", tile.tile_oh);
      k.set("tile_ow", tile.tile_ow);
      k.set("oc_tile", tile.oc_tile);
      // Loop order of the parallel outer loops: (n, oh, oc-chunk) with rows_outer=1 keeps a band
      // of packed input rows cached while every chunk of the (sequentially streamed) weights uses
      // it; rows_outer=0 keeps one chunk's weights cached and streams the input per chunk.
      // Measured on the ResNet-50 shapes on Zen 3 (docs/performance.md): rows outside wins
      // unless the weights are very large (1x1 1024->2048: 8 MiB streamed per output row), so
      // the rule is a weight-size threshold; tuners may flip it. The runtime gives each thread
      // an equal contiguous chunk of the fused parallel loop, so row tiles with a shorter tail
      // go inside the channel tiles (every chunk then holds whole columns of row tiles).
      int64_t weight_elems = a.shape()[1] * ob;
      for (const tir::IterVar& r : a.get()->reduce_axis()) weight_elems *= extent_of(r);
      // Flat pixels (small images): one chunk's weights stay cached while all pixels pass.
      const bool rows_outer = !flat && weight_elems * 4 <= (4 << 20) && oh % tile.tile_oh == 0;
      k.set("rows_outer", rows_outer ? 1 : 0);
      // prefetch: off for the unblocked nest (docs/performance.md), on for the K-blocked one.
      const int64_t k_chunk = conv2d_k_chunk(conv2d_chunk_shape(a, tile.oc_tile));
      k.set("k_chunk", k_chunk);
      k.set("prefetch", k_chunk > 0 ? 1 : 0);
      break;
    }
    case ScheduleKind::kConv2dWinograd:
      winograd_default_knobs(result, hints, k);
      break;
    case ScheduleKind::kInt8Conv2d:
      int8_conv2d_default_knobs(result, k);
      break;
    case ScheduleKind::kInt8Matmul:
      int8_matmul_default_knobs(result, k);
      break;
    case ScheduleKind::kDepthwise: {
      const tir::Tensor a = result.parts.at("anchor");
      const int64_t ow = a.shape()[3];
      const int64_t lanes = k.get("vector");
      if (a.ndim() == 5) {
        // Blocked: tile_ow columns x (b / lanes) vector accumulators, leaving 4 registers for the
        // weight and input vectors; an exact divisor of the width of at least half that (no tail
        // tile), else the cap with a shorter last tile. Taps unrolled (the loads of an input
        // column shared by neighbouring columns' taps are then reused) unless the window is big.
        const int64_t vecs = std::max<int64_t>(1, (a.shape()[4] + lanes - 1) / lanes);
        const int64_t cap = std::max<int64_t>(1, std::min<int64_t>(16, (hints.num_vector_regs - 4) / vecs));
        const int64_t divisor = largest_divisor(ow, cap);
        k.set("tile_ow", divisor * 2 >= cap ? divisor : std::min(ow, cap));
        int64_t taps = 1;
        for (const tir::IterVar& r : a.get()->reduce_axis()) taps *= extent_of(r);
        k.set("unroll_taps", taps <= 25 ? 1 : 0);
        // Output rows per band (the padded input rows are copied once per band): the largest
        // divisor of OH <= 8 (no partial band) that leaves at least 32 parallel bands, else 1.
        const int64_t oh = a.shape()[2], planes = a.shape()[0] * a.shape()[1];
        int64_t band = largest_divisor(oh, 8);
        while (band > 1 && planes * (oh / band) < 32) band = largest_divisor(oh, band - 1);
        k.set("rows_per_band", band);
        break;
      }
      k.set("tile_ow", ow >= 2 * lanes ? 2 * lanes : ow >= lanes ? lanes : ow);
      break;
    }
  }
  return k;
}

void apply_schedule(tir::Schedule& s, const ComputeResult& result, const Knobs& knobs) {
  for (const auto& [name, value] : knobs.values()) {
    const bool flag = name == "rows_outer" || name == "panel_outer" || name == "unroll_taps" || name == "prefetch" ||
                      name == "k_chunk";  // knobs for which 0 means "off"
    if (value < 0 || (value == 0 && !flag)) {
      throw UserError(UserErrorKind::kInvalidArgument, "schedule knob '" + name + "'",
                      "is " + std::to_string(value) + ", expected a positive value", "");
    }
  }
  for (const auto& [name, value] : result.layout) {
    if (knobs.get(name) != value) {
      throw UserError(UserErrorKind::kInvalidArgument, "schedule knob '" + name + "'",
                      "is " + std::to_string(knobs.get(name)) + " but the compute's data layout uses " +
                          std::to_string(value),
                      "layout knobs are chosen when the compute is built; rebuild it to change them");
    }
  }
  switch (result.schedule) {
    case ScheduleKind::kInjective:
    case ScheduleKind::kReduction:
      if (has_row_parts(result)) {
        schedule_rows(s, result, knobs);
      } else {
        schedule_rest(s, result, knobs, {});
      }
      return;
    case ScheduleKind::kMatmul:
      schedule_matmul(s, result, knobs);
      return;
    case ScheduleKind::kConv2dNchwc:
      schedule_conv2d_nchwc(s, result, knobs);
      return;
    case ScheduleKind::kDepthwise:
      schedule_depthwise(s, result, knobs);
      return;
    case ScheduleKind::kConv2dWinograd:
      schedule_conv2d_winograd(s, result, knobs);
      return;
    case ScheduleKind::kInt8Conv2d:
      schedule_int8_conv2d(s, result, knobs);
      return;
    case ScheduleKind::kInt8Matmul:
      schedule_int8_matmul(s, result, knobs);
      return;
  }
}

}  // namespace kiln::topi
