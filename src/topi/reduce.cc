// Reductions and the normalizations built from them: reduce_sum/mean/max/min/prod, global pooling,
// softmax, log_softmax, layer_norm, rms_norm. Each reduction is its own compute stage (a Reduce is the whole
// body of a compute); the elementwise steps around them are computes that the reduction schedule
// inlines. An empty reduction (a reduced extent of 0) is one compute filling the identity. Sums
// accumulate in f32 for f32/f16/bf16 (the reference uses double: the difference grows with the
// reduction length, see tests/topi for the tolerances), i64 for integer means.
#include <algorithm>
#include <functional>
#include <limits>

#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

enum class Kind { kSum, kMean, kMax, kMin, kProd };

// "r<d>": the reduction variable of input axis d. (Built with append: GCC 12 warns a false
// -Wrestrict on `"r" + std::to_string(d)` once inlined.)
std::string reduce_var_name(size_t d) { return std::string("r").append(std::to_string(d)); }

// A reduction over an empty set (a reduced extent is 0): the identity everywhere, as the reference
// gives it: 0 (sum), nan (float mean; 0 for integers), the lowest value (max: -inf for floats).
ComputeResult empty_reduction(const std::string& op, DType dt, Kind kind, const ir::Shape& out_shape) {
  double identity = 0.0;
  if (kind == Kind::kMean && ir::is_float(dt)) identity = std::numeric_limits<double>::quiet_NaN();
  if (kind == Kind::kMax && ir::is_float(dt)) identity = -std::numeric_limits<double>::infinity();
  if (kind == Kind::kMin && ir::is_float(dt)) identity = std::numeric_limits<double>::infinity();
  if (kind == Kind::kProd) identity = 1.0;
  Expr value = constant(dt, identity);
  if (kind == Kind::kMax && !ir::is_float(dt)) value = tir::type_min(tir::Type(dt));
  if (kind == Kind::kMin && !ir::is_float(dt)) value = tir::type_max(tir::Type(dt));
  return injective_result(tir::compute(
      out_shape, [&](const std::vector<Var>&) { return value; }, op));
}

Tensor lane_reduce(ComputeResult& r, const ir::Shape& outer, int64_t n, int64_t lanes, DType ct, Kind kind,
                   const std::function<Expr(const std::vector<Expr>&, const Expr&)>& f, const std::string& name);

// The reduction's output: `red` (the kept axes only) read back with the reduced axes kept as 1
// (keepdims) or dropped, a mean divided by the count, cast to the input's type.
Tensor reduction_output(const std::string& op, const Tensor& red, const std::vector<bool>& reduced, Kind kind, DType dt,
                        int64_t count, const ir::Shape& out_shape) {
  return tir::compute(
      out_shape,
      [&](const std::vector<Var>& i) {
        // Output index -> reduction-stage index: drop the reduced axes (kept as 1 or absent).
        std::vector<Expr> idx;
        if (out_shape.size() == reduced.size()) {
          for (size_t d = 0; d < reduced.size(); ++d) {
            if (!reduced[d]) idx.push_back(i[d]);
          }
        } else {
          idx = as_exprs(i);
        }
        Expr v = red(idx);
        if (kind == Kind::kMean) {
          v = ir::is_float(dt) ? v * (1.0 / static_cast<double>(count))
                               : tir::select(v < Expr(int64_t{0}), Expr(int64_t{0}) - tir::floordiv(Expr(int64_t{0}) - v, Expr(count)),
                                             tir::floordiv(v, Expr(count)));
        }
        return cast_to(dt, v);
      },
      op);
}

// Reduces x over `reduced` axes; out_shape keeps them as 1 (keepdims) or drops them. A float
// reduction over the last axis alone, at least two vectors long and with a kept axis, runs as a
// lane reduction in rows (lane_reduce, schedule_rows.cc): vector partial results per row instead
// of one scalar chain per output element (a ReduceMean over 367 columns ran at one add per FP
// latency, 4x ONNX Runtime's time). Everything else is one reduction stage over all reduced axes.
ComputeResult reduce_axes(const std::string& op, const Tensor& x, const std::vector<bool>& reduced, Kind kind,
                          const ir::Shape& out_shape, int64_t lanes) {
  const DType dt = x.dtype();
  const DType acc = kind == Kind::kMean && !ir::is_float(dt) ? DType::kI64 : compute_dtype(dt);
  int64_t count = 1;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) count *= x.shape()[d];
  }
  if (count == 0) return empty_reduction(op, dt, kind, out_shape);
  ComputeResult r;
  r.schedule = ScheduleKind::kReduction;
  const size_t rank = reduced.size();
  const bool last_axis_only =
      rank >= 2 && reduced[rank - 1] && std::count(reduced.begin(), reduced.end(), true) == 1;
  if (last_axis_only && ir::is_float(acc) && lanes > 1 && x.shape().back() >= 2 * lanes) {
    const ir::Shape outer(x.shape().begin(), x.shape().end() - 1);
    const Tensor total = lane_reduce(
        r, outer, x.shape().back(), lanes, acc, kind,
        [&](const std::vector<Expr>& o, const Expr& j) {
          std::vector<Expr> idx = o;
          idx.push_back(j);
          return cast_to(acc, x(idx));
        },
        op + "_red");
    r.parts["anchor"] = total;
    r.outputs = {reduction_output(op, total, reduced, kind, dt, count, out_shape)};
    return r;
  }
  std::vector<tir::IterVar> raxes;
  ir::Shape kept;  // the data-parallel axes of the reduction stage
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) {
      raxes.push_back(tir::reduce_axis(x.shape()[d], reduce_var_name(d)));
    } else {
      kept.push_back(x.shape()[d]);
    }
  }
  Tensor red = tir::compute(
      kept,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx;
        size_t k = 0, q = 0;
        for (size_t d = 0; d < reduced.size(); ++d) idx.push_back(reduced[d] ? Expr(raxes[q++].var()) : Expr(i[k++]));
        const Expr v = cast_to(acc, x(idx));
        switch (kind) {
          case Kind::kMax: return tir::max_reduce(v, raxes);
          case Kind::kMin: return tir::min_reduce(v, raxes);
          case Kind::kProd: return tir::prod_reduce(v, raxes);
          default: return tir::sum(v, raxes);
        }
      },
      op + "_red");
  r.parts["anchor"] = red;
  r.outputs = {reduction_output(op, red, reduced, kind, dt, count, out_shape)};
  return r;
}

ComputeResult reduce_compute(const std::string& op, Kind kind, const std::vector<Tensor>& in, const ir::Attrs& attrs,
                             const std::vector<ir::TensorType>& out, const LayoutHints& hints) {
  const Tensor x = in[0];
  const auto& axes = attrs.get_ints("axes");
  std::vector<bool> reduced(x.shape().size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  return reduce_axes(op, x, reduced, kind, out[0].shape, hints.vector_lanes_f32);
}

ComputeResult global_pool(const std::string& op, Kind kind, const std::vector<Tensor>& in,
                          const std::vector<ir::TensorType>& out, const LayoutHints& hints) {
  const Tensor x = in[0];
  std::vector<bool> reduced(x.shape().size(), true);
  reduced[0] = reduced[1] = false;
  return reduce_axes(op, x, reduced, kind, out[0].shape, hints.vector_lanes_f32);
}

KILN_REGISTER_COMPUTE(reduce_sum, "reduce_sum",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>& o,
                         const LayoutHints& h) { return reduce_compute("reduce_sum", Kind::kSum, in, a, o, h); });
KILN_REGISTER_COMPUTE(reduce_mean, "reduce_mean",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>& o,
                         const LayoutHints& h) { return reduce_compute("reduce_mean", Kind::kMean, in, a, o, h); });
KILN_REGISTER_COMPUTE(reduce_max, "reduce_max",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>& o,
                         const LayoutHints& h) { return reduce_compute("reduce_max", Kind::kMax, in, a, o, h); });
KILN_REGISTER_COMPUTE(reduce_min, "reduce_min",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>& o,
                         const LayoutHints& h) { return reduce_compute("reduce_min", Kind::kMin, in, a, o, h); });
KILN_REGISTER_COMPUTE(reduce_prod, "reduce_prod",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>& o,
                         const LayoutHints& h) { return reduce_compute("reduce_prod", Kind::kProd, in, a, o, h); });
KILN_REGISTER_COMPUTE(global_avg_pool, "global_avg_pool",
                      [](const std::vector<Tensor>& in, const ir::Attrs&, const std::vector<ir::TensorType>& o,
                         const LayoutHints& h) { return global_pool("global_avg_pool", Kind::kMean, in, o, h); });
KILN_REGISTER_COMPUTE(global_max_pool, "global_max_pool",
                      [](const std::vector<Tensor>& in, const ir::Attrs&, const std::vector<ir::TensorType>& o,
                         const LayoutHints& h) { return global_pool("global_max_pool", Kind::kMax, in, o, h); });

// The index into a stage that dropped `axis`.
std::vector<Expr> without_axis(const std::vector<Var>& i, size_t axis) {
  std::vector<Expr> idx;
  for (size_t d = 0; d < i.size(); ++d) {
    if (d != axis) idx.push_back(i[d]);
  }
  return idx;
}

// A reduction along the last axis of rows in two stages so that the long loop runs on vectors:
// partial[o.., l] = R_{ko} f(o.., ko * lanes + l) over the whole vectors (plus, in a stage
// "row.<name>_full" -> "_lanes", the n % lanes tail columns folded into lanes l < n % lanes),
// then total[o..] = R_l partial[o.., l]. Both are registered as per-row parts "row.<name>_lanes" and
// "row.<name>": the row schedule (schedule_rows.cc) computes them inside the loop over rows, `l`
// innermost and vectorized, so each row is one pass of vector adds/maxes into `lanes` partial
// results. `f` gets the row index and a column < n.
Tensor lane_reduce(ComputeResult& r, const ir::Shape& outer, int64_t n, int64_t lanes, DType ct, Kind kind,
                   const std::function<Expr(const std::vector<Expr>&, const Expr&)>& f, const std::string& name) {
  const double inf = std::numeric_limits<double>::infinity();
  const double identity = kind == Kind::kMax ? -inf : kind == Kind::kMin ? inf : kind == Kind::kProd ? 1.0 : 0.0;
  ir::Shape pshape = outer;
  pshape.push_back(lanes);
  // The whole vectors of the row (no bounds test in the loop), then, when lanes does not divide
  // n, the last n % lanes columns folded into the first lanes by a separate per-row stage: a
  // select on a clamped column in every iteration made 197-wide rows 2.7x slower than 192-wide.
  const int64_t full = n / lanes, rem = n % lanes;
  auto combine = [&](const Expr& a, const Expr& b) {
    switch (kind) {
      case Kind::kMax: return tir::max(a, b);
      case Kind::kMin: return tir::min(a, b);
      case Kind::kProd: return a * b;
      default: return a + b;
    }
  };
  auto reduce = [&](const Expr& v, const std::vector<tir::IterVar>& axes) {
    switch (kind) {
      case Kind::kMax: return tir::max_reduce(v, axes);
      case Kind::kMin: return tir::min_reduce(v, axes);
      case Kind::kProd: return tir::prod_reduce(v, axes);
      default: return tir::sum(v, axes);
    }
  };
  Tensor partial;
  if (full > 0) {
    tir::IterVar ko = tir::reduce_axis(full, "ko");
    partial = tir::compute(
        pshape,
        [&](const std::vector<Var>& i) {
          const std::vector<Expr> o(i.begin(), i.end() - 1);
          const Expr v = f(o, Expr(ko.var()) * lanes + i.back());
          return reduce(v, {ko});
        },
        name + (rem == 0 ? "_lanes" : "_full"));
  }
  if (rem != 0) {
    const Tensor whole = partial;
    partial = tir::compute(
        pshape,
        [&](const std::vector<Var>& i) {
          const std::vector<Expr> o(i.begin(), i.end() - 1);
          const Expr l = i.back();
          const Expr tail = tir::select(l < Expr(rem), f(o, Expr(full * lanes) + tir::min(l, Expr(rem - 1))),
                                        constant(ct, identity));
          return whole.defined() ? combine(whole(as_exprs(i)), tail) : tail;
        },
        name + "_lanes");
    if (whole.defined()) r.parts["row." + name + "_full"] = whole;
  }
  tir::IterVar l = tir::reduce_axis(lanes, "l");
  Tensor total = tir::compute(
      outer,
      [&](const std::vector<Var>& o) {
        std::vector<Expr> idx = as_exprs(o);
        idx.push_back(l.var());
        return reduce(partial(idx), {l});
      },
      name);
  r.parts["row." + name + "_lanes"] = partial;
  r.parts["row." + name] = total;
  return total;
}

// The row index (all but the last axis) of a full index, and the full index of row o, column j.
std::vector<Expr> row_of(const std::vector<Var>& i) { return std::vector<Expr>(i.begin(), i.end() - 1); }
std::vector<Expr> at(const std::vector<Expr>& o, const Expr& j) {
  std::vector<Expr> idx = o;
  idx.push_back(j);
  return idx;
}

// softmax over the last axis: max and sum of exp as lane reductions (vector loops), exp(x - max)
// materialized once per row (part "row.exp") and divided by the sum.
ComputeResult softmax_last_axis(const std::string& op, bool log_form, const Tensor& x, const LayoutHints& hints) {
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const ir::Shape outer(x.shape().begin(), x.shape().end() - 1);
  const int64_t n = x.shape().back(), lanes = hints.vector_lanes_f32;
  auto xv = [&](const std::vector<Expr>& o, const Expr& j) { return cast_to(ct, x(at(o, j))); };
  ComputeResult r;
  Tensor mx = lane_reduce(r, outer, n, lanes, ct, Kind::kMax, xv, op + "_max");
  Tensor e = tir::compute(
      x.shape(), [&](const std::vector<Var>& i) { return tir::exp(cast_to(ct, x(as_exprs(i))) - mx(row_of(i))); },
      op + "_exp");
  Tensor sm = lane_reduce(
      r, outer, n, lanes, ct, Kind::kSum, [&](const std::vector<Expr>& o, const Expr& j) { return e(at(o, j)); },
      op + "_sum");
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = sm;
  r.parts["row.exp"] = e;
  r.outputs = {tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const std::vector<Expr> o = row_of(i);
        return cast_to(dt, log_form ? cast_to(ct, x(as_exprs(i))) - mx(o) - tir::log(sm(o)) : e(as_exprs(i)) / sm(o));
      },
      op)};
  return r;
}

// softmax / log_softmax over `axis`: m = max x; s = sum exp(x - m); x - m - log s or exp(x - m) / s.
ComputeResult softmax_compute(const std::string& op, bool log_form, const std::vector<Tensor>& in,
                              const ir::Attrs& attrs, const LayoutHints& hints) {
  const Tensor x = in[0];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  if (axis + 1 == x.shape().size() && x.shape().back() > 0) return softmax_last_axis(op, log_form, x, hints);
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const int64_t n = x.shape()[axis];
  ir::Shape kept;
  for (size_t d = 0; d < x.shape().size(); ++d) {
    if (d != axis) kept.push_back(x.shape()[d]);
  }
  tir::IterVar k1 = tir::reduce_axis(n, "k");
  Tensor mx = tir::compute(
      kept,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        idx.insert(idx.begin() + static_cast<long>(axis), Expr(k1.var()));
        return tir::max_reduce(cast_to(ct, x(idx)), {k1});
      },
      op + "_max");
  tir::IterVar k2 = tir::reduce_axis(n, "k");
  Tensor sm = tir::compute(
      kept,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        idx.insert(idx.begin() + static_cast<long>(axis), Expr(k2.var()));
        return tir::sum(tir::exp(cast_to(ct, x(idx)) - mx(as_exprs(i))), {k2});
      },
      op + "_sum");
  ComputeResult r;
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = sm;
  r.outputs = {tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const Expr shifted = cast_to(ct, x(as_exprs(i))) - mx(without_axis(i, axis));
        const Expr s = sm(without_axis(i, axis));
        return cast_to(dt, log_form ? shifted - tir::log(s) : tir::exp(shifted) / s);
      },
      op)};
  return r;
}

KILN_REGISTER_COMPUTE(softmax, "softmax",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>&,
                         const LayoutHints& h) { return softmax_compute("softmax", false, in, a, h); });
KILN_REGISTER_COMPUTE(log_softmax, "log_softmax",
                      [](const std::vector<Tensor>& in, const ir::Attrs& a, const std::vector<ir::TensorType>&,
                         const LayoutHints& h) { return softmax_compute("log_softmax", true, in, a, h); });

// layer_norm over the last axis only: sum and centered sum of squares as lane reductions (vector
// loops over each row), 1 / sqrt(var + eps) once per row (part "row.rstd"), then one vector pass
// (x - mean) * rstd * scale + bias.
ComputeResult layer_norm_last_axis(const std::vector<Tensor>& in, double eps, const LayoutHints& hints) {
  const Tensor x = in[0], scale = in[1];
  const bool has_bias = in.size() > 2;
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const ir::Shape outer(x.shape().begin(), x.shape().end() - 1);
  const int64_t n = x.shape().back(), lanes = hints.vector_lanes_f32;
  const double inv = 1.0 / static_cast<double>(n);
  ComputeResult r;
  Tensor sum = lane_reduce(
      r, outer, n, lanes, ct, Kind::kSum,
      [&](const std::vector<Expr>& o, const Expr& j) { return cast_to(ct, x(at(o, j))); }, "layer_norm_sum");
  Tensor sq = lane_reduce(
      r, outer, n, lanes, ct, Kind::kSum,
      [&](const std::vector<Expr>& o, const Expr& j) {
        const Expr d = cast_to(ct, x(at(o, j))) - sum(o) * inv;
        return d * d;
      },
      "layer_norm_sqsum");
  Tensor rstd = tir::compute(
      outer,
      [&](const std::vector<Var>& o) { return Expr(constant(ct, 1.0)) / tir::sqrt(sq(as_exprs(o)) * inv + eps); },
      "layer_norm_rstd");
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = sq;
  r.parts["row.rstd"] = rstd;
  r.outputs = {tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const std::vector<Expr> o = row_of(i);
        const std::vector<Var> tail(i.end() - 1, i.end());
        Expr y = (cast_to(ct, x(as_exprs(i))) - sum(o) * inv) * rstd(o) *
                 cast_to(ct, scale(broadcast_indices(tail, scale.shape())));
        if (has_bias) y = y + cast_to(ct, in[2](broadcast_indices(tail, in[2].shape())));
        return cast_to(dt, y);
      },
      "layer_norm")};
  return r;
}

// layer_norm over the axes from `axis`: two-pass mean and biased variance, then
// (x - mean) / sqrt(var + eps) * scale + bias (scale/bias broadcast to x.shape[axis:]).
ComputeResult layer_norm_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                 const std::vector<ir::TensorType>&, const LayoutHints& hints) {
  const Tensor x = in[0], scale = in[1];
  const bool has_bias = in.size() > 2;
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  const double eps = attrs.get_float("epsilon");
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const size_t rank = x.shape().size();
  if (axis + 1 == rank && x.shape().back() > 0) return layer_norm_last_axis(in, eps, hints);
  ir::Shape outer(x.shape().begin(), x.shape().begin() + static_cast<long>(axis));
  ir::Shape inner(x.shape().begin() + static_cast<long>(axis), x.shape().end());
  int64_t count = 1;
  for (int64_t d : inner) count *= d;
  auto reduce_vars = [&](const char* prefix) {
    std::vector<tir::IterVar> rv;
    for (size_t d = axis; d < rank; ++d) rv.push_back(tir::reduce_axis(x.shape()[d], prefix + std::to_string(d)));
    return rv;
  };
  auto full_index = [&](const std::vector<Var>& o, const std::vector<tir::IterVar>& rv) {
    std::vector<Expr> idx = as_exprs(o);
    for (const auto& v : rv) idx.push_back(v.var());
    return idx;
  };
  const std::vector<tir::IterVar> r1 = reduce_vars("r");
  Tensor mean = tir::compute(
      outer, [&](const std::vector<Var>& o) { return tir::sum(cast_to(ct, x(full_index(o, r1))), r1); },
      "layer_norm_sum");
  const std::vector<tir::IterVar> r2 = reduce_vars("s");
  const double inv = 1.0 / static_cast<double>(count);
  Tensor var = tir::compute(
      outer,
      [&](const std::vector<Var>& o) {
        const Expr d = cast_to(ct, x(full_index(o, r2))) - mean(as_exprs(o)) * inv;
        return tir::sum(d * d, r2);
      },
      "layer_norm_sqsum");
  ComputeResult r;
  r.schedule = ScheduleKind::kReduction;
  r.parts["anchor"] = var;
  r.outputs = {tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const std::vector<Expr> o(i.begin(), i.begin() + static_cast<long>(axis));
        const std::vector<Var> tail(i.begin() + static_cast<long>(axis), i.end());
        const Expr norm = (cast_to(ct, x(as_exprs(i))) - mean(o) * inv) / tir::sqrt(var(o) * inv + eps);
        Expr y = norm * cast_to(ct, scale(broadcast_indices(tail, scale.shape())));
        if (has_bias) y = y + cast_to(ct, in[2](broadcast_indices(tail, in[2].shape())));
        return cast_to(dt, y);
      },
      "layer_norm")};
  return r;
}
KILN_REGISTER_COMPUTE(layer_norm, "layer_norm", layer_norm_compute);

// rms_norm: x * rsqrt(mean(x^2) + eps) * scale. Over the last axis the sum of squares is a lane
// reduction per row and 1 / sqrt(ms + eps) a per-row part ("row.rstd"), so the row schedule makes
// it one pass (as layer_norm); over several trailing axes a plain reduction stage.
ComputeResult rms_norm_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                               const std::vector<ir::TensorType>&, const LayoutHints& hints) {
  const Tensor x = in[0], scale = in[1];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  const double eps = attrs.get_float("epsilon");
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const size_t rank = x.shape().size();
  const ir::Shape outer(x.shape().begin(), x.shape().begin() + static_cast<long>(axis));
  int64_t count = 1;
  for (size_t d = axis; d < rank; ++d) count *= x.shape()[d];
  const double inv = count == 0 ? 0.0 : 1.0 / static_cast<double>(count);
  ComputeResult r;
  r.schedule = ScheduleKind::kReduction;
  Tensor sq;
  if (axis + 1 == rank && x.shape().back() > 0) {
    sq = lane_reduce(
        r, outer, x.shape().back(), hints.vector_lanes_f32, ct, Kind::kSum,
        [&](const std::vector<Expr>& o, const Expr& j) {
          const Expr v = cast_to(ct, x(at(o, j)));
          return v * v;
        },
        "rms_norm_sqsum");
  } else {
    std::vector<tir::IterVar> rv;
    for (size_t d = axis; d < rank; ++d) rv.push_back(tir::reduce_axis(x.shape()[d], reduce_var_name(d)));
    sq = tir::compute(
        outer,
        [&](const std::vector<Var>& o) {
          std::vector<Expr> idx = as_exprs(o);
          for (const auto& v : rv) idx.push_back(v.var());
          const Expr v = cast_to(ct, x(idx));
          return tir::sum(v * v, rv);
        },
        "rms_norm_sqsum");
  }
  Tensor rstd = tir::compute(
      outer,
      [&](const std::vector<Var>& o) { return Expr(constant(ct, 1.0)) / tir::sqrt(sq(as_exprs(o)) * inv + eps); },
      "rms_norm_rstd");
  r.parts["anchor"] = sq;
  if (axis + 1 == rank) r.parts["row.rstd"] = rstd;
  r.outputs = {tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const std::vector<Expr> o(i.begin(), i.begin() + static_cast<long>(axis));
        const std::vector<Var> tail(i.begin() + static_cast<long>(axis), i.end());
        const Expr y = cast_to(ct, x(as_exprs(i))) * rstd(o) * cast_to(ct, scale(broadcast_indices(tail, scale.shape())));
        return cast_to(dt, y);
      },
      "rms_norm")};
  return r;
}
KILN_REGISTER_COMPUTE(rms_norm, "rms_norm", rms_norm_compute);

}  // namespace
}  // namespace kiln::topi
