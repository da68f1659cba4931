// Computes of the elementwise math and activation operators beyond wave 1, and of the
// comparison / logical / bitwise / classification operators (src/ir/ops/elementwise_unary.cc,
// compare_logic.cc). Each is `out(i) = f(inputs(broadcast(i)))`, scheduled by the injective
// template like the family in elementwise.cc, so they fuse into neighbouring kernels.
//
// Functions that LLVM has no vector form for are written in TIR with the vectorized exp, log and
// sqrt plus short polynomials (the coefficients of Cephes' single-precision atanf, asinf,
// asinhf and atanhf), so they compile to straight-line vector code:
//   atan, asin, acos: argument reduction + odd polynomial, a few f32 ulp;
//   sinh, cosh: exp(|x| - ln 2) -> u +- 1/(4u) (finite up to sinh's own overflow); sinh's
//     |x| < 1 by its Taylor polynomial to x^9 (relative error < 3e-8);
//   asinh, acosh, atanh: log forms (|x| >= 1e8: log|x| + ln 2), small |x| < 0.5 by polynomials;
//     acosh's relative error near 1 grows to ~1e-4 at x = 1 + 1e-6 (cancellation in x + sqrt),
//   expm1 (elu, selu, celu) and log1p (softplus, mish) switch to 4-term series below 2^-5.
// f64 inputs use the same formulas (f32-level accuracy, ~1e-7 relative); tan is sin / cos on
// LLVM's intrinsics. Errors measured against numpy in tests/ir/ops/op_cases.py and the ONNX
// node tests (rtol 1e-3).
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

constexpr double kPi = std::numbers::pi;
constexpr double kLn2 = std::numbers::ln2;

Expr c(const Expr& like, double v) { return tir::make_const(like.type(), v); }

// Horner: ((k0 * z + k1) * z + ...) + kn.
Expr poly(const Expr& z, std::initializer_list<double> coeffs_high_to_low) {
  Expr acc;
  for (double k : coeffs_high_to_low) acc = acc.defined() ? acc * z + c(z, k) : c(z, k);
  return acc;
}

Expr copy_sign(const Expr& magnitude, const Expr& x) {
  return tir::select(x < c(x, 0), c(x, 0) - magnitude, magnitude);
}

// asin on |t| <= 0.5: t + t^3 P(t^2).
Expr asin_core(const Expr& t) {
  const Expr z = t * t;
  return poly(z, {4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2, 1.6666752422e-1}) * z * t + t;
}

Expr atan_expr(const Expr& x) {
  const Expr a = tir::fabs(x);
  const Expr big = a > c(x, 2.414213562373095), mid = a > c(x, 0.4142135623730950);
  const Expr t = tir::select(big, c(x, -1.0) / a, tir::select(mid, (a - c(x, 1.0)) / (a + c(x, 1.0)), a));
  const Expr base = tir::select(big, c(x, kPi / 2), tir::select(mid, c(x, kPi / 4), c(x, 0)));
  const Expr z = t * t;
  const Expr p = poly(z, {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1}) * z * t + t;
  return copy_sign(base + p, x);
}

Expr asin_expr(const Expr& x) {
  const Expr a = tir::fabs(x);
  const Expr big = a > c(x, 0.5);
  const Expr t = tir::select(big, tir::sqrt((c(x, 1.0) - a) * 0.5), a);  // nan for |x| > 1
  const Expr p = asin_core(t);
  return copy_sign(tir::select(big, c(x, kPi / 2) - p * 2.0, p), x);
}

Expr acos_expr(const Expr& x) {
  const Expr lo = x < c(x, -0.5), hi = x > c(x, 0.5);
  const Expr t = tir::select(lo, tir::sqrt((c(x, 1.0) + x) * 0.5), tir::select(hi, tir::sqrt((c(x, 1.0) - x) * 0.5), x));
  const Expr p = asin_core(t);
  return tir::select(lo, c(x, kPi) - p * 2.0, tir::select(hi, p * 2.0, c(x, kPi / 2) - p));
}

// u = exp(|x|) / 2 computed as exp(|x| - ln 2), so that sinh and cosh stay finite as long as they are.
Expr half_exp_abs(const Expr& x) { return tir::exp(tir::fabs(x) - kLn2); }

Expr sinh_expr(const Expr& x) {
  const Expr u = half_exp_abs(x);
  const Expr big = copy_sign(u - c(x, 0.25) / u, x);
  const Expr z = x * x;
  const Expr small = x + x * z * poly(z, {1.0 / 362880, 1.0 / 5040, 1.0 / 120, 1.0 / 6});
  return tir::select(tir::fabs(x) < c(x, 1.0), small, big);
}

Expr cosh_expr(const Expr& x) {
  const Expr u = half_exp_abs(x);
  return u + c(x, 0.25) / u;
}

Expr asinh_expr(const Expr& x) {
  const Expr a = tir::fabs(x);
  const Expr z = x * x;
  const Expr small = poly(z, {2.0122003309e-2, -4.2699340972e-2, 7.4847586088e-2, -1.6666288134e-1}) * z * a + a;
  const Expr huge = tir::log(a) + kLn2;
  const Expr mid = tir::log(a + tir::sqrt(a * a + 1.0));
  return copy_sign(tir::select(a < c(x, 0.5), small, tir::select(a > c(x, 1e8), huge, mid)), x);
}

Expr acosh_expr(const Expr& x) {
  const Expr mid = tir::log(x + tir::sqrt((x - 1.0) * (x + 1.0)));  // nan below 1
  return tir::select(x > c(x, 1e8), tir::log(x) + kLn2, mid);
}

Expr atanh_expr(const Expr& x) {
  const Expr a = tir::fabs(x);
  const Expr z = x * x;
  const Expr small =
      poly(z, {1.81740078349e-1, 8.24370301058e-2, 1.46691431730e-1, 1.99782164500e-1, 3.33337300303e-1}) * z * a + a;
  const Expr big = tir::log((c(x, 1.0) + a) / (c(x, 1.0) - a)) * 0.5;  // inf at 1, nan beyond
  return copy_sign(tir::select(a < c(x, 0.5), small, big), x);
}

// exp(x) - 1 without the cancellation for small |x|.
Expr expm1_expr(const Expr& x) {
  const Expr series = x + x * x * poly(x, {1.0 / 24, 1.0 / 6, 0.5});
  return tir::select(tir::fabs(x) < c(x, 0.03125), series, tir::exp(x) - 1.0);
}

// log(1 + y) for y >= 0.
Expr log1p_expr(const Expr& y) {
  const Expr series = y + y * y * poly(y, {-0.25, 1.0 / 3, -0.5});
  return tir::select(y < c(y, 0.03125), series, tir::log(y + 1.0));
}

Expr softplus_expr(const Expr& x) {
  return tir::max(x, c(x, 0)) + log1p_expr(tir::exp(c(x, 0) - tir::fabs(x)));
}

Expr sign_expr(const Expr& x) {
  const Expr zero = c(x, 0), one = c(x, 1);
  if (x.type().is_uint()) return tir::select(x > zero, one, zero);
  const Expr neg = tir::select(x < zero, c(x, -1), x.type().is_float() ? x : zero);  // nan and +-0 stay
  return tir::select(x > zero, one, neg);
}

using UnaryFn = std::function<Expr(const Expr& x, const ir::Attrs& attrs)>;

// out(i) = fn(x(i)) in the compute type (f32 for f16/bf16); `out_dtype` (kBool for the
// classifications) or x's dtype.
void register_unary(const char* op, bool float_only, UnaryFn fn, bool bool_out = false) {
  ComputeRegistry::global().add(
      {op, [op = std::string(op), float_only, fn, bool_out](const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                                             const std::vector<ir::TensorType>&, const LayoutHints&) {
         const Tensor x = in[0];
         const DType dt = x.dtype();
         if (float_only && !ir::is_float(dt)) fail_unsupported(op, std::string("dtype ") + ir::dtype_name(dt));
         const DType ct = compute_dtype(dt);
         return injective_result(tir::compute(
             x.shape(),
             [&](const std::vector<Var>& i) {
               return cast_to(bool_out ? DType::kBool : dt, fn(cast_to(ct, x(as_exprs(i))), attrs));
             },
             op));
       }});
}

using BinaryFn = std::function<Expr(const Expr& a, const Expr& b, const ir::Attrs& attrs)>;

// out(i) = fn(a(broadcast(i)), b(broadcast(i))), floats in the compute type.
void register_binary(const char* op, BinaryFn fn) {
  ComputeRegistry::global().add(
      {op, [op = std::string(op), fn](const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                      const std::vector<ir::TensorType>& out, const LayoutHints&) {
         const Tensor a = in[0], b = in[1];
         const DType ct = compute_dtype(a.dtype());
         return injective_result(tir::compute(
             out[0].shape,
             [&](const std::vector<Var>& i) {
               Expr va = a(broadcast_indices(i, a.shape()));
               Expr vb = b(broadcast_indices(i, b.shape()));
               if (ir::is_float(a.dtype())) {
                 va = cast_to(ct, va);
                 vb = cast_to(ct, vb);
               }
               return cast_to(out[0].dtype, fn(va, vb, attrs));
             },
             op));
       }});
}

bool register_family() {
  auto plain = [](Expr (*f)(const Expr&)) { return [f](const Expr& x, const ir::Attrs&) { return f(x); }; };
  register_unary("sin", true, [](const Expr& x, const ir::Attrs&) { return tir::sin(x); });
  register_unary("cos", true, [](const Expr& x, const ir::Attrs&) { return tir::cos(x); });
  register_unary("tan", true, [](const Expr& x, const ir::Attrs&) { return tir::sin(x) / tir::cos(x); });
  register_unary("asin", true, plain(asin_expr));
  register_unary("acos", true, plain(acos_expr));
  register_unary("atan", true, plain(atan_expr));
  register_unary("sinh", true, plain(sinh_expr));
  register_unary("cosh", true, plain(cosh_expr));
  register_unary("asinh", true, plain(asinh_expr));
  register_unary("acosh", true, plain(acosh_expr));
  register_unary("atanh", true, plain(atanh_expr));
  register_unary("floor", true, [](const Expr& x, const ir::Attrs&) { return tir::floor(x); });
  register_unary("ceil", true, [](const Expr& x, const ir::Attrs&) { return tir::ceil(x); });
  register_unary("round", true, [](const Expr& x, const ir::Attrs&) { return tir::round(x); });
  register_unary("sign", false, plain(sign_expr));
  register_unary("softplus", true, plain(softplus_expr));
  register_unary("softsign", true, [](const Expr& x, const ir::Attrs&) { return x / (tir::fabs(x) + 1.0); });
  register_unary("mish", true, [](const Expr& x, const ir::Attrs&) { return x * tir::tanh(softplus_expr(x)); });
  register_unary("elu", true, [](const Expr& x, const ir::Attrs& a) {
    return tir::select(x < c(x, 0), expm1_expr(x) * a.get_float("alpha"), x);
  });
  register_unary("selu", true, [](const Expr& x, const ir::Attrs& a) {
    return tir::select(x > c(x, 0), x, expm1_expr(x) * a.get_float("alpha")) * a.get_float("gamma");
  });
  register_unary("celu", true, [](const Expr& x, const ir::Attrs& a) {
    const double alpha = a.get_float("alpha");
    return tir::max(x, c(x, 0)) + tir::min(c(x, 0), expm1_expr(x * (1.0 / alpha)) * alpha);
  });
  register_unary("thresholded_relu", true, [](const Expr& x, const ir::Attrs& a) {
    return tir::select(x > c(x, a.get_float("alpha")), x, c(x, 0));
  });
  register_unary("shrink", true, [](const Expr& x, const ir::Attrs& a) {
    const double lambd = a.get_float("lambd"), bias = a.get_float("bias");
    return tir::select(x < c(x, -lambd), x + bias, tir::select(x > c(x, lambd), x - bias, c(x, 0)));
  });
  register_unary("swish", true, [](const Expr& x, const ir::Attrs& a) {
    return x * tir::sigmoid(x * a.get_float("alpha"));
  });
  register_unary("bitwise_not", false, [](const Expr& x, const ir::Attrs&) { return tir::bit_not(x); });
  register_unary("is_nan", true, [](const Expr& x, const ir::Attrs&) { return x != x; }, true);
  register_unary(
      "is_inf", true,
      [](const Expr& x, const ir::Attrs& a) {
        const double inf = std::numeric_limits<double>::infinity();
        Expr r = tir::make_bool(false, x.type().lanes);
        if (a.get_int("detect_positive")) r = r || x == c(x, inf);
        if (a.get_int("detect_negative")) r = r || x == c(x, -inf);
        return r;
      },
      true);

  register_binary("less", [](const Expr& a, const Expr& b, const ir::Attrs&) { return a < b; });
  register_binary("greater", [](const Expr& a, const Expr& b, const ir::Attrs&) { return a > b; });
  register_binary("less_equal", [](const Expr& a, const Expr& b, const ir::Attrs&) { return a <= b; });
  register_binary("greater_equal", [](const Expr& a, const Expr& b, const ir::Attrs&) { return a >= b; });
  register_binary("logical_and", [](const Expr& a, const Expr& b, const ir::Attrs&) { return a && b; });
  register_binary("logical_or", [](const Expr& a, const Expr& b, const ir::Attrs&) { return a || b; });
  register_binary("logical_xor", [](const Expr& a, const Expr& b, const ir::Attrs&) { return a != b; });
  register_binary("bitwise_and", [](const Expr& a, const Expr& b, const ir::Attrs&) { return tir::bit_and(a, b); });
  register_binary("bitwise_or", [](const Expr& a, const Expr& b, const ir::Attrs&) { return tir::bit_or(a, b); });
  register_binary("bitwise_xor", [](const Expr& a, const Expr& b, const ir::Attrs&) { return tir::bit_xor(a, b); });
  register_binary("bit_shift", [](const Expr& a, const Expr& b, const ir::Attrs& attrs) {
    return attrs.get_string("direction") == "left" ? tir::shift_left(a, b) : tir::shift_right(a, b);
  });
  register_binary("prelu", [](const Expr& x, const Expr& s, const ir::Attrs&) {
    return tir::select(x < c(x, 0), x * s, x);
  });
  return true;
}

[[maybe_unused]] const bool registered = register_family();

}  // namespace
}  // namespace kiln::topi
