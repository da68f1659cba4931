// Older ai.onnx operator versions (opsets 7..12), translated at import with their own semantics.
//
// Most old forms differ from the current one only in where a compile-time operand lives: an
// attribute instead of an input (Slice < 10, Pad < 11, Clip < 11). Those are upgraded by
// rewriting the node: the attribute becomes a constant input and the current converter runs on
// the upgraded node, so each op's semantics are written once. Ops with their own old semantics get
// their own converter: Upsample (7..10; scales attribute < 9, input from 9) and Resize-10 become
// `resize` with ONNX's asymmetric coordinates and floor (upsampling) / ceil (downsampling)
// nearest rounding; Dropout < 12 (ratio attribute, mask of the input's type before 10) is an
// identity in inference; BatchNormalization < 9 with spatial = 0 (statistics per activation, not
// per channel) becomes the scale-shift written with broadcasting ops.
//
// Nothing after import sees an opset: every old form is an ordinary graph op here.
#include <cmath>
#include <limits>

#include "import_limits.h"
#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Shape;
using ir::Value;

NDArray int_tensor(const std::vector<int64_t>& v) {
  NDArray a = NDArray::empty(DType::kI64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), a.mutable_data<int64_t>().begin());
  return a;
}

NDArray float_tensor(const std::vector<double>& v) {
  NDArray a = NDArray::empty(DType::kF32, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) a.set_from_double(static_cast<int64_t>(i), v[i]);
  return a;
}

// Builds the current form of the node being converted: `inputs` (ONNX value names, "" = omitted)
// replace the node's inputs, `drop` attributes are removed. Constant operands taken from
// attributes are defined under fresh names "<node>:<attribute>".
class UpgradedNode {
 public:
  explicit UpgradedNode(ImportContext& ctx) : ctx_(ctx), node_(ctx.node()) {}

  // Defines `data` as a constant value and returns its name.
  std::string constant(const std::string& attribute, NDArray data) {
    std::string name = node_.name + ":" + attribute;
    while (ctx_.has(name)) name += "'";
    ctx_.define(name, ctx_.constant(std::move(data), node_.name + "_" + attribute));
    return name;
  }
  void set_input(size_t i, const std::string& name) {
    if (node_.inputs.size() <= i) node_.inputs.resize(i + 1);
    node_.inputs[i] = name;
  }
  void drop_attr(const std::string& name) { node_.attrs.erase(name); }

  // Runs `modern` on the upgraded node; the context points back at the original afterwards.
  std::vector<Value> convert_with(const Converter& modern) {
    const OnnxNode* original = &ctx_.node();
    ctx_.begin_node(&node_);
    std::vector<Value> outs = modern(ctx_);
    ctx_.begin_node(original);
    return outs;
  }

 private:
  ImportContext& ctx_;
  OnnxNode node_;
};

// Slice-1..9: starts, ends (required) and axes attributes -> inputs 1..3.
Converter slice_v1(Converter modern) {
  return [modern](ImportContext& ctx) {
    if (ctx.opset() >= 10) return modern(ctx);
    if (!ctx.has_attr("starts") || !ctx.has_attr("ends")) ctx.fail_invalid("Slice-1 needs the starts and ends attributes");
    UpgradedNode up(ctx);
    up.set_input(1, up.constant("starts", int_tensor(ctx.attr_ints("starts", {}))));
    up.set_input(2, up.constant("ends", int_tensor(ctx.attr_ints("ends", {}))));
    if (ctx.has_attr("axes")) up.set_input(3, up.constant("axes", int_tensor(ctx.attr_ints("axes", {}))));
    for (const char* a : {"starts", "ends", "axes"}) up.drop_attr(a);
    return up.convert_with(modern);
  };
}

// Pad-2..10: pads (required) and value (float, default 0) attributes -> inputs 1 and 2.
Converter pad_v2(Converter modern) {
  return [modern](ImportContext& ctx) {
    if (ctx.opset() >= 11) return modern(ctx);
    if (!ctx.has_attr("pads")) ctx.fail_invalid("Pad-2 needs the pads attribute");
    UpgradedNode up(ctx);
    up.set_input(1, up.constant("pads", int_tensor(ctx.attr_ints("pads", {}))));
    up.set_input(2, up.constant("value", float_tensor({ctx.attr_float("value", 0.0)})));
    up.drop_attr("pads");
    up.drop_attr("value");
    return up.convert_with(modern);
  };
}

// Clip-6..10: min/max attributes, defaulting to the float range (so +-inf clamp to +-FLT_MAX).
Converter clip_v6(Converter modern) {
  return [modern](ImportContext& ctx) {
    if (ctx.opset() >= 11) return modern(ctx);
    const double lowest = std::numeric_limits<float>::lowest(), highest = std::numeric_limits<float>::max();
    UpgradedNode up(ctx);
    up.set_input(1, up.constant("min", float_tensor({ctx.attr_float("min", lowest)})));
    up.set_input(2, up.constant("max", float_tensor({ctx.attr_float("max", highest)})));
    up.drop_attr("min");
    up.drop_attr("max");
    std::vector<Value> outs = up.convert_with(modern);
    return outs;
  };
}

// Dropout-7..11: `ratio` attribute; inference only, so the output is the input. Its optional mask
// is all true: of the input's type before opset 10, bool from 10.
Converter dropout_v7(Converter modern) {
  return [modern](ImportContext& ctx) {
    if (ctx.opset() >= 12) return modern(ctx);
    Value x = ctx.input(0);
    std::vector<Value> outs{x};
    const auto& names = ctx.node().outputs;
    if (names.size() > 1 && !names[1].empty()) {
      NDArray mask = NDArray::empty(ctx.opset() >= 10 ? DType::kBool : x.type().dtype, x.type().shape);
      for (int64_t i = 0; i < mask.numel(); ++i) mask.set_from_double(i, 1.0);
      outs.push_back(ctx.constant(mask, names[1]));
    }
    return outs;
  };
}

// BatchNormalization-7/8: `spatial` = 0 keeps statistics per activation (scale, B, mean, var of
// shape [C, D1, ...]); it becomes (x - mean) * (scale / sqrt(var + epsilon)) + B with the
// parameters broadcast over the batch. spatial = 1 (the default) is the current op.
Converter batch_norm_v7(Converter modern) {
  return [modern](ImportContext& ctx) {
    if (ctx.opset() >= 9 || ctx.attr_int("spatial", 1) != 0) return modern(ctx);
    for (size_t k = 1; k < ctx.node().outputs.size(); ++k) {
      if (!ctx.node().outputs[k].empty()) ctx.fail_unsupported("training outputs (running mean/var) are not supported");
    }
    Value x = ctx.input(0);
    const Shape& xs = x.type().shape;
    if (xs.size() < 2) ctx.fail_invalid("input must be [N, C, ...], got " + x.type().to_string());
    Shape per_activation(xs.begin() + 1, xs.end());
    Shape broadcast = xs;
    broadcast[0] = 1;
    std::vector<Value> p;
    for (size_t i = 1; i < 5; ++i) {
      Value v = ctx.input(i);
      if (v.type().numel() != ir::shape_numel(per_activation)) {
        ctx.fail_invalid("spatial = 0 needs parameters of shape " + ir::shape_to_string(per_activation) + "; input " +
                         std::to_string(i) + " is " + v.type().to_string());
      }
      p.push_back(ctx.call1("reshape", {v}, Attrs().set("shape", broadcast)));
    }
    Value eps = ctx.constant(NDArray::scalar(x.type().dtype, ctx.attr_float("epsilon", 1e-5)), "epsilon");
    Value inv_std = ctx.call1("div", {p[0], ctx.call1("sqrt", {ctx.call1("add", {p[3], eps})})});
    Value centered = ctx.call1("sub", {x, p[2]});
    return std::vector<Value>{ctx.call1("add", {ctx.call1("mul", {centered, inv_std}), p[1]})};
  };
}

// Resize with asymmetric coordinates (x_in = x_out / scale) at the given full-rank scales, as
// Upsample-7..10 and Resize-10 define it: output sizes floor(in * scale); nearest rounds down on
// upsampled axes and up on downsampled ones. Nearest sampling is separable, so axes of both kinds
// are resized in two steps.
Value resize_asymmetric(ImportContext& ctx, Value x, const std::vector<double>& scales, const std::string& mode) {
  const Shape& in = x.type().shape;
  if (scales.size() != in.size()) {
    ctx.fail_invalid("scales has " + std::to_string(scales.size()) + " entries for an input of rank " + std::to_string(in.size()));
  }
  for (double s : scales) {
    if (!(s > 0)) ctx.fail_invalid("scales must be positive");
  }
  std::string onnx_mode = mode;
  if (mode == "bilinear") onnx_mode = "linear";
  if (onnx_mode != "nearest" && onnx_mode != "linear") ctx.fail_attr("mode", "is '" + mode + "'; expected nearest or linear");
  auto step = [&](Value v, const std::vector<double>& s, const std::string& nearest_mode) {
    Shape out = v.type().shape;
    bool identity = true;
    for (size_t d = 0; d < out.size(); ++d) {
      out[d] = checked_dimension(std::floor(static_cast<double>(out[d]) * s[d]), ctx.node_subject() + ": scales");
      identity = identity && s[d] == 1.0;
    }
    if (identity) return v;
    Attrs attrs;
    attrs.set("sizes", out).set("mode", onnx_mode).set("coordinate_transformation_mode", std::string("asymmetric"))
        .set("nearest_mode", nearest_mode).set("cubic_coeff_a", -0.75).set("exclude_outside", int64_t{0})
        .set("extrapolation_value", 0.0).set("scales", s).set("roi", std::vector<double>{});
    return ctx.call1("resize", {v}, attrs);
  };
  if (onnx_mode == "linear") return step(x, scales, "floor");
  std::vector<double> up(scales.size(), 1.0), down(scales.size(), 1.0);
  for (size_t d = 0; d < scales.size(); ++d) (scales[d] >= 1.0 ? up : down)[d] = scales[d];
  return step(step(x, up, "floor"), down, "ceil");
}

// Upsample-7/8 (scales attribute), -9/-10 (scales input).
std::vector<Value> convert_upsample(ImportContext& ctx) {
  Value x = ctx.input(0);
  std::vector<double> scales;
  if (ctx.has_input(1)) {
    scales = ctx.constant_floats(1, "scales");
  } else if (ctx.has_attr("scales")) {
    scales = ctx.attr_floats("scales", {});
  } else {
    ctx.fail_invalid("needs scales (an attribute before opset 9, the second input from opset 9)");
  }
  for (double s : scales) {
    if (s < 1.0) ctx.fail_invalid("Upsample scales must be >= 1 (use Resize to downsample)");
  }
  return {resize_asymmetric(ctx, x, scales, ctx.attr_string("mode", "nearest"))};
}

// Resize-10: Resize(X, scales), modes nearest/linear, asymmetric coordinates.
Converter resize_v10(Converter modern) {
  return [modern](ImportContext& ctx) {
    if (ctx.opset() >= 11) return modern(ctx);
    Value x = ctx.input(0);
    return std::vector<Value>{resize_asymmetric(ctx, x, ctx.constant_floats(1, "scales"), ctx.attr_string("mode", "nearest"))};
  };
}

// Wraps table[op] (which must exist) with an old-opset translation.
void wrap(std::map<std::string, Converter>& table, const std::string& op, Converter (*legacy)(Converter)) {
  auto it = table.find(op);
  KILN_ICHECK(it != table.end()) << "no current converter for " << op << " to add its older opsets to";
  it->second = legacy(it->second);
}

}  // namespace

void add_legacy_converters(std::map<std::string, Converter>& table) {
  wrap(table, "Slice", slice_v1);
  wrap(table, "Pad", pad_v2);
  wrap(table, "Clip", clip_v6);
  wrap(table, "Dropout", dropout_v7);
  wrap(table, "BatchNormalization", batch_norm_v7);
  wrap(table, "Resize", resize_v10);
  table["Upsample"] = convert_upsample;
}

}  // namespace kiln::frontend::onnx_import
