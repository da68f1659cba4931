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

// Largest divisor of n that is <= cap (>= 1).
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
  if (ndata >= 2 && vector > 1 && inner_extent >= vector) {
    // Rows: the outer axes fused (parallel), the innermost axis split by the vector width, so
    // its indices stay contiguous ramps (the tail is a shorter vector after partition_tails).
    IterVar outer = fuse_leading(st, ndata - 1);
    auto [vo, vi] = st.split(node->root_axis.back(), vector);
    st.vectorize(vi);
    if (par) st.parallel(outer);
    return;
  }
  // Small innermost axis or rank 1: one flat loop over every element.
  IterVar fused = fuse_leading(st, ndata);
  if (vector > 1 && numel >= vector) {
    auto [outer, inner] = st.split(fused, vector);
    st.vectorize(inner);
    if (par) st.parallel(outer);
  } else if (par) {
    st.parallel(fused);
  }
}

void schedule_reduction_stage(Stage st) {
  StageNode* node = st.node();
  const size_t ndata = node->root_axis.size();
  if (ndata == 0) return;
  int64_t numel = 1;
  for (const IterVar& iv : node->root_axis) numel *= extent_of(iv);
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
        schedule_reduction_stage(st);
      } else {
        schedule_injective_stage(st, vector, parallel_min);
      }
    } else {
      st.compute_inline();
    }
  }
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
      int64_t tile_m = 4;
      for (int64_t t : {6, 4, 5, 3}) {
        if (m % t == 0) {
          tile_m = t;
          break;
        }
      }
      if (hints.num_vector_regs >= 32 && m % 8 == 0) tile_m = 8;
      k.set("tile_m", std::min<int64_t>(tile_m, m));
      break;
    }
    case ScheduleKind::kConv2dNchwc: {
      const tir::Tensor a = result.parts.at("anchor");
      const int64_t ow = a.shape()[3], ob = a.shape()[4];
      // Register tile: tile_ow x (ob / lanes) accumulators, leaving registers for the weight
      // vectors and one broadcast input: 6 x 2 vectors on AVX2 (12 accumulators cover 2 FMA units
      // x 4 cycles latency with room), 14 x 2 on AVX-512. An exact divisor of the width within
      // 3/4 of that is preferred; otherwise the last tile is shorter (partition_tails).
      const int64_t vecs = std::max<int64_t>(1, ob / hints.vector_lanes_f32);
      const int64_t cap = std::max<int64_t>(1, std::min<int64_t>(12, (hints.num_vector_regs - 4) / vecs));
      int64_t tile = std::min(ow, cap);
      const int64_t divisor = largest_divisor(ow, cap);
      if (divisor * 4 >= cap * 3) tile = divisor;
      k.set("tile_ow", std::max<int64_t>(1, tile));
      // Loop order of the parallel outer loops: (n, oh, oc-chunk) with rows_outer=1 keeps a band
      // of packed input rows cached while every chunk of the (sequentially streamed) weights uses
      // it; rows_outer=0 keeps one chunk's weights cached and streams the input per chunk.
      // Measured on the ResNet-50 shapes on Zen 3 (docs/performance.md): rows outside wins
      // unless the weights are very large (1x1 1024->2048: 8 MiB streamed per output row), so
      // the rule is a weight-size threshold; tuners may flip it.
      int64_t weight_elems = a.shape()[1] * ob;
      for (const tir::IterVar& r : a.get()->reduce_axis()) weight_elems *= extent_of(r);
      const bool rows_outer = weight_elems * 4 <= (4 << 20);
      k.set("rows_outer", rows_outer ? 1 : 0);
      break;
    }
    case ScheduleKind::kConv2dWinograd:
      winograd_default_knobs(result, hints, k);
      break;
    case ScheduleKind::kDepthwise: {
      const tir::Tensor a = result.parts.at("anchor");
      const int64_t ow = a.shape()[3];
      const int64_t lanes = k.get("vector");
      k.set("tile_ow", ow >= 2 * lanes ? 2 * lanes : ow >= lanes ? lanes : ow);
      break;
    }
  }
  return k;
}

void apply_schedule(tir::Schedule& s, const ComputeResult& result, const Knobs& knobs) {
  for (const auto& [name, value] : knobs.values()) {
    if (value < 0 || (value == 0 && name != "rows_outer")) {
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
      schedule_rest(s, result, knobs, {});
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
  }
}

}  // namespace kiln::topi
