// Computes of the int8 graph operators that AlterInt8Layout makes (src/ir/ops/int8_conv.cc,
// docs/int8.md "Graph wiring"): thin adapters from the graph ops' inputs and attributes to the
// fast int8 kernels of include/kiln/topi/int8.h, plus the schedule template "int8_conv2d"
// (schedule_int8_conv2d: register tile tile_ow x ob, the requantize epilogue on the tile), which
// also schedules int8_depthwise_conv2d (its result has a "pad" part instead of "x_words":
// schedule_int8_depthwise, tile_ow output columns x the channel block).
#include "kiln/support/error.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/int8.h"
#include "topi/int8_attrs.h"
#include "topi/schedule_util.h"
#include "topi/topi_util.h"

namespace kiln::topi {

int8::Requantize int8::requantize_of(const ir::Attrs& attrs) {
  int8::Requantize rq;
  rq.a_zero_point = static_cast<int32_t>(attrs.get_int("x_zero_point"));
  rq.out_zero_point = static_cast<int32_t>(attrs.get_int("y_zero_point"));
  rq.lo = static_cast<int32_t>(std::max<int64_t>(0, attrs.get_int("clamp_min")));
  rq.hi = static_cast<int32_t>(std::min<int64_t>(255, attrs.get_int("clamp_max")));
  if (const ir::AttrValue* dq = attrs.find("dequantize"); dq != nullptr && std::get<int64_t>(*dq) != 0) {
    rq.dequantize = true;
    rq.dequantize_scale = static_cast<float>(attrs.get_float("dequantize_scale"));
    rq.dequantize_zero_point = static_cast<int32_t>(attrs.get_int("dequantize_zero_point"));
  }
  return rq;
}

namespace {

using int8::requantize_of;

ComputeResult pack_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                           const LayoutHints&) {
  return injective_result(int8::pack_conv_weights(in[0], attrs.get_int("ob")));
}
KILN_REGISTER_COMPUTE(int8_pack_conv_weights, "int8_pack_conv_weights", pack_compute);

ComputeResult sums_compute(const std::vector<Tensor>& in, const ir::Attrs&, const std::vector<ir::TensorType>&,
                           const LayoutHints&) {
  ComputeResult r;
  r.outputs = {int8::conv_weight_sums(in[0])};
  r.schedule = ScheduleKind::kReduction;
  return r;
}
KILN_REGISTER_COMPUTE(int8_conv_weight_sums, "int8_conv_weight_sums", sums_compute);

int8::Conv2dGeometry geometry_of(const ir::Attrs& attrs) {
  const auto& s = attrs.get_ints("strides");
  const auto& p = attrs.get_ints("pads");
  const auto& d = attrs.get_ints("dilations");
  int8::Conv2dGeometry g;
  g.stride_h = s[0];
  g.stride_w = s[1];
  g.pad_top = p[0];
  g.pad_left = p[1];
  g.pad_bottom = p[2];
  g.pad_right = p[3];
  g.dilation_h = d[0];
  g.dilation_w = d[1];
  return g;
}

ComputeResult conv_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                           const LayoutHints&) {
  const int8::Conv2dGeometry g = geometry_of(attrs);
  const int8::Requantize rq = requantize_of(attrs);
  const Tensor& pw = in[1];
  int8::ConvKnobs knobs;
  knobs.ob = pw.shape()[4];
  knobs.narrow = attrs.get_int("narrow") != 0;
  const int8::Int8Conv2d conv = int8::int8_conv2d(in[0], pw, in[2], in[3], in[4], pw.shape()[2], pw.shape()[3], g, rq, knobs);
  ComputeResult r;
  r.outputs = {conv.out};
  r.parts = {{"anchor", conv.out}, {"acc", conv.acc}};
  if (conv.x_words.defined()) r.parts["x_words"] = conv.x_words;  // absent: the input read in place
  r.schedule = ScheduleKind::kInt8Conv2d;
  r.layout = {{"oc_block", knobs.ob}};
  return r;
}
KILN_REGISTER_COMPUTE(int8_conv2d, "int8_conv2d", conv_compute);

ComputeResult pack_dw_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                              const LayoutHints&) {
  return injective_result(int8::pack_depthwise_weights(in[0], attrs.get_int("b")));
}
KILN_REGISTER_COMPUTE(int8_pack_depthwise_weights, "int8_pack_depthwise_weights", pack_dw_compute);

ComputeResult dw_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                         const LayoutHints&) {
  const int8::Int8Depthwise dw =
      int8::int8_depthwise_conv2d(in[0], in[1], in[2], in[3], in[4], geometry_of(attrs), requantize_of(attrs));
  ComputeResult r;
  r.outputs = {dw.out};
  r.parts = {{"anchor", dw.out}, {"acc", dw.acc}, {"pad", dw.pad}};
  if (dw.wpairs.defined()) r.parts["wpairs"] = dw.wpairs;  // the tap-pair form
  r.schedule = ScheduleKind::kInt8Conv2d;
  r.layout = {{"oc_block", in[0].shape()[4]}};
  return r;
}
KILN_REGISTER_COMPUTE(int8_depthwise_conv2d, "int8_depthwise_conv2d", dw_compute);

}  // namespace

// Convolution: 4 columns x 16 channels (8 i32 accumulators, 2 weight vectors, the broadcast, the
// vpmaddwd constant and a product: 13 of 16 ymm). Depthwise: one column (2 accumulators) with
// the taps unrolled: the tap weights (one i16 vector each, 9 for 3x3) stay in registers across
// the columns; wider tiles made LLVM spill the accumulators it reassociates across the taps.
void int8_conv2d_default_knobs(const ComputeResult& r, Knobs& k) { k.set("tile_ow", r.parts.count("pad") != 0 ? 1 : 4); }

void schedule_int8_conv2d(tir::Schedule& s, const ComputeResult& r, const Knobs& k) {
  const tir::Tensor anchor = r.parts.at("anchor");
  if (r.parts.count("pad") != 0) {
    KILN_ICHECK(r.outputs.size() == 1 && r.outputs[0].same_as(anchor) && s.outputs().size() == 1 &&
                s.outputs()[0].same_as(anchor))
        << "int8_depthwise_conv2d runs alone (pattern opaque): its kernel has no epilogue members";
    int8::Int8Depthwise dw;
    dw.out = anchor;
    dw.acc = r.parts.at("acc");
    dw.pad = r.parts.at("pad");
    if (r.parts.count("wpairs") != 0) dw.wpairs = r.parts.at("wpairs");
    int8::schedule_int8_depthwise(s, dw, k.get("tile_ow"));
    return;
  }
  int8::ConvKnobs knobs;
  knobs.ob = k.get("oc_block");
  knobs.tile_ow = k.get("tile_ow");
  int8::Int8Conv2d conv;
  conv.acc = r.parts.at("acc");
  if (r.parts.count("x_words") != 0) conv.x_words = r.parts.at("x_words");
  // The stage that carries the tile loops: the group's single output when it is an elementwise
  // chain of the u8 result (FuseOps' epilogue, e.g. the QDQ residual dequantize + add + relu +
  // quantize: applied to the register tile, each output element written once, the u8 result
  // never stored), else the result itself.
  const bool epilogue = s.outputs().size() == 1 && !s.outputs()[0].same_as(anchor) &&
                        is_elementwise_chain(s.outputs()[0], anchor);
  KILN_ICHECK(epilogue || (s.outputs().size() == 1 && s.outputs()[0].same_as(anchor)))
      << "int8_conv2d: the kernel's output must be the convolution or an elementwise chain of it";
  conv.out = epilogue ? s.outputs()[0] : anchor;
  if (epilogue) s[anchor].compute_inline();
  int8::schedule_int8_conv2d(s, conv, knobs);
  std::vector<tir::Tensor> scheduled = {anchor, conv.acc, conv.out};
  if (conv.x_words.defined()) scheduled.push_back(conv.x_words);
  schedule_rest(s, r, k, scheduled);
}

}  // namespace kiln::topi
