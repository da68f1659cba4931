// ONNX -> graph IR converters for shape and data movement: Constant, Shape, ConstantOfShape,
// Identity, Dropout, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Gather,
// Expand, Pad, Range (constant inputs: a constant), ScatterND (constant indices: gather + where).
// Everything shape-like is resolved to attributes here (docs/ops.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "import_limits.h"
#include "kiln/support/error.h"
#include "known_values.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Shape;
using ir::Value;

Value reshape_to(ImportContext& ctx, Value x, const Shape& shape) {
  if (x.type().shape == shape) return x;
  return ctx.call1("reshape", {x}, Attrs().set("shape", shape));
}

std::vector<Value> convert_constant(ImportContext& ctx) {
  const auto& attrs = ctx.node().attrs;
  if (attrs.size() != 1) ctx.fail_invalid("must have exactly one value attribute");
  const auto& [name, attr] = *attrs.begin();
  NDArray data;
  if (name == "value" || name == "sparse_value") {  // a sparse tensor is decoded dense
    data = *ctx.attr_tensor(name);
  } else if (name == "value_float") {
    data = NDArray::scalar(DType::kF32, ctx.attr_float("value_float", 0));
  } else if (name == "value_int") {
    data = NDArray::empty(DType::kI64, {});
    data.mutable_data<int64_t>()[0] = ctx.attr_int("value_int", 0);
  } else if (name == "value_floats") {
    auto v = ctx.attr_floats("value_floats", {});
    data = NDArray::empty(DType::kF32, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) data.set_from_double(static_cast<int64_t>(i), v[i]);
  } else if (name == "value_ints") {
    auto v = ctx.attr_ints("value_ints", {});
    data = NDArray::empty(DType::kI64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), data.mutable_data<int64_t>().begin());
  } else {
    ctx.fail_attr(name, "is not supported (Kiln has no string tensors)");
  }
  return {ctx.constant(data, ctx.node().outputs.at(0))};
}

NDArray ints_array(const std::vector<int64_t>& v) {
  NDArray a = NDArray::empty(DType::kI64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), a.mutable_data<int64_t>().begin());
  return a;
}

std::vector<Value> convert_shape(ImportContext& ctx) {
  const Shape& shape = ctx.input(0).type().shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t start = ctx.attr_int("start", 0);
  int64_t end = ctx.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  end = std::max(start, end);
  bool symbolic = false;
  for (int64_t i = start; i < end; ++i) symbolic = symbolic || shape[i].is_symbolic();
  if (symbolic) {  // computed at run time; its elements are known (known_values.h)
    return {ctx.call1("shape_of", {ctx.input(0)}, Attrs().set("start", start).set("end", end))};
  }
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(shape[i]);
  return {ctx.constant(ints_array(dims), ctx.node().outputs.at(0))};
}

std::vector<Value> convert_constant_of_shape(ImportContext& ctx) {
  const std::vector<ir::Dim> dims = ctx.dims_input(0, "shape");
  for (const ir::Dim& d : dims) {
    if (d.is_static() && d.value() < 0) ctx.fail_invalid("shape has a negative dimension");
  }
  const NDArray* value = ctx.attr_tensor("value");
  if (value && value->numel() != 1) ctx.fail_attr("value", "must hold one element");
  DType dtype = value ? value->dtype() : DType::kF32;
  double fill = value ? value->get_as_double(0) : 0.0;
  const bool symbolic = std::any_of(dims.begin(), dims.end(), [](const ir::Dim& d) { return d.is_symbolic(); });
  if (symbolic) {  // the value broadcast to the symbolic shape
    NDArray one = NDArray::empty(dtype, {});
    one.set_from_double(0, fill);
    if (value) one = value->reshaped({});
    Shape shape;
    shape.assign(dims.begin(), dims.end());
    return {ctx.call1("expand", {ctx.constant(one, ctx.node().outputs.at(0) + ".value")}, Attrs().set("shape", shape))};
  }
  const std::vector<int64_t> shape(dims.begin(), dims.end());
  checked_tensor_size(dtype, shape, ctx.node_subject() + ": the constant it makes");
  NDArray out = NDArray::empty(dtype, shape);
  if (fill != 0.0) {
    for (int64_t i = 0; i < out.numel(); ++i) out.set_from_double(i, fill);
  }
  return {ctx.constant(out, ctx.node().outputs.at(0))};
}

std::vector<Value> convert_dropout(ImportContext& ctx) {
  if (ctx.has_input(2)) {
    auto training = ctx.constant_floats(2, "training_mode");
    if (!training.empty() && training[0] != 0) {
      // Training mode drops at random; only a ratio of 0 (an identity) is deterministic.
      std::vector<double> ratio{0.5};
      if (ctx.has_input(1)) ratio = ctx.constant_floats(1, "ratio");
      if (ratio.size() != 1 || ratio[0] != 0.0) {
        ctx.fail_unsupported("training mode with a non-zero ratio is not supported (random; inference only)");
      }
    }
  }
  Value x = ctx.input(0);
  std::vector<Value> outs{x};
  if (ctx.node().outputs.size() > 1 && !ctx.node().outputs[1].empty()) {
    NDArray mask = NDArray::empty(DType::kBool, x.type().shape);
    for (int64_t i = 0; i < mask.numel(); ++i) mask.mutable_data<uint8_t>()[i] = 1;
    outs.push_back(ctx.constant(mask, ctx.node().outputs[1]));
  }
  return outs;
}

std::vector<Value> convert_reshape(ImportContext& ctx) {
  Value x = ctx.input(0);
  std::vector<ir::Dim> target = ctx.dims_input(1, "shape");
  const bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  const Shape& in = x.type().shape;
  Shape out;
  out.assign(target.begin(), target.end());
  const std::string target_text = ir::shape_to_string(out);
  ir::Dim known = 1;
  int infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowzero) {
      if (i >= in.size()) ctx.fail_invalid("shape[" + std::to_string(i) + "] = 0 copies a dimension the input lacks");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer >= 0) ctx.fail_invalid("shape has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (target[i].is_static()) {
      if (target[i].value() < 0) ctx.fail_invalid("shape has a negative dimension " + target[i].to_string());
      if (known.is_static() && target[i].value() != 0 &&
          known.value() > std::numeric_limits<int64_t>::max() / target[i].value()) {
        ctx.fail_invalid("shape " + target_text + " has more elements than 2^63");
      }
    }
    known = ir::dim_mul(known, target[i]);
  }
  const ir::Dim numel = ir::shape_numel_dim(in);
  const bool all_static = known.is_static() && numel.is_static();
  const std::string cannot = "cannot reshape " + x.type().to_string() + " to " + target_text;
  if (infer >= 0) {
    std::optional<ir::Dim> rest = known == 0 ? std::nullopt : ir::dim_divide_exact(numel, known);
    if (!rest && all_static) ctx.fail_invalid(cannot);
    if (!rest) {
      ctx.fail_unsupported(cannot + ": the -1 would be " + numel.to_string() + " / " + known.to_string() +
                               ", which Kiln cannot prove whole",
                           "pin the dimensions with --input-shape");
    }
    target[infer] = *rest;
  }
  out.assign(target.begin(), target.end());
  if (all_static && ir::shape_numel(out) != numel.value()) ctx.fail_invalid(cannot);
  return {reshape_to(ctx, x, out)};  // the reshape's inference checks symbolic element counts
}

std::vector<Value> convert_flatten(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape& in = x.type().shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -rank || axis > rank) ctx.fail_invalid("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  ir::Dim outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) = ir::dim_mul(i < axis ? outer : inner, in[i]);
  return {reshape_to(ctx, x, Shape{outer, inner})};
}

std::vector<int64_t> axes_from(ImportContext& ctx, int input_since, bool* given) {
  std::vector<int64_t> axes;
  *given = false;
  if (ctx.opset() >= input_since) {
    if (ctx.has_input(1)) {
      axes = ctx.constant_ints(1, "axes");
      *given = true;
    }
  } else if (ctx.has_attr("axes")) {
    axes = ctx.attr_ints("axes", {});
    *given = true;
  }
  return axes;
}

std::vector<Value> convert_squeeze(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape& in = x.type().shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  bool given;
  std::vector<int64_t> axes = axes_from(ctx, 13, &given);
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) drop[i] = in[i] == 1;
  }
  for (int64_t a : axes) {
    int64_t n = ctx.normalize_axis(a, rank, "axis");
    if (in[n] != 1) ctx.fail_invalid("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[n]));
    drop[n] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(in[i]);
  }
  return {reshape_to(ctx, x, out)};
}

std::vector<Value> convert_unsqueeze(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape& in = x.type().shape;
  bool given;
  std::vector<int64_t> axes = axes_from(ctx, 13, &given);
  if (!given) ctx.fail_invalid("axes are required");
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : axes) {
    int64_t n = ctx.normalize_axis(a, out_rank, "axis");
    if (inserted[n]) ctx.fail_invalid("axis " + std::to_string(a) + " is repeated");
    inserted[n] = true;
  }
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? ir::Dim(1) : in[k++]);
  return {reshape_to(ctx, x, out)};
}

std::vector<Value> convert_transpose(ImportContext& ctx) {
  Value x = ctx.input(0);
  const int64_t rank = x.type().rank();
  std::vector<int64_t> perm;
  for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  perm = ctx.attr_ints("perm", perm);
  if (static_cast<int64_t>(perm.size()) != rank) ctx.fail_attr("perm", "has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  for (auto& p : perm) p = ctx.normalize_axis(p, rank, "perm entry");
  bool identity = true;
  for (int64_t i = 0; i < rank; ++i) identity = identity && perm[i] == i;
  if (identity) return {x};
  return {ctx.call1("transpose", {x}, Attrs().set("perm", perm))};
}

std::vector<Value> convert_concat(ImportContext& ctx) {
  std::vector<Value> args;
  for (size_t i = 0; i < ctx.node().inputs.size(); ++i) {
    if (ctx.has_input(i)) args.push_back(ctx.input(i));
  }
  if (args.empty()) ctx.fail_invalid("has no inputs");
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), args[0].type().rank(), "axis");
  if (args.size() == 1) return {args[0]};
  return {ctx.call1("concat", args, Attrs().set("axis", axis))};
}

std::vector<Value> convert_split(ImportContext& ctx) {
  Value x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), x.type().rank(), "axis");
  const int64_t dim = x.type().shape[axis];
  const int64_t n_out = static_cast<int64_t>(ctx.node().outputs.size());
  std::vector<int64_t> sizes;
  if (ctx.opset() >= 13) {
    if (ctx.has_input(1)) sizes = ctx.constant_ints(1, "split");
  } else {
    sizes = ctx.attr_ints("split", {});
  }
  if (sizes.empty()) {
    int64_t parts = ctx.opset() >= 18 && ctx.has_attr("num_outputs") ? ctx.attr_int("num_outputs", n_out) : n_out;
    if (parts != n_out) ctx.fail_invalid("num_outputs = " + std::to_string(parts) + " but the node has " + std::to_string(n_out) + " outputs");
    if (ctx.opset() >= 18 && ctx.has_attr("num_outputs")) {
      const int64_t chunk = (dim + parts - 1) / parts;  // ceil; the last part takes the rest
      for (int64_t i = 0, left = dim; i < parts; ++i, left -= chunk) sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
    } else {
      if (dim % parts != 0) ctx.fail_invalid("axis of size " + std::to_string(dim) + " does not split evenly into " + std::to_string(parts));
      sizes.assign(parts, dim / parts);
    }
  }
  if (static_cast<int64_t>(sizes.size()) != n_out) {
    ctx.fail_invalid("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n_out) + " outputs");
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != dim) ctx.fail_invalid("split sizes add up to " + std::to_string(total) + ", the axis has " + std::to_string(dim));
  if (n_out == 1) return {x};
  return ctx.call("split", {x}, Attrs().set("axis", axis).set("sizes", sizes));
}

std::vector<Value> convert_slice(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape& in = x.type().shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts = ctx.constant_ints(1, "starts");
  std::vector<int64_t> ends = ctx.constant_ints(2, "ends");
  std::vector<int64_t> axes, steps;
  if (ctx.has_input(3)) {
    axes = ctx.constant_ints(3, "axes");
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (ctx.has_input(4)) {
    steps = ctx.constant_ints(4, "steps");
  } else {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    ctx.fail_invalid("starts, ends, axes and steps have different lengths");
  }
  std::vector<int64_t> b, e, a, s;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = ctx.normalize_axis(axes[i], rank, "axis");
    if (seen[axis]) ctx.fail_invalid("axis " + std::to_string(axes[i]) + " is repeated");
    seen[axis] = true;
    if (steps[i] == 0) ctx.fail_invalid("step is 0");
    // begins/ends keep ONNX's meaning (negative counts from the end, out of range clamps):
    // strided_slice applies ONNX Slice's rules itself (docs/ops.md).
    const int64_t start = starts[i], end = ends[i], step = steps[i];
    b.push_back(start);
    e.push_back(end);
    a.push_back(axis);
    s.push_back(step);
  }
  return {ctx.call1("strided_slice", {x}, Attrs().set("begins", b).set("ends", e).set("axes", a).set("steps", s))};
}

std::vector<Value> convert_gather(ImportContext& ctx) {
  Value data = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), data.type().rank(), "axis");
  return {ctx.call1("gather", {data, ctx.input(1)}, Attrs().set("axis", axis))};
}

std::vector<Value> convert_expand(ImportContext& ctx) {
  const std::vector<ir::Dim> dims = ctx.dims_input(1, "shape");
  Shape shape;
  shape.assign(dims.begin(), dims.end());
  return {ctx.call1("expand", {ctx.input(0)}, Attrs().set("shape", shape))};
}

std::vector<Value> convert_pad(ImportContext& ctx) {
  Value x = ctx.input(0);
  const int64_t rank = x.type().rank();
  std::string mode = ctx.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    ctx.fail_attr("mode", "is '" + mode + "'; expected constant, reflect, edge or wrap");
  }
  std::vector<int64_t> pads = ctx.constant_ints(1, "pads");
  double value = 0.0;
  if (ctx.has_input(2)) {
    auto v = ctx.constant_floats(2, "constant_value");
    if (v.size() > 1) ctx.fail_invalid("constant_value must be a scalar");
    if (!v.empty()) value = v[0];
  }
  std::vector<int64_t> full(2 * rank, 0);
  if (ctx.has_input(3)) {
    std::vector<int64_t> axes = ctx.constant_ints(3, "axes");
    if (pads.size() != 2 * axes.size()) ctx.fail_invalid("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = ctx.normalize_axis(axes[i], rank, "axis");
      full[a] = pads[i];
      full[a + rank] = pads[i + axes.size()];
    }
  } else {
    if (static_cast<int64_t>(pads.size()) != 2 * rank) {
      ctx.fail_invalid("pads has " + std::to_string(pads.size()) + " entries; rank " + std::to_string(rank) + " needs " + std::to_string(2 * rank));
    }
    full = pads;
  }
  bool zero = true;
  for (int64_t p : full) zero = zero && p == 0;
  if (zero) return {x};
  return {ctx.call1("pad", {x}, Attrs().set("pads", full).set("mode", mode).set("value", value))};
}

// Range(start, limit, delta): all three must be constants; the result is a constant of their dtype
// with max(ceil((limit - start) / delta), 0) elements start + i * delta (integers exactly).
// Range whose start or limit is a known symbolic integer (Range(0, Shape(x)[1], 1): position ids)
// and whose delta is a constant: start + delta * ramp, the ramp 0..n-1 an exclusive cumsum of ones
// (exact in int64), n = ceil((limit - start) / delta).
std::vector<Value> symbolic_range(ImportContext& ctx, const KnownInts& start, const KnownInts& limit, const KnownInts& delta) {
  if (!start.scalar || !limit.scalar || !delta.scalar) ctx.fail_invalid("start, limit and delta must be scalars");
  if (start.dtype != limit.dtype || delta.dtype != start.dtype) ctx.fail_invalid("start, limit and delta differ in type");
  if (!delta.is_static()) ctx.fail_unsupported("delta is computed at run time; Range's output size depends on it", "pin the dimensions with --input-shape");
  const int64_t d = delta.elems[0].value();
  if (d == 0) ctx.fail_invalid("delta is 0");
  const ir::Dim span = d > 0 ? ir::dim_sub(limit.elems[0], start.elems[0]) : ir::dim_sub(start.elems[0], limit.elems[0]);
  ir::Dim n = ir::dim_ceildiv(span, ir::Dim(d > 0 ? d : -d));
  if (!provably_non_negative(n)) n = ir::dim_max(n, 0);
  NDArray one = NDArray::empty(DType::kI64, {});
  one.mutable_data<int64_t>()[0] = 1;
  const std::string base = ctx.node().outputs.at(0);
  Value ramp = ctx.call1("expand", {ctx.constant(one, base + ".one")}, Attrs().set("shape", Shape{n}));
  ramp = ctx.call1("cumsum", {ramp}, Attrs().set("axis", int64_t{0}).set("exclusive", int64_t{1}));
  if (start.dtype != DType::kI64) ramp = ctx.call1("cast", {ramp}, Attrs().set("dtype", start.dtype));
  if (d != 1) ramp = ctx.call1("mul", {ramp, ctx.input(2)});
  if (!(start.elems[0] == 0)) ramp = ctx.call1("add", {ramp, ctx.input(0)});
  return {ramp};
}

std::vector<Value> convert_range(ImportContext& ctx) {
  {
    std::optional<KnownInts> start = ctx.known_input(0), limit = ctx.known_input(1), delta = ctx.known_input(2);
    if (start && limit && delta && (!start->is_static() || !limit->is_static())) return symbolic_range(ctx, *start, *limit, *delta);
  }
  // The output length ceil((limit - start) / delta) depends on all three values.
  const std::string why = "; Range's output size depends on the values of start, limit and delta";
  const NDArray start = ctx.constant_input(0, "start" + why), limit = ctx.constant_input(1, "limit" + why),
                delta = ctx.constant_input(2, "delta" + why);
  for (const NDArray* a : {&start, &limit, &delta}) {
    if (a->numel() != 1) ctx.fail_invalid("start, limit and delta must be scalars");
  }
  const DType dtype = start.dtype();
  if (limit.dtype() != dtype || delta.dtype() != dtype) ctx.fail_invalid("start, limit and delta differ in type");
  NDArray out;
  if (ir::is_float(dtype)) {
    const double s = start.get_as_double(0), l = limit.get_as_double(0), d = delta.get_as_double(0);
    if (d == 0) ctx.fail_invalid("delta is 0");
    const int64_t n = checked_dimension(std::max(std::ceil((l - s) / d), 0.0), ctx.node_subject() + ": its length");
    checked_tensor_size(dtype, {n}, ctx.node_subject());
    out = NDArray::empty(dtype, {n});
    for (int64_t i = 0; i < n; ++i) out.set_from_double(i, s + static_cast<double>(i) * d);
  } else {
    const int64_t s = checked_integer_element(start, 0, ctx.node_subject() + ": start"),
                  l = checked_integer_element(limit, 0, ctx.node_subject() + ": limit"),
                  d = checked_integer_element(delta, 0, ctx.node_subject() + ": delta");
    if (d == 0) ctx.fail_invalid("delta is 0");
    int64_t span = 0;
    if (__builtin_sub_overflow(l, s, &span) || (d == -1 && span == std::numeric_limits<int64_t>::min())) {
      ctx.fail_invalid("limit - start overflows int64");
    }
    const int64_t n = std::max<int64_t>((span / d) + ((span % d != 0 && ((span < 0) == (d < 0))) ? 1 : 0), 0);
    checked_tensor_size(dtype, {n}, ctx.node_subject());
    out = NDArray::empty(dtype, {n});
    // s + i * d stays between start and limit, so it cannot overflow; int64 is written exactly
    // (a double holds only 53 bits), narrower types fit a double exactly.
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == ir::DType::kI64) out.mutable_data<int64_t>()[i] = s + i * d;
      else out.set_from_double(i, static_cast<double>(s + i * d));
    }
  }
  return {ctx.constant(std::move(out), ctx.node().outputs.at(0))};
}

// ScatterND(data, indices, updates) with constant indices [..., k]. Each position p of data's first k
// dimensions gets the list of update rows u that write it, in order. reduction "none" keeps the last:
// out = where(mask, gather(updates as [U, data.shape[k:]...], rows, axis 0), data) with rows[p] = the
// last u (0 where none) and mask[p] = p is written. add/mul/max/min apply one such round per
// occurrence (round t uses each position's t-th writer): acc = where(mask_t, op(acc, gather_t), acc),
// so duplicate indices accumulate in order. data and updates may be computed at run time; when they
// are constants the result folds.
std::vector<Value> convert_scatter_nd(ImportContext& ctx) {
  const std::string reduction = ctx.attr_string("reduction", "none");
  static const std::map<std::string, std::string> kReduceOps = {
      {"add", "add"}, {"mul", "mul"}, {"max", "max"}, {"min", "min"}};
  if (reduction != "none" && !kReduceOps.count(reduction)) {
    ctx.fail_attr("reduction", "is '" + reduction + "'; expected none, add, mul, max or min");
  }
  const Value data = ctx.input(0), updates = ctx.input(2);
  const NDArray indices = ctx.constant_input(1, "indices");
  const Shape& ds = data.type().shape;
  const Shape& is = indices.shape();
  const int64_t r = static_cast<int64_t>(ds.size());
  if (is.empty()) ctx.fail_invalid("indices is a scalar; it needs rank >= 1");
  const int64_t k = is.back();
  if (k < 1 || k > r) ctx.fail_invalid("indices' last dimension is " + std::to_string(k) + "; expected 1.." + std::to_string(r));
  Shape prefix(ds.begin(), ds.begin() + k);
  Shape expected(is.begin(), is.end() - 1);
  for (int64_t j = k; j < r; ++j) expected.push_back(ds[j]);
  if (updates.type().shape != expected) ctx.fail_invalid("updates' shape does not match indices.shape[:-1] + data.shape[k:]");
  if (updates.type().dtype != data.type().dtype) ctx.fail_invalid("updates and data differ in element type");
  int64_t n_updates = 1, n_prefix = 1;
  for (size_t j = 0; j + 1 < is.size(); ++j) n_updates *= is[j];
  for (int64_t d : prefix) n_prefix *= d;
  if (n_updates == 0) return {data};
  std::vector<std::vector<int64_t>> writers(static_cast<size_t>(n_prefix));
  size_t rounds = 1;
  for (int64_t u = 0; u < n_updates; ++u) {
    int64_t flat = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t idx = checked_integer_element(indices, u * k + j, ctx.node_subject() + ": indices");
      if (idx < 0) idx += ds[j];
      if (idx < 0 || idx >= ds[j]) ctx.fail_invalid("index " + std::to_string(idx) + " is out of range for dimension " + std::to_string(j));
      flat = flat * ds[j] + idx;
    }
    auto& w = writers[static_cast<size_t>(flat)];
    if (reduction == "none") w.assign(1, u);
    else w.push_back(u);
    rounds = std::max(rounds, w.size());
  }
  Shape rows_shape = {n_updates};
  for (int64_t j = k; j < r; ++j) rows_shape.push_back(ds[j]);
  const Value rows = reshape_to(ctx, updates, rows_shape);
  Shape mask_shape = prefix;
  mask_shape.resize(static_cast<size_t>(r), 1);
  Value acc = data;
  for (size_t t = 0; t < rounds; ++t) {
    NDArray rows_index = NDArray::empty(DType::kI64, prefix);
    NDArray mask = NDArray::empty(DType::kBool, mask_shape);
    bool covers_all = true;
    for (int64_t p = 0; p < n_prefix; ++p) {
      const auto& w = writers[static_cast<size_t>(p)];
      const bool written = t < w.size();
      rows_index.set_from_double(p, written ? static_cast<double>(w[t]) : 0.0);
      mask.set_from_double(p, written ? 1.0 : 0.0);
      covers_all = covers_all && written;
    }
    Value picked = ctx.call1("gather", {rows, ctx.constant(std::move(rows_index), "scatter_rows")},
                             Attrs().set("axis", int64_t{0}));
    if (reduction != "none") picked = ctx.call1(kReduceOps.at(reduction), {acc, picked});
    acc = covers_all ? picked : ctx.call1("where", {ctx.constant(std::move(mask), "scatter_mask"), picked, acc});
  }
  return {acc};
}

}  // namespace

void add_tensor_converters(std::map<std::string, Converter>& table) {
  table["Constant"] = convert_constant;
  table["Shape"] = convert_shape;
  table["ConstantOfShape"] = convert_constant_of_shape;
  table["Identity"] = [](ImportContext& ctx) { return std::vector<Value>{ctx.input(0)}; };
  table["Dropout"] = convert_dropout;
  table["Reshape"] = convert_reshape;
  table["Flatten"] = convert_flatten;
  table["Squeeze"] = convert_squeeze;
  table["Unsqueeze"] = convert_unsqueeze;
  table["Transpose"] = convert_transpose;
  table["Concat"] = convert_concat;
  table["Split"] = convert_split;
  table["Slice"] = convert_slice;
  table["Gather"] = convert_gather;
  table["Expand"] = convert_expand;
  table["Pad"] = convert_pad;
  table["Range"] = convert_range;
  table["ScatterND"] = convert_scatter_nd;
}

}  // namespace kiln::frontend::onnx_import
