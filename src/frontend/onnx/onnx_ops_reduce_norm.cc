// ONNX -> graph IR converters for the reductions beyond wave 1 and the spatial normalizations:
//   ReduceMin, ReduceProd -> reduce_min, reduce_prod; ReduceL1 = reduce_sum(abs x), ReduceL2 =
//   sqrt(reduce_sum(x * x)), ReduceSumSquare = reduce_sum(x * x), ReduceLogSum = log(reduce_sum x),
//   ReduceLogSumExp = log(reduce_sum(exp(x - m))) + m with m = reduce_max x (stable; the
//   elementwise steps fuse into the reductions' kernels). Axes: attribute before opset 18, input
//   from 18; keepdims; noop_with_empty_axes (the input is returned for empty axes).
//   ArgMax/ArgMin -> argmax/argmin; Hardmax -> equal(iota, argmax(x, keepdims)) cast to x's type
//   (opset < 13: on x coerced to 2-D at `axis`).
//   InstanceNormalization -> instance_norm; GroupNormalization -> instance_norm of x reshaped to
//   [N, G, C/G * spatial], reshaped back, times scale, plus bias per channel (opset 18: scale and
//   bias per group, repeated over the group's channels; 21: per channel); LRN -> lrn;
//   LpNormalization -> x / reduce_sum(|x|) or x / sqrt(reduce_sum(x * x)) along axis (a zero norm
//   divides by 1); ReduceMin of bool runs on u8;
//   MeanVarianceNormalization -> its ONNX function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
#include <algorithm>
#include <string>

#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::Value;

// The resolved, sorted axes of a Reduce* node; empty axes -> all (empty result means "noop").
struct ReduceAxes {
  std::vector<int64_t> axes;
  bool keepdims = true;
  bool noop = false;  // noop_with_empty_axes with no axes: the input is the result
};

ReduceAxes reduce_axes(ImportContext& ctx, int axes_input_since) {
  const Value x = ctx.input(0);
  const int64_t rank = x.type().rank();
  std::vector<int64_t> axes;
  if (ctx.opset() >= axes_input_since) {
    if (ctx.has_input(1)) axes = ctx.constant_ints(1, "axes");
  } else {
    axes = ctx.attr_ints("axes", {});
  }
  ReduceAxes r;
  r.keepdims = ctx.attr_int("keepdims", 1) != 0;
  if (axes.empty() && ctx.attr_int("noop_with_empty_axes", 0) != 0) {
    r.noop = true;
    return r;
  }
  for (int64_t a : axes) {
    const int64_t n = ctx.normalize_axis(a, rank, "axis");
    if (std::find(r.axes.begin(), r.axes.end(), n) != r.axes.end()) ctx.fail_invalid("axis " + std::to_string(a) + " is repeated");
    r.axes.push_back(n);
  }
  std::sort(r.axes.begin(), r.axes.end());
  if (r.axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) r.axes.push_back(i);
  }
  return r;
}

Attrs reduce_attrs(const std::vector<int64_t>& axes, bool keepdims) {
  return Attrs().set("axes", axes).set("keepdims", keepdims ? int64_t{1} : int64_t{0});
}

enum class Composite { kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

Converter reduce(Composite kind) {
  return [kind](ImportContext& ctx) {
    const ReduceAxes r = reduce_axes(ctx, 18);
    Value x = ctx.input(0);
    // noop_with_empty_axes: ONNX's reference still applies the elementwise part (|x|, x^2, ...).
    auto sum = [&](const Value& v) { return r.noop ? v : ctx.call1("reduce_sum", {v}, reduce_attrs(r.axes, r.keepdims)); };
    switch (kind) {
      case Composite::kMin: {
        if (r.noop) return std::vector<Value>{x};
        if (x.type().dtype == ir::DType::kBool) {  // bool (opset 20): the min of 0/1 as u8 ("all")
          Value u = ctx.call1("cast", {x}, Attrs().set("dtype", ir::DType::kU8));
          Value m = ctx.call1("reduce_min", {u}, reduce_attrs(r.axes, r.keepdims));
          return std::vector<Value>{ctx.call1("cast", {m}, Attrs().set("dtype", ir::DType::kBool))};
        }
        return std::vector<Value>{ctx.call1("reduce_min", {x}, reduce_attrs(r.axes, r.keepdims))};
      }
      case Composite::kProd:
        return std::vector<Value>{r.noop ? x : ctx.call1("reduce_prod", {x}, reduce_attrs(r.axes, r.keepdims))};
      case Composite::kL1: return std::vector<Value>{sum(ctx.call1("abs", {x}))};
      case Composite::kSumSquare: return std::vector<Value>{sum(ctx.call1("mul", {x, x}))};
      case Composite::kL2: {
        Value s = sum(ctx.call1("mul", {x, x}));
        if (!ir::is_float(s.type().dtype)) {  // integer L2: sqrt in f32, truncated back as ONNX's reference casts
          const ir::DType dt = s.type().dtype;
          Value f = ctx.call1("sqrt", {ctx.call1("cast", {s}, Attrs().set("dtype", ir::DType::kF32))});
          return std::vector<Value>{ctx.call1("cast", {f}, Attrs().set("dtype", dt))};
        }
        return std::vector<Value>{ctx.call1("sqrt", {s})};
      }
      case Composite::kLogSum: return std::vector<Value>{ctx.call1("log", {sum(x)})};
      case Composite::kLogSumExp: {
        if (r.noop) return std::vector<Value>{x};
        // An empty set gives m = -inf and log(0) + m = -inf, as ONNX's reference.
        Value m = ctx.call1("reduce_max", {x}, reduce_attrs(r.axes, true));
        Value shifted = ctx.call1("sub", {x, m});
        Value s = ctx.call1("reduce_sum", {ctx.call1("exp", {shifted})}, reduce_attrs(r.axes, r.keepdims));
        Value m_out = m;
        if (!r.keepdims) m_out = ctx.call1("reshape", {m}, Attrs().set("shape", s.type().shape));
        return std::vector<Value>{ctx.call1("add", {ctx.call1("log", {s}), m_out})};
      }
    }
    KILN_IFAIL() << "unhandled reduction";
  };
}

Converter arg_reduce(const std::string& op) {
  return [op](ImportContext& ctx) {
    const Value x = ctx.input(0);
    const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), x.type().rank(), "axis");
    return std::vector<Value>{ctx.call1(
        op, {x},
        Attrs()
            .set("axis", axis)
            .set("keepdims", ctx.attr_int("keepdims", 1) ? int64_t{1} : int64_t{0})
            .set("select_last_index", ctx.attr_int("select_last_index", 0) ? int64_t{1} : int64_t{0}))};
  };
}

// one_hot(argmax(x, axis)) in x's dtype.
Value hardmax_at(ImportContext& ctx, const Value& x, int64_t axis) {
  const ir::Shape& shape = x.type().shape;
  const int64_t n = shape[axis];
  Value idx = ctx.call1("argmax", {x}, Attrs().set("axis", axis).set("keepdims", int64_t{1}).set("select_last_index", int64_t{0}));
  ir::Shape iota_shape(shape.size() - static_cast<size_t>(axis), 1);
  iota_shape[0] = n;
  ir::NDArray iota = ir::NDArray::empty(ir::DType::kI64, iota_shape);
  auto p = iota.mutable_data<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  Value hit = ctx.call1("equal", {ctx.constant(std::move(iota), "iota"), idx});
  return ctx.call1("cast", {hit}, Attrs().set("dtype", x.type().dtype));
}

std::vector<Value> convert_hardmax(ImportContext& ctx) {
  const Value x = ctx.input(0);
  const int64_t rank = x.type().rank();
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", ctx.opset() >= 13 ? -1 : 1), rank, "axis");
  if (ir::shape_numel(x.type().shape) == 0) return {x};
  if (ctx.opset() >= 13) return {hardmax_at(ctx, x, axis)};
  // Before opset 13: x as a 2-D [prod(shape[:axis]), prod(shape[axis:])] matrix, hardmax per row.
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : cols) *= x.type().shape[d];
  Value x2 = ctx.call1("reshape", {x}, Attrs().set("shape", std::vector<int64_t>{rows, cols}));
  Value y2 = hardmax_at(ctx, x2, 1);
  return {ctx.call1("reshape", {y2}, Attrs().set("shape", x.type().shape))};
}

std::vector<Value> convert_instance_norm(ImportContext& ctx) {
  return {ctx.call1("instance_norm", {ctx.input(0), ctx.input(1), ctx.input(2)},
                    Attrs().set("epsilon", ctx.attr_float("epsilon", 1e-5)))};
}

// [C] -> [C, 1, ..., 1] to broadcast over x's axis 1 (x of rank `rank`).
Value per_channel(ImportContext& ctx, const Value& v, int64_t rank) {
  ir::Shape shape(static_cast<size_t>(rank - 1), 1);
  shape[0] = v.type().shape[0];
  return ctx.call1("reshape", {v}, Attrs().set("shape", shape));
}

std::vector<Value> convert_group_norm(ImportContext& ctx) {
  const Value x = ctx.input(0);
  const ir::Shape& shape = x.type().shape;
  const int64_t rank = x.type().rank();
  if (rank < 3) ctx.fail_invalid("input X has rank " + std::to_string(rank) + ", expected [N, C, D...] (rank >= 3)");
  const int64_t groups = ctx.attr_int("num_groups", -1);
  const int64_t channels = shape[1];
  if (groups <= 0 || channels % groups != 0) {
    ctx.fail_attr("num_groups", "is " + std::to_string(groups) + "; it must be positive and divide the " +
                                    std::to_string(channels) + " channels");
  }
  const int64_t numel = ir::shape_numel(shape);
  Value grouped = ctx.call1("reshape", {x}, Attrs().set("shape", ir::Shape{shape[0], groups, shape[0] * groups == 0 ? 0 : numel / (shape[0] * groups)}));
  Value normed = ctx.call1("instance_norm", {grouped}, Attrs().set("epsilon", ctx.attr_float("epsilon", 1e-5)));
  Value y = ctx.call1("reshape", {normed}, Attrs().set("shape", shape));
  Value scale = ctx.input(1), bias = ctx.input(2);
  // Opset 18 (scale/bias per group, shape [G]): repeat each over the group's channels.
  auto to_channels = [&](const Value& v, const std::string& what) {
    const ir::Shape& s = v.type().shape;
    if (s == ir::Shape{channels}) return v;
    if (s == ir::Shape{groups} && ctx.opset() < 21) {
      Value col = ctx.call1("reshape", {v}, Attrs().set("shape", ir::Shape{groups, 1}));
      Value rep = ctx.call1("expand", {col}, Attrs().set("shape", ir::Shape{groups, channels / groups}));
      return ctx.call1("reshape", {rep}, Attrs().set("shape", ir::Shape{channels}));
    }
    ctx.fail_invalid(what + " has shape " + ir::shape_to_string(s) + ", expected [" + std::to_string(channels) +
                     "] (channels)" + (ctx.opset() < 21 ? " or [" + std::to_string(groups) + "] (groups)" : ""));
  };
  y = ctx.call1("mul", {y, per_channel(ctx, to_channels(scale, "scale"), rank)});
  return {ctx.call1("add", {y, per_channel(ctx, to_channels(bias, "bias"), rank)})};
}

std::vector<Value> convert_lrn(ImportContext& ctx) {
  const int64_t size = ctx.attr_int("size", 0);
  if (size < 1) ctx.fail_attr("size", "is " + std::to_string(size), "LRN needs size >= 1");
  return {ctx.call1("lrn", {ctx.input(0)},
                    Attrs()
                        .set("size", size)
                        .set("alpha", ctx.attr_float("alpha", 1e-4))
                        .set("beta", ctx.attr_float("beta", 0.75))
                        .set("bias", ctx.attr_float("bias", 1.0)))};
}

std::vector<Value> convert_lp_norm(ImportContext& ctx) {
  const Value x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), x.type().rank(), "axis");
  const int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) ctx.fail_attr("p", "is " + std::to_string(p), "LpNormalization supports p = 1 or 2");
  const Attrs attrs = reduce_attrs({axis}, true);
  Value norm = p == 1 ? ctx.call1("reduce_sum", {ctx.call1("abs", {x})}, attrs)
                      : ctx.call1("sqrt", {ctx.call1("reduce_sum", {ctx.call1("mul", {x, x})}, attrs)});
  // A zero norm divides by 1 instead (ONNX's reference: x / where(norm == 0, 1, norm)).
  const ir::DType dt = x.type().dtype;
  Value zero = ctx.constant(ir::NDArray::scalar(dt, 0.0), "zero");
  Value one = ctx.constant(ir::NDArray::scalar(dt, 1.0), "one");
  norm = ctx.call1("where", {ctx.call1("equal", {norm, zero}), one, norm});
  return {ctx.call1("div", {x, norm})};
}

std::vector<Value> convert_mvn(ImportContext& ctx) {
  const Value x = ctx.input(0);
  const int64_t rank = x.type().rank();
  std::vector<int64_t> axes;
  for (int64_t a : ctx.attr_ints("axes", {0, 2, 3})) axes.push_back(ctx.normalize_axis(a, rank, "axis"));
  std::sort(axes.begin(), axes.end());
  const Attrs attrs = reduce_attrs(axes, true);
  Value mean = ctx.call1("reduce_mean", {x}, attrs);
  Value mean_sq = ctx.call1("reduce_mean", {ctx.call1("mul", {x, x})}, attrs);
  Value var = ctx.call1("sub", {mean_sq, ctx.call1("mul", {mean, mean})});
  Value std_eps = ctx.call1("add", {ctx.call1("sqrt", {var}),
                                    ctx.constant(ir::NDArray::scalar(x.type().dtype, 1e-9), "epsilon")});
  return {ctx.call1("div", {ctx.call1("sub", {x, mean}), std_eps})};
}

}  // namespace

void add_reduce_norm_converters(std::map<std::string, Converter>& table) {
  table["ReduceMin"] = reduce(Composite::kMin);
  table["ReduceProd"] = reduce(Composite::kProd);
  table["ReduceL1"] = reduce(Composite::kL1);
  table["ReduceL2"] = reduce(Composite::kL2);
  table["ReduceSumSquare"] = reduce(Composite::kSumSquare);
  table["ReduceLogSum"] = reduce(Composite::kLogSum);
  table["ReduceLogSumExp"] = reduce(Composite::kLogSumExp);
  table["ArgMax"] = arg_reduce("argmax");
  table["ArgMin"] = arg_reduce("argmin");
  table["Hardmax"] = convert_hardmax;
  table["InstanceNormalization"] = convert_instance_norm;
  table["GroupNormalization"] = convert_group_norm;
  table["LRN"] = convert_lrn;
  table["LpNormalization"] = convert_lp_norm;
  table["MeanVarianceNormalization"] = convert_mvn;
}

}  // namespace kiln::frontend::onnx_import
