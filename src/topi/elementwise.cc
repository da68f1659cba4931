// The elementwise and broadcast family through one mechanism: a table from op name to a scalar
// expression builder. Every op of the family becomes `out(i) = f(inputs(broadcast(i)))`, scheduled
// by the injective template. Float math of f16/bf16 runs in f32 (rounded once on store).
#include <cmath>
#include <functional>
#include <limits>

#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;
using tir::Type;

// f(x) for one element; x is already in the compute type (f32 for f16/bf16 inputs).
using UnaryFn = std::function<Expr(const Expr& x, const ir::Attrs& attrs)>;

Expr relu(const Expr& x) { return tir::select(x < tir::make_zero(x.type()), tir::make_zero(x.type()), x); }

Expr gelu(const Expr& x, const ir::Attrs& attrs) {
  const std::string& approx = attrs.get_string("approximate");
  if (approx == "tanh") {
    const Expr inner = (x + x * x * x * 0.044715) * std::sqrt(2.0 / M_PI);
    return x * 0.5 * (tir::tanh(inner) + 1.0);
  }
  return x * 0.5 * (tir::erf(x * M_SQRT1_2) + 1.0);
}

ComputeResult unary(const std::string& op, bool float_only, const UnaryFn& fn, const std::vector<Tensor>& in,
                    const ir::Attrs& attrs) {
  const Tensor x = in[0];
  const DType dt = x.dtype();
  if (float_only && !ir::is_float(dt)) fail_unsupported(op, std::string("dtype ") + ir::dtype_name(dt));
  const DType ct = compute_dtype(dt);
  return injective_result(tir::compute(
      x.shape(), [&](const std::vector<Var>& i) { return cast_to(dt, fn(cast_to(ct, x(as_exprs(i))), attrs)); },
      op));
}

void register_unary(const char* op, bool float_only, UnaryFn fn) {
  ComputeRegistry::global().add(
      {op, [op = std::string(op), float_only, fn](const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                                   const std::vector<ir::TensorType>&, const LayoutHints&) {
         return unary(op, float_only, fn, in, attrs);
       }});
}

// Integer division truncating toward zero (ONNX) from floor division.
Expr trunc_div(const Expr& a, const Expr& b) {
  const Expr q = tir::floordiv(a, b);
  const Expr zero = tir::make_zero(a.type());
  const Expr inexact = tir::floormod(a, b) != zero;
  const Expr signs_differ = (a < zero) != (b < zero);
  return tir::select(inexact && signs_differ, q + tir::make_const(a.type(), 1), q);
}

// Float remainders through f64 (q = trunc or floor of a / b, r = a - b * q): exact for f32/f16
// inputs while |a / b| < 2^29; integers with floormod (mod) or a - b * trunc_div (fmod).
Expr float_remainder(const Expr& a, const Expr& b, bool floored) {
  const Expr a64 = cast_to(DType::kF64, a), b64 = cast_to(DType::kF64, b);
  const Expr q = a64 / b64;
  const Expr zero = tir::make_zero(q.type());
  const Expr whole = floored ? tir::floor(q) : tir::select(q < zero, tir::ceil(q), tir::floor(q));
  return cast_to(a.type().dtype, a64 - b64 * whole);
}

using BinaryFn = std::function<Expr(const Expr& a, const Expr& b, DType out)>;

ComputeResult binary(const std::string& op, const BinaryFn& fn, const std::vector<Tensor>& in,
                     const std::vector<ir::TensorType>& out_types) {
  const Tensor a = in[0], b = in[1];
  const DType ct = compute_dtype(a.dtype());
  return injective_result(tir::compute(
      out_types[0].shape,
      [&](const std::vector<Var>& i) {
        Expr va = a(broadcast_indices(i, a.shape()));
        Expr vb = b(broadcast_indices(i, b.shape()));
        if (ir::is_float(a.dtype())) {
          va = cast_to(ct, va);
          vb = cast_to(ct, vb);
        }
        return cast_to(out_types[0].dtype, fn(va, vb, out_types[0].dtype));
      },
      op));
}

void register_binary(const char* op, BinaryFn fn) {
  ComputeRegistry::global().add(
      {op, [op = std::string(op), fn](const std::vector<Tensor>& in, const ir::Attrs&,
                                      const std::vector<ir::TensorType>& out, const LayoutHints&) {
         return binary(op, fn, in, out);
       }});
}

// Clip bounds for an integer type: rounded inward, clamped to the type's range (ONNX via ops.md).
Expr clip_expr(const Expr& x, const ir::Attrs& attrs) {
  double lo = attrs.get_float("min"), hi = attrs.get_float("max");
  if (x.type().is_float()) {
    return tir::min(tir::max(x, constant(x.type().dtype, lo)), constant(x.type().dtype, hi));
  }
  int64_t vmin = 0, vmax = 0;
  tir::as_const_int(tir::type_min(x.type()), &vmin);
  tir::as_const_int(tir::type_max(x.type()), &vmax);
  lo = std::ceil(lo);
  hi = std::floor(hi);
  const int64_t ilo = lo <= static_cast<double>(vmin) ? vmin : lo >= static_cast<double>(vmax) ? vmax : static_cast<int64_t>(lo);
  const int64_t ihi = hi <= static_cast<double>(vmin) ? vmin : hi >= static_cast<double>(vmax) ? vmax : static_cast<int64_t>(hi);
  // A bound at the end of the type's range (an absent, infinite bound among them) clamps nothing:
  // leave it out rather than materialize the extreme constant.
  Expr y = x;
  if (ilo > vmin) y = tir::max(y, tir::make_const(x.type(), static_cast<double>(ilo)));
  if (ihi < vmax || ihi < ilo) y = tir::min(y, tir::make_const(x.type(), static_cast<double>(ihi)));
  return y;
}

bool register_family() {
  // ---- unary: op -> f(x) ----
  register_unary("relu", false, [](const Expr& x, const ir::Attrs&) { return relu(x); });
  register_unary("sigmoid", true, [](const Expr& x, const ir::Attrs&) { return tir::sigmoid(x); });
  register_unary("tanh", true, [](const Expr& x, const ir::Attrs&) { return tir::tanh(x); });
  register_unary("erf", true, [](const Expr& x, const ir::Attrs&) { return tir::erf(x); });
  register_unary("exp", true, [](const Expr& x, const ir::Attrs&) { return tir::exp(x); });
  register_unary("log", true, [](const Expr& x, const ir::Attrs&) { return tir::log(x); });
  register_unary("sqrt", true, [](const Expr& x, const ir::Attrs&) { return tir::sqrt(x); });
  register_unary("neg", false, [](const Expr& x, const ir::Attrs&) { return tir::make_zero(x.type()) - x; });
  register_unary("abs", false, [](const Expr& x, const ir::Attrs&) {
    if (x.type().is_float()) return tir::fabs(x);
    if (x.type().is_uint()) return x;
    return tir::select(x < tir::make_zero(x.type()), tir::make_zero(x.type()) - x, x);
  });
  register_unary("reciprocal", true, [](const Expr& x, const ir::Attrs&) { return tir::make_const(x.type(), 1) / x; });
  register_unary("hard_swish", true, [](const Expr& x, const ir::Attrs&) {
    return x * tir::max(tir::make_zero(x.type()), tir::min(tir::make_const(x.type(), 1), x * (1.0 / 6.0) + 0.5));
  });
  register_unary("leaky_relu", true, [](const Expr& x, const ir::Attrs& a) {
    return tir::select(x < tir::make_zero(x.type()), x * a.get_float("alpha"), x);
  });
  register_unary("hard_sigmoid", true, [](const Expr& x, const ir::Attrs& a) {
    return tir::max(tir::make_zero(x.type()),
                    tir::min(tir::make_const(x.type(), 1), x * a.get_float("alpha") + a.get_float("beta")));
  });
  register_unary("clip", false, clip_expr);
  register_unary("gelu", true, gelu);

  // ---- binary with numpy broadcasting: op -> f(a, b) ----
  register_binary("add", [](const Expr& a, const Expr& b, DType) { return a + b; });
  register_binary("sub", [](const Expr& a, const Expr& b, DType) { return a - b; });
  register_binary("mul", [](const Expr& a, const Expr& b, DType) { return a * b; });
  register_binary("div", [](const Expr& a, const Expr& b, DType) {
    return a.type().is_float() ? a / b : trunc_div(a, b);
  });
  register_binary("min", [](const Expr& a, const Expr& b, DType) { return tir::min(a, b); });
  register_binary("max", [](const Expr& a, const Expr& b, DType) { return tir::max(a, b); });
  register_binary("pow", [](const Expr& a, const Expr& b, DType) {
    // Integer base (int or float exponent): in f64 through the pow intrinsic, truncated on the cast
    // back to the base's dtype, as the reference's double path does (exact while |a^b| < 2^53).
    if (!a.type().is_float()) return tir::pow(cast_to(DType::kF64, a), cast_to(DType::kF64, b));
    return tir::pow(a, cast_to(a.type().dtype, b));
  });
  register_binary("equal", [](const Expr& a, const Expr& b, DType) { return a == b; });
  register_binary("mod", [](const Expr& a, const Expr& b, DType) {
    return a.type().is_float() ? float_remainder(a, b, true) : tir::floormod(a, b);
  });
  register_binary("fmod", [](const Expr& a, const Expr& b, DType) {
    return a.type().is_float() ? float_remainder(a, b, false) : a - b * trunc_div(a, b);
  });
  return true;
}

[[maybe_unused]] const bool registered = register_family();

ComputeResult where_compute(const std::vector<Tensor>& in, const ir::Attrs&, const std::vector<ir::TensorType>& out,
                            const LayoutHints&) {
  const Tensor c = in[0], x = in[1], y = in[2];
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        return tir::select(c(broadcast_indices(i, c.shape())), x(broadcast_indices(i, x.shape())),
                           y(broadcast_indices(i, y.shape())));
      },
      "where"));
}
KILN_REGISTER_COMPUTE(where, "where", where_compute);

ComputeResult cast_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>&,
                           const LayoutHints&) {
  const Tensor x = in[0];
  const DType to = attrs.get_dtype("dtype");
  return injective_result(tir::compute(
      x.shape(), [&](const std::vector<Var>& i) { return cast_to(to, x(as_exprs(i))); }, "cast"));
}
KILN_REGISTER_COMPUTE(cast, "cast", cast_compute);

// batch_norm (inference): (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c], c = axis 1.
ComputeResult batch_norm_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                 const std::vector<ir::TensorType>&, const LayoutHints&) {
  const Tensor x = in[0], scale = in[1], bias = in[2], mean = in[3], var = in[4];
  const DType dt = x.dtype(), ct = compute_dtype(dt);
  const double eps = attrs.get_float("epsilon");
  return injective_result(tir::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        const Expr c = x.ndim() > 1 ? Expr(i[1]) : Expr(0);
        const Expr v = cast_to(ct, x(as_exprs(i)));
        const Expr inv = cast_to(ct, scale(c)) / tir::sqrt(cast_to(ct, var(c)) + eps);
        return cast_to(dt, (v - cast_to(ct, mean(c))) * inv + cast_to(ct, bias(c)));
      },
      "batch_norm"));
}
KILN_REGISTER_COMPUTE(batch_norm, "batch_norm", batch_norm_compute);

}  // namespace
}  // namespace kiln::topi
