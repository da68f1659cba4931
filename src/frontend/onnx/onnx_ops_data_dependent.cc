// ONNX operators whose output size depends on input values: Kiln compiles static shapes, so each
// needs the deciding inputs constant (initializers, Constant nodes, folded subgraphs, or bound
// with constant_inputs / `kiln compile --bind`), and otherwise fails with an error that names the
// input and says that the output size depends on its values.
// - Compress: only the condition decides the size; data may be computed at run time (a gather
//   with the constant indices of the true entries).
// - NonZero, Unique (sorted or first-occurrence order, with or without axis, all four outputs)
//   and NonMaxSuppression (corner or center boxes, IoU and score thresholds, per-class limit):
//   folded to constants, following ONNX's reference semantics.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
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

NDArray i64_array(const Shape& shape, const std::vector<int64_t>& v) {
  NDArray a = NDArray::empty(DType::kI64, shape);
  std::copy(v.begin(), v.end(), a.mutable_data<int64_t>().begin());
  return a;
}

// An input's constant data, described as one whose value decides the output's size.
NDArray data_dependent_input(ImportContext& ctx, size_t i, const std::string& what) {
  return ctx.constant_input(i, what + "; the output size depends on its values, so Kiln needs it constant");
}

std::vector<Value> convert_compress(ImportContext& ctx) {
  Value x = ctx.input(0);
  const NDArray cond = data_dependent_input(ctx, 1, "condition");
  int64_t axis;
  if (ctx.has_attr("axis")) {
    axis = ctx.normalize_axis(ctx.attr_int("axis", 0), x.type().rank(), "axis");
  } else {
    if (x.type().rank() != 1) x = ctx.call1("reshape", {x}, Attrs().set("shape", Shape{x.type().numel()}));
    axis = 0;
  }
  const int64_t dim = x.type().shape[axis];
  if (cond.numel() > dim) ctx.fail_invalid("condition has " + std::to_string(cond.numel()) + " values for an axis of " + std::to_string(dim));
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (cond.get_as_double(i) != 0) picked.push_back(i);
  }
  const Value idx = ctx.constant(i64_array({static_cast<int64_t>(picked.size())}, picked), "compress_indices");
  return {ctx.call1("gather", {x, idx}, Attrs().set("axis", axis))};
}

std::vector<Value> convert_non_zero(ImportContext& ctx) {
  const NDArray x = data_dependent_input(ctx, 0, "X");
  const Shape& s = x.shape();
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (x.get_as_double(i) != 0) flat.push_back(i);
  }
  const int64_t n = static_cast<int64_t>(flat.size());
  NDArray out = NDArray::empty(DType::kI64, {static_cast<int64_t>(s.size()), n});
  for (int64_t j = 0; j < n; ++j) {
    int64_t rest = flat[j];
    for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
      out.mutable_data<int64_t>()[d * n + j] = rest % s[d];
      rest /= s[d];
    }
  }
  return {ctx.constant(std::move(out), ctx.node().outputs.at(0))};
}

std::vector<Value> convert_unique(ImportContext& ctx) {
  NDArray x = data_dependent_input(ctx, 0, "X");
  const bool sorted = ctx.attr_int("sorted", 1) != 0;
  int64_t axis = 0;
  if (ctx.has_attr("axis")) {
    axis = ctx.normalize_axis(ctx.attr_int("axis", 0), static_cast<int64_t>(x.shape().size()), "axis");
  } else {
    x = x.reshaped({x.numel()});
  }
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d < axis) outer *= s[d];
    if (d > axis) inner *= s[d];
  }
  const int64_t n = s[axis];
  // Slice i: the elements x[o, i, r] for every outer o and inner r, as a key.
  std::vector<std::vector<double>> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t r = 0; r < inner; ++r) keys[i].push_back(x.get_as_double((o * n + i) * inner + r));
    }
  }
  std::vector<int64_t> first;                 // first occurrence of each unique slice, in order
  std::map<std::vector<double>, int64_t> seen;  // key -> position in `first`
  std::vector<int64_t> group(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto [it, fresh] = seen.emplace(keys[i], static_cast<int64_t>(first.size()));
    if (fresh) first.push_back(i);
    group[i] = it->second;
  }
  std::vector<int64_t> order(first.size());  // output position -> group
  std::iota(order.begin(), order.end(), int64_t{0});
  if (sorted) std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[first[a]] < keys[first[b]]; });
  std::vector<int64_t> position(first.size());
  for (size_t p = 0; p < order.size(); ++p) position[order[p]] = static_cast<int64_t>(p);
  const int64_t u = static_cast<int64_t>(first.size());
  Shape ys = s;
  ys[axis] = u;
  NDArray y = NDArray::empty(x.dtype(), ys);
  const size_t es = ir::dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw_data());
  auto* dst = static_cast<uint8_t*>(y.mutable_raw_data());
  std::vector<int64_t> indices(static_cast<size_t>(u)), inverse(static_cast<size_t>(n)), counts(static_cast<size_t>(u), 0);
  for (int64_t p = 0; p < u; ++p) {
    const int64_t i = first[order[p]];
    indices[p] = i;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + static_cast<size_t>((o * u + p) * inner) * es, src + static_cast<size_t>((o * n + i) * inner) * es,
                  static_cast<size_t>(inner) * es);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    inverse[i] = position[group[i]];
    ++counts[inverse[i]];
  }
  const auto& outs = ctx.node().outputs;
  auto name = [&](size_t k, const char* fallback) { return k < outs.size() && !outs[k].empty() ? outs[k] : std::string(fallback); };
  return {ctx.constant(std::move(y), name(0, "unique_y")), ctx.constant(i64_array({u}, indices), name(1, "unique_indices")),
          ctx.constant(i64_array({n}, inverse), name(2, "unique_inverse")), ctx.constant(i64_array({u}, counts), name(3, "unique_counts"))};
}

// NonMaxSuppression per (batch, class): boxes above score_threshold by descending score (ties:
// lower index first), each kept unless its IoU with a kept box exceeds iou_threshold, at most
// max_output_boxes_per_class; rows [batch, class, box].
std::vector<Value> convert_non_max_suppression(ImportContext& ctx) {
  const NDArray boxes = data_dependent_input(ctx, 0, "boxes"), scores = data_dependent_input(ctx, 1, "scores");
  int64_t max_out = 0;
  double iou_threshold = 0, score_threshold = -INFINITY;
  if (ctx.has_input(2)) max_out = static_cast<int64_t>(data_dependent_input(ctx, 2, "max_output_boxes_per_class").get_as_double(0));
  if (ctx.has_input(3)) iou_threshold = data_dependent_input(ctx, 3, "iou_threshold").get_as_double(0);
  if (ctx.has_input(4)) score_threshold = data_dependent_input(ctx, 4, "score_threshold").get_as_double(0);
  const bool center = ctx.attr_int("center_point_box", 0) != 0;
  const Shape& bs = boxes.shape();
  const Shape& ss = scores.shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
    ctx.fail_invalid("boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]");
  }
  // Corners (y1, x1, y2, x2), ordered.
  auto corners = [&](int64_t b, int64_t i) {
    double v[4];
    for (int k = 0; k < 4; ++k) v[k] = boxes.get_as_double((b * bs[1] + i) * 4 + k);
    std::array<double, 4> c;
    if (center) {
      c = {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
    } else {
      c = {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
    }
    return c;
  };
  auto iou = [&](const std::array<double, 4>& a, const std::array<double, 4>& b) {
    const double h = std::max(0.0, std::min(a[2], b[2]) - std::max(a[0], b[0]));
    const double w = std::max(0.0, std::min(a[3], b[3]) - std::max(a[1], b[1]));
    const double inter = h * w;
    const double uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return uni <= 0 ? 0.0 : inter / uni;
  };
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < bs[0]; ++b) {
    for (int64_t c = 0; c < ss[1]; ++c) {
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < bs[1]; ++i) {
        if (scores.get_as_double((b * ss[1] + c) * bs[1] + i) > score_threshold) cand.push_back(i);
      }
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) {
        return scores.get_as_double((b * ss[1] + c) * bs[1] + p) > scores.get_as_double((b * ss[1] + c) * bs[1] + q);
      });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool keep = true;
        for (int64_t k : kept) keep = keep && !(iou(corners(b, i), corners(b, k)) > iou_threshold);
        if (keep) kept.push_back(i);
      }
      for (int64_t k : kept) rows.insert(rows.end(), {b, c, k});
    }
  }
  return {ctx.constant(i64_array({static_cast<int64_t>(rows.size() / 3), 3}, rows), ctx.node().outputs.at(0))};
}

}  // namespace

void add_data_dependent_converters(std::map<std::string, Converter>& table) {
  table["Compress"] = convert_compress;
  table["NonZero"] = convert_non_zero;
  table["Unique"] = convert_unique;
  table["NonMaxSuppression"] = convert_non_max_suppression;
}

}  // namespace kiln::frontend::onnx_import
