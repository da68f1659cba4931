// ONNX -> graph IR converters for indexing and data-movement operators beyond the basic tensor
// ones (onnx_ops_tensor.cc):
// - to their own graph ops: GatherElements, GatherND, ScatterElements and Scatter (its
//   deprecated alias) -> scatter_elements, ReverseSequence, CumSum, CumProd, TopK (k as attribute
//   before opset 10, as a constant input from 10);
// - decomposed into existing ops, which fuse into the neighbouring injective kernels: Tile
//   (reshape -> expand -> reshape), DepthToSpace / SpaceToDepth (reshape -> transpose ->
//   reshape), Trilu (where with a constant mask), EyeLike (a constant), OneHot (equal against a
//   constant iota, where), CenterCropPad (strided_slice + pad), AffineGrid (a constant grid of
//   locations @ theta^T);
// - GridSample -> grid_sample (mode names of opset 16 mapped to those of 20), Col2Im -> col2im
//   (image_shape and block_shape constant).
// Ops whose output size depends on the data: onnx_ops_data_dependent.cc.
#include <algorithm>
#include <numeric>

#include "kiln/support/error.h"
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

NDArray i64_array(const Shape& shape, const std::vector<int64_t>& v) {
  NDArray a = NDArray::empty(DType::kI64, shape);
  std::copy(v.begin(), v.end(), a.mutable_data<int64_t>().begin());
  return a;
}

std::vector<Value> convert_tile(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape& in = x.type().shape;
  const std::vector<int64_t> repeats = ctx.constant_ints(1, "repeats");
  if (repeats.size() != in.size()) {
    ctx.fail_invalid("repeats has " + std::to_string(repeats.size()) + " values for an input of rank " + std::to_string(in.size()));
  }
  Shape interleaved, expanded, out;
  bool identity = true;
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0) ctx.fail_invalid("repeats[" + std::to_string(d) + "] is negative");
    identity = identity && repeats[d] == 1;
    interleaved.insert(interleaved.end(), {1, in[d]});
    expanded.insert(expanded.end(), {repeats[d], in[d]});
    out.push_back(repeats[d] * in[d]);
  }
  if (identity) return {x};
  Value e = ctx.call1("expand", {reshape_to(ctx, x, interleaved)}, Attrs().set("shape", expanded));
  return {reshape_to(ctx, e, out)};
}

// x [N, C, H, W] -> reshape(split) -> transpose(perm) -> reshape(out).
Value shuffle(ImportContext& ctx, Value x, const Shape& split, const std::vector<int64_t>& perm, const Shape& out) {
  Value t = ctx.call1("transpose", {reshape_to(ctx, x, split)}, Attrs().set("perm", perm));
  return reshape_to(ctx, t, out);
}

std::vector<Value> convert_depth_to_space(ImportContext& ctx) {
  Value x = ctx.input(0);
  if (x.type().rank() != 4) ctx.fail_invalid("input must be 4-D [N, C, H, W]");
  const int64_t bs = ctx.attr_int("blocksize", 0);
  const Shape& s = x.type().shape;
  if (bs < 1 || s[1] % (bs * bs) != 0) ctx.fail_attr("blocksize", "= " + std::to_string(bs) + " does not divide the " + std::to_string(s[1]) + " channels into blocksize^2 groups");
  const int64_t c = s[1] / (bs * bs);
  const std::string mode = ctx.attr_string("mode", "DCR");
  const Shape out = {s[0], c, s[2] * bs, s[3] * bs};
  if (mode == "DCR") return {shuffle(ctx, x, {s[0], bs, bs, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2}, out)};
  if (mode == "CRD") return {shuffle(ctx, x, {s[0], c, bs, bs, s[2], s[3]}, {0, 1, 4, 2, 5, 3}, out)};
  ctx.fail_attr("mode", "is \"" + mode + "\"", "expected DCR or CRD");
}

std::vector<Value> convert_space_to_depth(ImportContext& ctx) {
  Value x = ctx.input(0);
  if (x.type().rank() != 4) ctx.fail_invalid("input must be 4-D [N, C, H, W]");
  const int64_t bs = ctx.attr_int("blocksize", 0);
  const Shape& s = x.type().shape;
  if (bs < 1 || s[2] % bs != 0 || s[3] % bs != 0) ctx.fail_attr("blocksize", "= " + std::to_string(bs) + " does not divide the spatial size");
  return {shuffle(ctx, x, {s[0], s[1], s[2] / bs, bs, s[3] / bs, bs}, {0, 3, 5, 1, 2, 4},
                  {s[0], s[1] * bs * bs, s[2] / bs, s[3] / bs})};
}

std::vector<Value> convert_trilu(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape& s = x.type().shape;
  if (s.size() < 2) ctx.fail_invalid("input must have rank >= 2");
  int64_t k = 0;
  if (ctx.has_input(1) && ctx.input(1).node->kind() != ir::NodeKind::kConstant) {
    // A run-time k (the output's shape does not depend on it): keep where (j - i) >= k (upper) or
    // <= k (lower), with j - i a constant [n, m] int64 table and k broadcast against it.
    const Value kv = ctx.input(1);
    if (kv.type().numel() != 1 || kv.type().dtype != DType::kI64) ctx.fail_invalid("k must be one int64 value");
    const int64_t n = s[s.size() - 2], m = s.back();
    NDArray diag = NDArray::empty(DType::kI64, {n, m});
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) diag.mutable_data<int64_t>()[i * m + j] = j - i;
    }
    const Value k_scalar = ctx.call1("reshape", {kv}, Attrs().set("shape", std::vector<int64_t>{}));
    const bool upper = ctx.attr_int("upper", 1) != 0;
    const Value keep = ctx.call1(upper ? "greater_equal" : "less_equal", {ctx.constant(std::move(diag), "trilu_diag"), k_scalar});
    return {ctx.call1("where", {keep, x, ctx.constant(NDArray::scalar(x.type().dtype, 0.0), "trilu_zero")})};
  }
  if (ctx.has_input(1)) {
    const auto ks = ctx.constant_ints(1, "k");
    if (ks.size() != 1) ctx.fail_invalid("k must hold one value");
    k = ks[0];
  }
  const bool upper = ctx.attr_int("upper", 1) != 0;
  const int64_t n = s[s.size() - 2], m = s.back();
  NDArray mask = NDArray::empty(DType::kBool, {n, m});
  bool all = true;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      const bool keep = upper ? j - i >= k : j - i <= k;
      mask.mutable_data<uint8_t>()[i * m + j] = keep ? 1 : 0;
      all = all && keep;
    }
  }
  if (all) return {x};
  return {ctx.call1("where", {ctx.constant(std::move(mask), "trilu_mask"), x,
                              ctx.constant(NDArray::scalar(x.type().dtype, 0.0), "trilu_zero")})};
}

std::vector<Value> convert_eye_like(ImportContext& ctx) {
  const ir::TensorType t = ctx.input(0).type();
  if (t.rank() != 2) ctx.fail_invalid("input must be 2-D");
  DType dtype = t.dtype;
  if (ctx.has_attr("dtype") && !onnx_dtype(ctx.attr_int("dtype", 1), &dtype)) {
    ctx.fail_attr("dtype", "names an element type Kiln does not support");
  }
  const int64_t k = ctx.attr_int("k", 0);
  NDArray eye = NDArray::empty(dtype, t.shape);
  for (int64_t i = 0; i < t.shape[0]; ++i) {
    for (int64_t j = 0; j < t.shape[1]; ++j) eye.set_from_double(i * t.shape[1] + j, j - i == k ? 1.0 : 0.0);
  }
  return {ctx.constant(std::move(eye), ctx.node().outputs.at(0))};
}

// OneHot: out = where(idx == iota or idx == iota - depth, on, off), the iota along `axis`.
std::vector<Value> convert_one_hot(ImportContext& ctx) {
  Value indices = ctx.input(0);
  const auto depths = ctx.constant_floats(1, "depth");
  if (depths.size() != 1 || depths[0] < 1) ctx.fail_invalid("depth must be one positive value");
  const int64_t depth = static_cast<int64_t>(depths[0]);
  Value values = ctx.input(2);
  if (values.type().numel() != 2) ctx.fail_invalid("values must hold two elements [off, on]");
  const int64_t rank = indices.type().rank() + 1;
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), rank, "axis");
  if (indices.type().dtype != DType::kI64) indices = ctx.call1("cast", {indices}, Attrs().set("dtype", DType::kI64));
  Shape unsq = indices.type().shape;
  unsq.insert(unsq.begin() + axis, 1);
  indices = reshape_to(ctx, indices, unsq);
  Shape iota_shape(static_cast<size_t>(rank), 1);
  iota_shape[static_cast<size_t>(axis)] = depth;
  std::vector<int64_t> iota(static_cast<size_t>(depth)), wrapped(static_cast<size_t>(depth));
  std::iota(iota.begin(), iota.end(), int64_t{0});
  for (int64_t j = 0; j < depth; ++j) wrapped[j] = j - depth;
  values = reshape_to(ctx, values, {2});
  auto pick = [&](int64_t i) {
    return reshape_to(ctx, ctx.call1("gather", {values, ctx.constant(i64_array({1}, {i}), "onehot_pick")}, Attrs().set("axis", int64_t{0})), {});
  };
  const Value off = pick(0), on = pick(1);
  Value hit = ctx.call1("equal", {indices, ctx.constant(i64_array(iota_shape, iota), "onehot_iota")});
  Value hit_neg = ctx.call1("equal", {indices, ctx.constant(i64_array(iota_shape, wrapped), "onehot_iota_neg")});
  return {ctx.call1("where", {hit, on, ctx.call1("where", {hit_neg, on, off})})};
}

std::vector<Value> convert_gather_elements(ImportContext& ctx) {
  Value data = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), data.type().rank(), "axis");
  return {ctx.call1("gather_elements", {data, ctx.input(1)}, Attrs().set("axis", axis))};
}

std::vector<Value> convert_gather_nd(ImportContext& ctx) {
  return {ctx.call1("gather_nd", {ctx.input(0), ctx.input(1)}, Attrs().set("batch_dims", ctx.attr_int("batch_dims", 0)))};
}

std::vector<Value> convert_scatter_elements(ImportContext& ctx) {
  Value data = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), data.type().rank(), "axis");
  const std::string reduction = ctx.attr_string("reduction", "none");
  return {ctx.call1("scatter_elements", {data, ctx.input(1), ctx.input(2)},
                    Attrs().set("axis", axis).set("reduction", reduction))};
}

std::vector<Value> convert_reverse_sequence(ImportContext& ctx) {
  return {ctx.call1("reverse_sequence", {ctx.input(0), ctx.input(1)},
                    Attrs().set("batch_axis", ctx.attr_int("batch_axis", 1)).set("time_axis", ctx.attr_int("time_axis", 0)))};
}

Converter scan(const std::string& op) {
  return [op](ImportContext& ctx) {
    Value x = ctx.input(0);
    const auto axes = ctx.constant_ints(1, "axis");
    if (axes.size() != 1) ctx.fail_invalid("axis must hold one value");
    const int64_t axis = ctx.normalize_axis(axes[0], x.type().rank(), "axis");
    return std::vector<Value>{ctx.call1(op, {x}, Attrs()
                                                     .set("axis", axis)
                                                     .set("exclusive", ctx.attr_int("exclusive", 0))
                                                     .set("reverse", ctx.attr_int("reverse", 0)))};
  };
}

std::vector<Value> convert_topk(ImportContext& ctx) {
  Value x = ctx.input(0);
  int64_t k;
  if (ctx.opset() < 10) {
    if (!ctx.has_attr("k")) ctx.fail_attr("k", "is required before opset 10");
    k = ctx.attr_int("k", 0);
  } else {
    const auto ks = ctx.constant_ints(1, "K");
    if (ks.size() != 1) ctx.fail_invalid("K must hold one value");
    k = ks[0];
  }
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), x.type().rank(), "axis");
  if (k < 0 || k > x.type().shape[axis]) {
    ctx.fail_invalid("K = " + std::to_string(k) + " is outside [0, " + std::to_string(x.type().shape[axis]) + "]");
  }
  return ctx.call("topk", {x}, Attrs().set("axis", axis).set("k", k).set("largest", ctx.attr_int("largest", 1)).set("sorted", ctx.attr_int("sorted", 1)));
}

std::vector<Value> convert_center_crop_pad(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape& in = x.type().shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const std::vector<int64_t> shape = ctx.constant_ints(1, "shape");
  std::vector<int64_t> axes = ctx.attr_ints("axes", {});
  if (axes.empty()) {
    axes.resize(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), int64_t{0});
  }
  if (axes.size() != shape.size()) ctx.fail_invalid("shape has " + std::to_string(shape.size()) + " values for " + std::to_string(axes.size()) + " axes");
  std::vector<int64_t> begins, ends, slice_axes, pads(static_cast<size_t>(2 * rank), 0);
  bool pad = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = ctx.normalize_axis(axes[i], rank, "axes entry");
    const int64_t dim = in[a], target = shape[i];
    if (target < 0) ctx.fail_invalid("shape has a negative value");
    if (target < dim) {
      const int64_t start = (dim - target) / 2;
      begins.push_back(start);
      ends.push_back(start + target);
      slice_axes.push_back(a);
    } else if (target > dim) {
      pads[a] = (target - dim) / 2;
      pads[a + rank] = target - dim - pads[a];
      pad = true;
    }
  }
  if (!begins.empty()) x = ctx.call1("strided_slice", {x}, Attrs().set("begins", begins).set("ends", ends).set("axes", slice_axes));
  if (pad) x = ctx.call1("pad", {x}, Attrs().set("pads", pads).set("mode", std::string("constant")).set("value", 0.0));
  return {x};
}

std::vector<Value> convert_col2im(ImportContext& ctx) {
  Attrs attrs;
  attrs.set("image_shape", ctx.constant_ints(1, "image_shape")).set("block_shape", ctx.constant_ints(2, "block_shape"));
  for (const char* name : {"dilations", "pads", "strides"}) attrs.set(name, ctx.attr_ints(name, {}));
  return {ctx.call1("col2im", {ctx.input(0)}, attrs)};
}

std::vector<Value> convert_grid_sample(ImportContext& ctx) {
  std::string mode = ctx.attr_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  return {ctx.call1("grid_sample", {ctx.input(0), ctx.input(1)},
                    Attrs()
                        .set("mode", mode)
                        .set("padding_mode", ctx.attr_string("padding_mode", "zeros"))
                        .set("align_corners", ctx.attr_int("align_corners", 0)))};
}

// AffineGrid: grid = [x, y(, z), 1] of every output location (a constant) @ theta^T, one matmul.
std::vector<Value> convert_affine_grid(ImportContext& ctx) {
  Value theta = ctx.input(0);
  const std::vector<int64_t> size = ctx.constant_ints(1, "size");
  const bool align = ctx.attr_int("align_corners", 0) != 0;
  const int64_t s = static_cast<int64_t>(size.size()) - 2;
  if (s != 2 && s != 3) ctx.fail_invalid("size must be [N, C, H, W] or [N, C, D, H, W]");
  if (theta.type().shape != Shape{size[0], s, s + 1}) {
    ctx.fail_invalid("theta must be [N, " + std::to_string(s) + ", " + std::to_string(s + 1) + "] for this size");
  }
  // Normalized coordinates along one axis of length n.
  auto coords = [&](int64_t n) {
    std::vector<double> c(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double v = n == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
      if (!align) v *= static_cast<double>(n - 1) / static_cast<double>(n);
      c[static_cast<size_t>(i)] = v;
    }
    return c;
  };
  Shape spatial(size.begin() + 2, size.end());
  const int64_t points = ir::shape_numel(spatial);
  NDArray base = NDArray::empty(theta.type().dtype, {points, s + 1});
  std::vector<std::vector<double>> axes;
  for (int64_t k = 0; k < s; ++k) axes.push_back(coords(spatial[k]));
  for (int64_t p = 0; p < points; ++p) {
    int64_t rest = p;
    std::vector<double> at(static_cast<size_t>(s));
    for (int64_t k = s - 1; k >= 0; --k) {
      at[k] = axes[k][rest % spatial[k]];
      rest /= spatial[k];
    }
    // Row: x (last axis) first, then y, (z), then 1.
    for (int64_t k = 0; k < s; ++k) base.set_from_double(p * (s + 1) + k, at[s - 1 - k]);
    base.set_from_double(p * (s + 1) + s, 1.0);
  }
  Value theta_t = ctx.call1("transpose", {theta}, Attrs().set("perm", std::vector<int64_t>{0, 2, 1}));
  Value grid = ctx.call1("matmul", {ctx.constant(std::move(base), "affine_grid_base"), theta_t});
  Shape out = {size[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(s);
  return {reshape_to(ctx, grid, out)};
}

}  // namespace

void add_tensorops_converters(std::map<std::string, Converter>& table) {
  table["Tile"] = convert_tile;
  table["DepthToSpace"] = convert_depth_to_space;
  table["SpaceToDepth"] = convert_space_to_depth;
  table["Trilu"] = convert_trilu;
  table["EyeLike"] = convert_eye_like;
  table["OneHot"] = convert_one_hot;
  table["GatherElements"] = convert_gather_elements;
  table["GatherND"] = convert_gather_nd;
  table["ScatterElements"] = convert_scatter_elements;
  table["Scatter"] = convert_scatter_elements;
  table["ReverseSequence"] = convert_reverse_sequence;
  table["CumSum"] = scan("cumsum");
  table["CumProd"] = scan("cumprod");
  table["TopK"] = convert_topk;
  table["CenterCropPad"] = convert_center_crop_pad;
  table["GridSample"] = convert_grid_sample;
  table["Col2Im"] = convert_col2im;
  table["AffineGrid"] = convert_affine_grid;
  add_data_dependent_converters(table);
}

}  // namespace kiln::frontend::onnx_import
