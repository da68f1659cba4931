// Computes of the int8 matmul graph operators that AlterInt8Matmul makes (src/ir/ops/int8_matmul.cc,
// docs/int8.md "Int8 matmul"): thin adapters from the graph ops' inputs and attributes to the fast
// int8 matmul of include/kiln/topi/int8.h, plus the schedule template "int8_matmul"
// (schedule_int8_matmul: register tile tile_m x nb, the epilogue on the tile).
#include <algorithm>

#include "kiln/support/error.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/int8.h"
#include "topi/schedule_util.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

ComputeResult pack_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                           const LayoutHints&) {
  return injective_result(int8::pack_matmul_weights(in[0], attrs.get_int("nb")));
}
KILN_REGISTER_COMPUTE(int8_pack_matmul_weights, "int8_pack_matmul_weights", pack_compute);

ComputeResult sums_compute(const std::vector<Tensor>& in, const ir::Attrs&, const std::vector<ir::TensorType>&,
                           const LayoutHints&) {
  ComputeResult r;
  r.outputs = {int8::weight_column_sums(in[0])};
  r.schedule = ScheduleKind::kReduction;
  return r;
}
KILN_REGISTER_COMPUTE(int8_matmul_weight_sums, "int8_matmul_weight_sums", sums_compute);

int8::MatmulKnobs knobs_of(const Tensor& panels, const ir::Attrs& attrs) {
  int8::MatmulKnobs knobs;
  knobs.nb = panels.shape()[2];
  knobs.narrow = attrs.get_int("narrow") != 0;
  return knobs;
}

ComputeResult result_of(const int8::Int8Matmul& mm, int64_t nb) {
  ComputeResult r;
  r.outputs = {mm.out};
  r.parts = {{"anchor", mm.out}, {"acc", mm.acc}, {"a_words", mm.a_words}};
  r.schedule = ScheduleKind::kInt8Matmul;
  r.layout = {{"n_block", nb}};
  return r;
}

ComputeResult matmul_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                             const LayoutHints&) {
  int8::Requantize rq;
  rq.a_zero_point = static_cast<int32_t>(attrs.get_int("a_zero_point"));
  rq.out_zero_point = static_cast<int32_t>(attrs.get_int("y_zero_point"));
  rq.lo = static_cast<int32_t>(std::max<int64_t>(0, attrs.get_int("clamp_min")));
  rq.hi = static_cast<int32_t>(std::min<int64_t>(255, attrs.get_int("clamp_max")));
  const int8::MatmulKnobs knobs = knobs_of(in[1], attrs);
  return result_of(int8::int8_matmul(in[0], in[1], in[2], in[3], in[4], attrs.get_int("n"), rq, knobs), knobs.nb);
}
KILN_REGISTER_COMPUTE(int8_matmul, "int8_matmul", matmul_compute);

ComputeResult matmul_i32_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                                 const LayoutHints&) {
  const int8::MatmulKnobs knobs = knobs_of(in[1], attrs);
  return result_of(int8::int8_matmul_i32(in[0], in[1], in[2], in[3], attrs.get_int("n"), knobs), knobs.nb);
}
KILN_REGISTER_COMPUTE(int8_matmul_i32, "int8_matmul_i32", matmul_i32_compute);

}  // namespace

void int8_matmul_default_knobs(const ComputeResult&, Knobs& k) { k.set("tile_m", 4); }

void schedule_int8_matmul(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  KILN_ICHECK(r.outputs.size() == 1 && r.outputs[0].same_as(r.parts.at("anchor")))
      << "int8_matmul runs alone (pattern opaque): its kernel has no epilogue members";
  int8::MatmulKnobs knobs;
  knobs.nb = k.get("n_block");
  knobs.tile_m = k.get("tile_m");
  int8::Int8Matmul mm;
  mm.out = r.parts.at("anchor");
  mm.acc = r.parts.at("acc");
  mm.a_words = r.parts.at("a_words");
  int8::schedule_int8_matmul(s, mm, knobs);
}

}  // namespace kiln::topi
