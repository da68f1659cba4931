// The search space of a schedule template (schedule.h) for the auto-tuner (issue 15): for each
// knob the template reads and a tuner may vary, its candidate values. Knobs not listed (the
// layout knobs a compute fixed in result.layout: "oc_block", "ic_block", "n_block", "row_tile",
// "wino_tile", "k_split") keep their default_knobs value.
//
//   KnobSpace space = knob_space(result, target);
//   Knobs k = default_knobs(result, target);
//   for (const KnobChoice& c : space.knobs) k.set(c.name, c.values[rng() % c.values.size()]);
//   if (space.admits(k)) { /* build it: apply_schedule may still reject it (UserError) */ }
//
// Contract:
//   - Every list holds the default value, sorted ascending, no duplicates; so default_knobs is
//     always a point of the space.
//   - Values are ones apply_schedule reads meaningfully for this compute (tiles no larger than
//     the axis they split, divisors where the template requires them, flags 0/1). Combinations
//     may still be invalid (apply_schedule throws UserError: the tuner skips them).
//   - admits() drops combinations whose register tile (the product of `tile_knobs` times
//     `tile_scale` accumulator vectors) exceeds `max_tile` registers: valid but certain to spill.
//
// Per template: injective/reduction: vector, parallel_min; matmul: tile_m, panel_outer;
// conv2d_nchwc: oc_tile, tile_oh, tile_ow, rows_outer; depthwise (blocked): tile_ow,
// rows_per_band, unroll_taps; depthwise (NCHW): tile_ow; winograd: tile_p, tile_mb; int8 conv:
// tile_ow.
#ifndef KILN_TOPI_KNOB_SPACE_H_
#define KILN_TOPI_KNOB_SPACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/codegen/target.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/schedule.h"

namespace kiln::topi {

struct KnobChoice {
  std::string name;
  std::vector<int64_t> values;
};

struct KnobSpace {
  std::vector<KnobChoice> knobs;        // in a fixed order (the tuner's feature order)
  std::vector<std::string> tile_knobs;  // whose product is the register tile
  int64_t tile_scale = 1;               // accumulator vectors per tile element
  int64_t max_tile = 0;                 // 0: no register limit
  bool admits(const Knobs& knobs) const;
  // Number of points (product of the list sizes), saturating at INT64_MAX.
  int64_t size() const;
};

KnobSpace knob_space(const ComputeResult& result, const codegen::Target& target);

// 16 hex digits over the template's name and every knob's name and value set (and the register
// limit): what a tuning record was measured in. A record applies only where this is unchanged
// (docs/tuning.md, "Records from another Kiln version").
std::string knob_space_fingerprint(const ComputeResult& result, const KnobSpace& space);

}  // namespace kiln::topi

#endif  // KILN_TOPI_KNOB_SPACE_H_
