// Injective operators: every output element reads a computable set of input elements. Each is a
// compute over the output shape whose body maps the output index to input indices; all use the
// injective schedule template (no per-op kernels). Reads that may fall outside an input (concat's
// other pieces, constant padding) use read_or, which clamps the address and selects the fallback.
#include <algorithm>

#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

ComputeResult reshape_compute(const std::vector<Tensor>& in, const ir::Attrs&, const std::vector<ir::TensorType>& out,
                              const LayoutHints&) {
  const Tensor x = in[0];
  const ir::Shape oshape = out[0].shape;
  return injective_result(tir::compute(
      oshape, [&](const std::vector<Var>& i) { return x(unravel(ravel(as_exprs(i), oshape), x.shape())); },
      "reshape"));
}
KILN_REGISTER_COMPUTE(reshape, "reshape", reshape_compute);

ComputeResult transpose_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor x = in[0];
  const std::vector<int64_t>& perm = attrs.get_ints("perm");
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(perm.size());
        for (size_t d = 0; d < perm.size(); ++d) idx[static_cast<size_t>(perm[d])] = i[d];
        return x(idx);
      },
      "transpose"));
}
KILN_REGISTER_COMPUTE(transpose, "transpose", transpose_compute);

ComputeResult concat_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                             const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        // Offsets of each piece along the axis; the last piece is the innermost fallback.
        std::vector<int64_t> offset(in.size(), 0);
        for (size_t k = 1; k < in.size(); ++k) offset[k] = offset[k - 1] + in[k - 1].shape()[axis];
        Expr value;
        for (size_t k = in.size(); k-- > 0;) {
          std::vector<Expr> idx = as_exprs(i);
          idx[axis] = idx[axis] - offset[k];
          value = value.defined() ? tir::read_or(in[k], idx, value)
                                  : tir::read_or(in[k], idx, tir::make_zero(tir::Type(in[k].dtype())));
        }
        return value;
      },
      "concat"));
}
KILN_REGISTER_COMPUTE(concat, "concat", concat_compute);

ComputeResult split_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                            const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor x = in[0];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  ComputeResult r;
  r.schedule = ScheduleKind::kInjective;
  int64_t offset = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t off = offset;
    r.outputs.push_back(tir::compute(
        out[k].shape,
        [&](const std::vector<Var>& i) {
          std::vector<Expr> idx = as_exprs(i);
          idx[axis] = idx[axis] + off;
          return x(idx);
        },
        "split" + std::to_string(k)));
    offset += out[k].shape[axis];
  }
  return r;
}
KILN_REGISTER_COMPUTE(split, "split", split_compute);

// Start index of each axis under ONNX Slice's clamping (the counts are the output shape).
std::vector<std::pair<int64_t, int64_t>> slice_starts(const ir::Shape& shape, const ir::Attrs& attrs) {
  const auto& begins = attrs.get_ints("begins");
  std::vector<int64_t> axes = attrs.get_ints("axes");
  std::vector<int64_t> steps = attrs.get_ints("steps");
  if (axes.empty()) {
    for (size_t i = 0; i < begins.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(begins.size(), 1);
  std::vector<std::pair<int64_t, int64_t>> start_step(shape.size(), {0, 1});
  for (size_t k = 0; k < begins.size(); ++k) {
    const int64_t dim = shape[static_cast<size_t>(axes[k])];
    int64_t start = begins[k];
    if (start < 0) start += dim;
    start = steps[k] > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
    start_step[static_cast<size_t>(axes[k])] = {start, steps[k]};
  }
  return start_step;
}

ComputeResult strided_slice_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                    const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor x = in[0];
  const auto start_step = slice_starts(x.shape(), attrs);
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < i.size(); ++d) idx.push_back(i[d] * start_step[d].second + start_step[d].first);
        return x(idx);
      },
      "strided_slice"));
}
KILN_REGISTER_COMPUTE(strided_slice, "strided_slice", strided_slice_compute);

// out[pre..., idx..., post...] = data[pre..., indices[idx...] (negative: from the end), post...].
ComputeResult gather_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                             const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const Tensor data = in[0], indices = in[1];
  const size_t axis = static_cast<size_t>(attrs.get_int("axis"));
  const int64_t dim = data.shape()[axis];
  const size_t nidx = indices.shape().size();
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> iidx(i.begin() + static_cast<long>(axis), i.begin() + static_cast<long>(axis + nidx));
        Expr k = cast_to(DType::kI64, indices(iidx));
        k = tir::select(k < Expr(0), k + dim, k);
        std::vector<Expr> didx(i.begin(), i.begin() + static_cast<long>(axis));
        didx.push_back(k);
        for (size_t d = axis + nidx; d < i.size(); ++d) didx.push_back(i[d]);
        return data(didx);
      },
      "gather"));
}
KILN_REGISTER_COMPUTE(gather, "gather", gather_compute);

ComputeResult expand_compute(const std::vector<Tensor>& in, const ir::Attrs&, const std::vector<ir::TensorType>& out,
                             const LayoutHints&) {
  const Tensor x = in[0];
  return injective_result(
      tir::compute(out[0].shape, [&](const std::vector<Var>& i) { return x(broadcast_indices(i, x.shape())); }, "expand"));
}
KILN_REGISTER_COMPUTE(expand, "expand", expand_compute);

// x's static dimensions as values (the graph keeps shape_of only on symbolic shapes, which do
// not reach lowering yet; a kernel with symbolic extents will read them from its size arguments).
ComputeResult shape_of_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                               const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const std::vector<int64_t>& dims = in[0].shape();
  const int64_t start = attrs.get_int("start");
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        Expr value = tir::make_int(0);
        for (int64_t k = static_cast<int64_t>(out[0].shape[0]) - 1; k >= 0; --k) {
          value = tir::select(i[0] == tir::make_int(k), tir::make_int(dims[start + k]), value);
        }
        return value;
      },
      "shape_of"));
}
KILN_REGISTER_COMPUTE(shape_of, "shape_of", shape_of_compute);

// pad: constant (read_or), edge (clamp), reflect (mirror with period 2(n-1)), wrap (floormod).
ComputeResult pad_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>& out,
                          const LayoutHints&) {
  const Tensor x = in[0];
  const std::vector<int64_t>& pads = attrs.get_ints("pads");
  const std::string& mode = attrs.get_string("mode");
  const double value = attrs.get_float("value");
  const size_t rank = x.shape().size();
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap") fail_unsupported("pad", "mode " + mode);
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < rank; ++d) {
          const int64_t n = x.shape()[d];
          Expr j = i[d] - pads[d];
          if (mode == "edge") {
            j = tir::min(tir::max(j, Expr(0)), Expr(n - 1));
          } else if (mode == "wrap") {
            j = tir::floormod(j, Expr(n));
          } else if (mode == "reflect") {
            if (n == 1) {
              j = Expr(0);
            } else {
              const Expr m = tir::floormod(j, Expr(2 * (n - 1)));
              j = tir::select(m < Expr(n), m, Expr(2 * (n - 1)) - m);
            }
          }
          idx.push_back(j);
        }
        if (mode == "constant") return tir::read_or(x, idx, constant(x.dtype(), value));
        return x(idx);
      },
      "pad"));
}
KILN_REGISTER_COMPUTE(pad, "pad", pad_compute);

}  // namespace
}  // namespace kiln::topi
