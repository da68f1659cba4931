// Element-indexed data movement (src/ir/ops/indexing.cc): gather_elements, gather_nd and
// reverse_sequence are injective computes (the output index maps to one input element through
// a run-time index); scatter_elements is a reduction over the scattered axis of indices: for each
// output element, which updates land on it (the last one for reduction "none", their sum, max or
// min otherwise; their product unrolled, up to 64 per line), then one combine with data. Run-time indices are resolved
// (negative = from the end) and clamped into the axis, so a bad index never reads outside a
// buffer (the reference reports it as an error).
#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

// A run-time index into an axis of `dim` elements: negative from the end, clamped into range.
Expr resolved_index(const Expr& raw, int64_t dim) {
  Expr k = cast_to(DType::kI64, raw);
  k = tir::select(k < Expr(int64_t{0}), k + dim, k);
  return tir::min(tir::max(k, Expr(int64_t{0})), Expr(std::max<int64_t>(dim - 1, 0)));
}

ComputeResult gather_elements_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                      const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor data = in[0], indices = in[1];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  const int64_t dim = data.shape()[axis];
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        idx[axis] = resolved_index(indices(as_exprs(i)), dim);
        return data(idx);
      },
      "gather_elements"));
}
KILN_REGISTER_COMPUTE(gather_elements, "gather_elements", gather_elements_compute);

// out[o_0 .. o_{q-2}, rest...] = data[o_0 .. o_{b-1}, indices[o_0 .. o_{q-2}, 0 .. k-1], rest...].
ComputeResult gather_nd_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor data = in[0], indices = in[1];
  const size_t b = static_cast<size_t>(attrs.get_int("batch_dims"));
  const size_t q = indices.shape().size();
  const int64_t k = indices.shape().back();
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> didx(i.begin(), i.begin() + static_cast<long>(b));
        for (int64_t j = 0; j < k; ++j) {
          std::vector<Expr> iidx(i.begin(), i.begin() + static_cast<long>(q - 1));
          iidx.push_back(Expr(j));
          didx.push_back(resolved_index(indices(iidx), data.shape()[b + static_cast<size_t>(j)]));
        }
        for (size_t d = q - 1; d < i.size(); ++d) didx.push_back(i[d]);
        return data(didx);
      },
      "gather_nd"));
}
KILN_REGISTER_COMPUTE(gather_nd, "gather_nd", gather_nd_compute);

ComputeResult reverse_sequence_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                       const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor x = in[0], lens = in[1];
  const size_t b = static_cast<size_t>(attrs.get_int("batch_axis")), t = static_cast<size_t>(attrs.get_int("time_axis"));
  const int64_t steps = x.shape()[t];
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        Expr len = tir::min(tir::max(cast_to(DType::kI64, lens({Expr(i[b])})), Expr(int64_t{0})), Expr(steps));
        idx[t] = tir::select(Expr(i[t]) < len, len - 1 - Expr(i[t]), Expr(i[t]));
        return x(idx);
      },
      "reverse_sequence"));
}
KILN_REGISTER_COMPUTE(reverse_sequence, "reverse_sequence", reverse_sequence_compute);

ComputeResult scatter_elements_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                       const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor data = in[0], indices = in[1], updates = in[2];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  const std::string& reduction = attrs.get_string("reduction");
  const ir::Shape& ishape = indices.shape();
  const int64_t dim = data.shape()[axis];
  const DType dt = data.dtype(), acc = compute_dtype(dt);
  if (ir::shape_numel(ishape) == 0) {
    return injective_result(tir::compute(
        out[0].shape, [&](const std::vector<Var>& i) { return data(as_exprs(i)); }, "scatter_elements"));
  }
  // Whether output index i lies under indices' extent in every dimension but the axis.
  auto covered = [&](const std::vector<Var>& i) {
    Expr c = tir::make_bool(true);
    for (size_t d = 0; d < i.size(); ++d) {
      if (d != axis && ishape[d] < data.shape()[d]) c = c && (Expr(i[d]) < Expr(ishape[d]));
    }
    return c;
  };
  // indices/updates index for output index i and scattered position r (clamped where not covered).
  auto source_index = [&](const std::vector<Var>& i, const Expr& r) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < i.size(); ++d) {
      idx.push_back(d == axis ? r : (ishape[d] < data.shape()[d] ? tir::min(Expr(i[d]), Expr(ishape[d] - 1)) : Expr(i[d])));
    }
    return idx;
  };
  tir::IterVar r = tir::reduce_axis(ishape[axis], "r");
  auto lands_at = [&](const std::vector<Var>& i, const Expr& pos) {
    const std::vector<Expr> src = source_index(i, pos);
    Expr target = cast_to(DType::kI64, indices(src));
    target = tir::select(target < Expr(int64_t{0}), target + dim, target);
    return covered(i) && (target == Expr(i[axis]));
  };
  auto lands = [&](const std::vector<Var>& i) { return lands_at(i, r.var()); };
  ComputeResult result;
  result.schedule = ScheduleKind::kReduction;
  if (reduction == "none") {
    // The last update landing on each element (sequential order, as the reference), or -1.
    Tensor last = tir::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
          return tir::max_reduce(tir::select(lands(i), Expr(r.var()), Expr(int64_t{-1})), {r});
        },
        "scatter_last");
    result.parts["anchor"] = last;
    result.outputs = {tir::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
          const Expr l = last(as_exprs(i));
          return tir::select(l >= Expr(int64_t{0}), updates(source_index(i, tir::max(l, Expr(int64_t{0})))),
                             data(as_exprs(i)));
        },
        "scatter_elements")};
    return result;
  }
  if (reduction == "mul") {
    // No product reduction in the tensor IR: the product of the (few) updates that can land on an
    // element, unrolled over the scattered axis of indices.
    constexpr int64_t kMaxUnrolled = 64;
    if (ishape[axis] > kMaxUnrolled) {
      fail_unsupported("scatter_elements", "reduction mul with " + std::to_string(ishape[axis]) +
                                               " updates per line (at most " + std::to_string(kMaxUnrolled) + " compile)");
    }
    result.outputs = {tir::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
          Expr p = cast_to(acc, data(as_exprs(i)));
          for (int64_t k = 0; k < ishape[axis]; ++k) {
            p = p * tir::select(lands_at(i, Expr(k)), cast_to(acc, updates(source_index(i, Expr(k)))), constant(acc, 1.0));
          }
          return cast_to(dt, p);
        },
        "scatter_elements")};
    return result;
  }
  Tensor red = tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        const Expr u = cast_to(acc, updates(source_index(i, r.var())));
        if (reduction == "add") return tir::sum(tir::select(lands(i), u, constant(acc, 0.0)), {r});
        if (reduction == "max") return tir::max_reduce(tir::select(lands(i), u, tir::type_min(tir::Type(acc))), {r});
        if (reduction == "min") return tir::min_reduce(tir::select(lands(i), u, tir::type_max(tir::Type(acc))), {r});
        fail_unsupported("scatter_elements", "reduction " + reduction);
      },
      "scatter_reduce");
  result.parts["anchor"] = red;
  result.outputs = {tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        const Expr a = cast_to(acc, data(as_exprs(i))), u = red(as_exprs(i));
        Expr v = reduction == "add" ? a + u : reduction == "max" ? tir::max(a, u) : tir::min(a, u);
        return cast_to(dt, v);
      },
      "scatter_elements")};
  return result;
}
KILN_REGISTER_COMPUTE(scatter_elements, "scatter_elements", scatter_elements_compute);

}  // namespace
}  // namespace kiln::topi
