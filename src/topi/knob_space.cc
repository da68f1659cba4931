// Search spaces of the schedule templates (include/kiln/topi/knob_space.h). Each template's
// knobs are read in schedule.cc / schedule_nn.cc / schedule_rows.cc / schedule_winograd.cc /
// int8_graph_ops.cc; the candidate values below are the ones those templates accept for the
// compute's shapes, always including the default.
#include "kiln/topi/knob_space.h"

#include <algorithm>
#include <limits>
#include <string>

#include "kiln/support/error.h"
#include "kiln/support/fnv.h"
#include "topi/schedule_util.h"

namespace kiln::topi {
namespace {

// Sorted, unique, with `must` (the default) included; values outside [1, cap] dropped (flags: 0
// allowed via lo).
std::vector<int64_t> tidy(std::vector<int64_t> v, int64_t must, int64_t lo, int64_t cap) {
  v.erase(std::remove_if(v.begin(), v.end(), [&](int64_t x) { return x < lo || x > cap; }), v.end());
  v.push_back(must);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<int64_t> range(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

std::vector<int64_t> divisors(int64_t n, int64_t cap) {
  std::vector<int64_t> v;
  for (int64_t d = 1; d <= std::min(n, cap); ++d) {
    if (n % d == 0) v.push_back(d);
  }
  return v;
}

void add(KnobSpace& space, const Knobs& def, const std::string& name, std::vector<int64_t> values, int64_t lo = 1,
         int64_t cap = std::numeric_limits<int64_t>::max()) {
  KILN_ICHECK(def.has(name)) << "knob space lists '" << name << "', which the template's defaults lack";
  space.knobs.push_back({name, tidy(std::move(values), def.get(name), lo, cap)});
}

// The injective/reduction knobs every template's leftover stages read.
void add_rest_knobs(KnobSpace& space, const Knobs& def) {
  const int64_t lanes = def.get("vector");
  add(space, def, "vector", {std::max<int64_t>(1, lanes / 2), lanes, 2 * lanes, 4 * lanes});
  add(space, def, "parallel_min", {2048, 16384, 131072});
}

}  // namespace

bool KnobSpace::admits(const Knobs& knobs) const {
  if (max_tile <= 0 || tile_knobs.empty()) return true;
  int64_t product = tile_scale;
  for (const std::string& name : tile_knobs) product *= knobs.has(name) ? knobs.get(name) : 1;
  return product <= max_tile;
}

int64_t KnobSpace::size() const {
  int64_t n = 1;
  for (const KnobChoice& c : knobs) {
    const int64_t m = static_cast<int64_t>(c.values.size());
    if (n > std::numeric_limits<int64_t>::max() / std::max<int64_t>(1, m)) return std::numeric_limits<int64_t>::max();
    n *= m;
  }
  return n;
}

KnobSpace knob_space(const ComputeResult& result, const codegen::Target& target) {
  const Knobs def = default_knobs(result, target);
  const LayoutHints hints = layout_hints(target);
  const int64_t regs = hints.num_vector_regs;
  KnobSpace space;
  switch (result.schedule) {
    case ScheduleKind::kInjective:
    case ScheduleKind::kReduction:
      add_rest_knobs(space, def);
      break;
    case ScheduleKind::kMatmul: {
      // C tiles tile_m x n_block (n_block: the packed B layout, fixed); tile_m need not divide the
      // padded rows (bounds guards), but a tile taller than the rows is pointless.
      const tir::Tensor a = result.parts.at("anchor");
      const int64_t m = a.shape()[a.shape().size() - 2], nb = def.get("n_block");
      const int64_t vecs = std::max<int64_t>(1, nb / std::max(1, hints.vector_lanes_f32));
      add(space, def, "tile_m", {1, 2, 3, 4, 5, 6, 8, 12, 16}, 1, std::max<int64_t>(1, m));
      add(space, def, "panel_outer", {0, 1}, 0);
      space.tile_knobs = {"tile_m"};
      space.tile_scale = vecs;
      space.max_tile = regs - 1;
      break;
    }
    case ScheduleKind::kConv2dNchwc: {
      const tir::Tensor a = result.parts.at("anchor");
      const bool flat = a.ndim() == 4;
      const int64_t ow = flat ? a.shape()[2] : a.shape()[3], mb = a.shape()[1];
      const int64_t oh = flat ? 1 : a.shape()[2], ob = a.shape().back();
      add(space, def, "oc_tile", divisors(mb, 8));
      add(space, def, "tile_oh", flat ? std::vector<int64_t>{1} : range(1, std::min<int64_t>(oh, 8)));
      add(space, def, "tile_ow", range(1, std::min<int64_t>(ow, 28)));
      add(space, def, "rows_outer", {0, 1}, 0);
      add(space, def, "prefetch", {0, 1}, 0);
      // K-blocking (0: off) where the default channel tile's output fits the stack accumulator;
      // chunks that divide the reduction's channel blocks.
      const ConvChunkShape chunk = conv2d_chunk_shape(a, def.get("oc_tile"));
      std::vector<int64_t> chunks = {0};
      if (chunk.accumulator_bytes <= (16 << 10)) {
        for (int64_t d : divisors(chunk.in_blocks, 16)) {
          if (d < chunk.in_blocks) chunks.push_back(d);
        }
      }
      add(space, def, "k_chunk", chunks, 0);
      space.tile_knobs = {"oc_tile", "tile_oh", "tile_ow"};
      space.tile_scale = std::max<int64_t>(1, ob / std::max(1, hints.vector_lanes_f32));
      space.max_tile = regs;
      break;
    }
    case ScheduleKind::kDepthwise: {
      const tir::Tensor a = result.parts.at("anchor");
      const int64_t ow = a.shape()[3], lanes = def.get("vector");
      if (a.ndim() == 5) {
        const int64_t vecs = std::max<int64_t>(1, (a.shape()[4] + lanes - 1) / lanes);
        add(space, def, "tile_ow", range(1, std::min<int64_t>(ow, 16)));
        add(space, def, "rows_per_band", divisors(a.shape()[2], 16));
        add(space, def, "unroll_taps", {0, 1}, 0);
        space.tile_knobs = {"tile_ow"};
        space.tile_scale = vecs;
        space.max_tile = regs - 2;
      } else {
        add(space, def, "tile_ow", {1, lanes / 2, lanes, 2 * lanes, 3 * lanes, 4 * lanes}, 1, ow);
      }
      break;
    }
    case ScheduleKind::kConv2dWinograd: {
      const tir::Tensor a = result.parts.at("anchor");
      const int64_t mb = a.shape()[2], tiles = a.shape()[3], ob = a.shape()[4];
      add(space, def, "tile_p", range(1, std::min<int64_t>(tiles, 16)));
      add(space, def, "tile_mb", divisors(mb, 4));
      add(space, def, "prefetch", {0, 1}, 0);
      space.tile_knobs = {"tile_p", "tile_mb"};
      space.tile_scale = std::max<int64_t>(1, ob / std::max(1, hints.vector_lanes_f32));
      space.max_tile = regs - 2;
      break;
    }
    case ScheduleKind::kInt8Conv2d: {
      const tir::Tensor a = result.parts.at("anchor");
      add(space, def, "tile_ow", range(1, 8), 1, a.shape()[3]);
      break;
    }
    case ScheduleKind::kInt8Matmul: {
      // Rows of u8 activations per register tile (n_block: the packed weight layout, fixed).
      const tir::Tensor a = result.parts.at("anchor");
      add(space, def, "tile_m", {1, 2, 3, 4, 6, 8}, 1, std::max<int64_t>(1, a.shape()[a.shape().size() - 2]));
      break;
    }
  }
  return space;
}

std::string knob_space_fingerprint(const ComputeResult& result, const KnobSpace& space) {
  std::string text = std::string("template=") + schedule_kind_name(result.schedule);
  for (const KnobChoice& c : space.knobs) {
    text += ";" + c.name + "=";
    for (size_t i = 0; i < c.values.size(); ++i) text += (i ? "," : "") + std::to_string(c.values[i]);
  }
  text += ";tile=";
  for (const std::string& k : space.tile_knobs) text += k + ",";
  text += "x" + std::to_string(space.tile_scale) + "<=" + std::to_string(space.max_tile);
  return fnv1a64_hex(text);
}

}  // namespace kiln::topi
