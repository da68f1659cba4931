// Default CPU schedules for operator computes, as data: each template has named integer knobs
// (tile sizes, vector width, unroll, which axes run in parallel) and a default rule that derives
// them from the target and the shapes. Auto-tuning later searches knob values only; the
// templates stay fixed.
//
//   Knobs k = default_knobs(result, target);     // e.g. {"vector": 8, "tile_m": 4, ...}
//   k.set("tile_m", 6);                           // a tuner's choice
//   tir::Schedule s(result.outputs);
//   apply_schedule(s, result, k);
//
// Templates (schedule.cc, schedule_nn.cc):
//   injective   outputs (and every unnamed compute, inlined): fuse all axes, split the fused loop
//               by "vector" (tail: partition_tails keeps the main loop guard-free), vectorize the
//               inner part when the innermost axis is contiguous, parallel outer part when the
//               output has at least "parallel_min" elements.
//   reduction   each reduction stage at the root, its leading data-parallel axes fused and
//               parallel; injective stages inlined.
//   matmul      packed B panels of "n_block" columns; C tiles "tile_m" x "n_block" accumulated in
//               registers (cache_write), k outermost in the tile, rows parallel.
//   conv2d_nchwc  output channels blocked by "oc_block" (packed weights [M/ob, C/ib, kh, kw, ib, ob]),
//               register tile "oc_tile" blocks x "tile_oh" rows x "tile_ow" columns
//               (conv2d_register_tile),
//               reduction (c, kh, kw) outside the tile, (n, oh, oc-tile) parallel ("rows_outer"); an
//               elementwise epilogue of the anchor's shape is applied to the tile as it is written.
//               "k_chunk" > 0 (conv2d_k_chunk): the reduction's channel blocks in chunks outside
//               the tiles, each oc-tile's whole output accumulated on the stack (K-blocking).
//   depthwise   per (n, c) plane parallel, output rows vectorized by "vector" with kh/kw outside.
#ifndef KILN_TOPI_SCHEDULE_H_
#define KILN_TOPI_SCHEDULE_H_

#include <cstdint>
#include <map>
#include <string>

#include "kiln/codegen/target.h"
#include "kiln/tir/schedule.h"
#include "kiln/topi/compute.h"

namespace kiln::topi {

class Knobs {
 public:
  Knobs& set(const std::string& name, int64_t value) {
    values_[name] = value;
    return *this;
  }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  // UserError(kInvalidArgument) naming the knob when it is missing.
  int64_t get(const std::string& name) const;
  const std::map<std::string, int64_t>& values() const { return values_; }
  // "n_block=16 tile_m=4 vector=8"
  std::string to_string() const;

 private:
  std::map<std::string, int64_t> values_;
};

// The layout facts a target gives computes (vector lanes, register count).
LayoutHints layout_hints(const codegen::Target& target);

// The template's knobs with their default values for this compute on this target.
Knobs default_knobs(const ComputeResult& result, const codegen::Target& target);

// The conv2d_nchwc register tile (knobs oc_tile, tile_oh, tile_ow) for an output of `oc_blocks`
// channel blocks of `vectors_per_block` vectors each, out_height x out_width, whose weights for
// one channel block (over the whole reduction) take weight_block_bytes, on a target with
// `num_vector_regs` vector registers.
struct ConvTileShape {
  int64_t oc_blocks = 1, out_height = 1, out_width = 1, vectors_per_block = 1, weight_block_bytes = 0;
  // Grouped convolutions: output blocks per group. The blocks of one tile share their input
  // (broadcast) values only inside a group, so a tile's block count must divide it. 0: groups 1.
  int64_t blocks_per_group = 0;
  // Tails computed as whole tiles (the anchor padded to a multiple of the tile, flat pixels): a
  // tail costs a full tile instead of a shorter one.
  bool pad_tails = false;
};
struct ConvTile {
  int64_t oc_tile = 1, tile_oh = 1, tile_ow = 1;
  double rate = 0;  // the cycle model's useful FMA fraction of the whole output (1 = no tails)
};
ConvTile conv2d_register_tile(const ConvTileShape& shape, int num_vector_regs);

// Whether a convolution is better register-tiled over its out_height x out_width output pixels
// numbered as one axis than over rows x columns: when the cycle model's rate of the flat tile
// (conv2d_flat_pixel_tile) beats the 2-D tile's by 2 % (a 7-column row splits into 4 + 3 columns,
// 49 pixels into 9 x 5 + 4, or 10 x 5 with one padded pixel).
bool conv2d_flatten_pixels(const ConvTileShape& shape, int num_vector_regs);

// The register tile over the out_height x out_width pixels numbered as one axis (its tile_ow
// pixels; tile_oh = 1), the pixels padded to a multiple of the tile when shape.pad_tails.
ConvTile conv2d_flat_pixel_tile(const ConvTileShape& shape, int num_vector_regs);

// K-blocking of a blocked convolution (knob "k_chunk"; 0 = off): the input-channel blocks of the
// reduction per chunk, the chunk loop outside the register tiles, when one channel tile's weight
// panel is at least a quarter of L2 and does not fit L2 together with the input it reads (every
// tile would re-stream both) but a chunk of both fits L1, and the channel tile's whole output fits
// a stack accumulator (16 KiB). The largest such chunk that divides the blocks; 0 otherwise.
struct ConvChunkShape {
  int64_t in_blocks = 1;          // channel blocks of the reduction (rco)
  int64_t panel_block_bytes = 0;  // weights of one channel block for one channel tile (oc_tile x ob x kh x kw x icb)
  int64_t input_block_bytes = 0;  // one channel block of the (packed, padded) input: H x W x icb
  int64_t accumulator_bytes = 0;  // one channel tile's output: oc_tile x pixels x ob
  int64_t pixels = 0;             // output pixels (N x OH x OW)
  int64_t channel_tiles = 1;      // output channel tiles (M / (oc_tile x ob))
};
int64_t conv2d_k_chunk(const ConvChunkShape& shape);

// Applies the template of `result.schedule` to `s` (a Schedule of result.outputs) with `knobs`
// (missing knobs are a UserError naming them; values are checked: positive, dividing where the
// layout requires it).
void apply_schedule(tir::Schedule& s, const ComputeResult& result, const Knobs& knobs);

}  // namespace kiln::topi

#endif  // KILN_TOPI_SCHEDULE_H_
