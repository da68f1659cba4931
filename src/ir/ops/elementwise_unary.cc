// Elementwise unary operators (one table; one kernel template for every dtype):
//   relu sigmoid tanh erf exp log sqrt neg abs reciprocal hard_swish, leaky_relu(alpha),
//   hard_sigmoid(alpha, beta), clip(min, max), gelu(approximate);
//   math: sin cos tan asin acos atan sinh cosh asinh acosh atanh floor ceil round (half to even)
//   sign; activations: elu(alpha) selu(alpha, gamma) celu(alpha) softplus softsign mish
//   thresholded_relu(alpha) shrink(lambd, bias) swish(alpha).
// Float inputs are computed in double and rounded once to the output type (f16/bf16 decoded
// first); integer inputs (relu, neg, abs, clip) are computed exactly in int64 and wrap like numpy.
#include <cmath>
#include <limits>
#include <numbers>

#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

// Attribute values an operator's formula needs, read once per call.
struct Params {
  double a = 0, b = 0;
  bool tanh_approx = false;
};

using FloatFn = double (*)(double x, const Params& p);
using IntFn = int64_t (*)(int64_t x, const Params& p);

struct UnaryDef {
  const char* name;
  const char* doc;
  DTypeSet dtypes;
  FloatFn f;
  IntFn fi;  // nullptr: float inputs only
  std::vector<AttrSpec> attrs;
  Params (*params)(const Attrs&);  // nullptr: no attributes
};

constexpr double kInf = std::numeric_limits<double>::infinity();

double hard_sigmoid(double x, double alpha, double beta) {
  if (std::isnan(x)) return x;
  return std::max(0.0, std::min(1.0, alpha * x + beta));
}

int64_t wrap_neg(int64_t x) { return static_cast<int64_t>(0ull - static_cast<uint64_t>(x)); }

// Clip for integers: bounds rounded inward to integers, then min(max(x, lo), hi) as in ONNX (so
// min > max gives max everywhere).
int64_t clip_int(int64_t x, const Params& p) {
  const int64_t lo = p.a == -kInf ? std::numeric_limits<int64_t>::lowest() : saturate_cast<int64_t>(std::ceil(p.a));
  const int64_t hi = p.b == kInf ? std::numeric_limits<int64_t>::max() : saturate_cast<int64_t>(std::floor(p.b));
  return std::min(std::max(x, lo), hi);
}

const std::vector<UnaryDef>& unary_defs() {
  static const std::vector<UnaryDef> defs = {
      {"relu", "max(x, 0)", DTypeSet::kSignedNumeric,
       [](double x, const Params&) { return x > 0 || std::isnan(x) ? x : 0.0; },
       [](int64_t x, const Params&) { return std::max<int64_t>(x, 0); }, {}, nullptr},
      {"sigmoid", "1 / (1 + exp(-x))", DTypeSet::kFloat,
       [](double x, const Params&) { return 1.0 / (1.0 + std::exp(-x)); }, nullptr, {}, nullptr},
      {"tanh", "tanh(x)", DTypeSet::kFloat, [](double x, const Params&) { return std::tanh(x); }, nullptr, {}, nullptr},
      {"erf", "erf(x)", DTypeSet::kFloat, [](double x, const Params&) { return std::erf(x); }, nullptr, {}, nullptr},
      {"exp", "exp(x)", DTypeSet::kFloat, [](double x, const Params&) { return std::exp(x); }, nullptr, {}, nullptr},
      {"log", "natural log (log(0) = -inf, log(<0) = nan)", DTypeSet::kFloat,
       [](double x, const Params&) { return std::log(x); }, nullptr, {}, nullptr},
      {"sqrt", "square root (sqrt(<0) = nan)", DTypeSet::kFloat, [](double x, const Params&) { return std::sqrt(x); },
       nullptr, {}, nullptr},
      {"neg", "-x (integers wrap)", DTypeSet::kSignedNumeric, [](double x, const Params&) { return -x; },
       [](int64_t x, const Params&) { return wrap_neg(x); }, {}, nullptr},
      {"abs", "|x| (abs of the most negative integer wraps to itself)", DTypeSet::kNumeric,
       [](double x, const Params&) { return std::fabs(x); },
       [](int64_t x, const Params&) { return x < 0 ? wrap_neg(x) : x; }, {}, nullptr},
      {"reciprocal", "1 / x", DTypeSet::kFloat, [](double x, const Params&) { return 1.0 / x; }, nullptr, {}, nullptr},
      {"hard_swish", "x * max(0, min(1, x / 6 + 0.5))", DTypeSet::kFloat,
       [](double x, const Params&) { return x * hard_sigmoid(x, 1.0 / 6.0, 0.5); }, nullptr, {}, nullptr},
      {"leaky_relu", "x >= 0 ? x : alpha * x", DTypeSet::kFloat,
       [](double x, const Params& p) { return x >= 0 ? x : p.a * x; }, nullptr,
       {{"alpha", AttrKind::kFloat, AttrValue(0.01), "slope for x < 0"}},
       [](const Attrs& attrs) { return Params{attrs.get_float("alpha"), 0, false}; }},
      {"hard_sigmoid", "max(0, min(1, alpha * x + beta))", DTypeSet::kFloat,
       [](double x, const Params& p) { return hard_sigmoid(x, p.a, p.b); }, nullptr,
       {{"alpha", AttrKind::kFloat, AttrValue(0.2), "slope"}, {"beta", AttrKind::kFloat, AttrValue(0.5), "offset"}},
       [](const Attrs& attrs) { return Params{attrs.get_float("alpha"), attrs.get_float("beta"), false}; }},
      {"clip", "min(max(x, min), max) (ONNX Clip; min > max gives max; nan stays nan)", DTypeSet::kNumeric,
       [](double x, const Params& p) { return std::isnan(x) ? x : std::min(std::max(x, p.a), p.b); }, clip_int,
       {{"min", AttrKind::kFloat, AttrValue(-kInf), "lower bound"},
        {"max", AttrKind::kFloat, AttrValue(kInf), "upper bound"}},
       [](const Attrs& attrs) { return Params{attrs.get_float("min"), attrs.get_float("max"), false}; }},
      {"gelu",
       "approximate=\"none\": x/2 * (1 + erf(x / sqrt(2))); \"tanh\": x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))",
       DTypeSet::kFloat,
       [](double x, const Params& p) {
         if (p.tanh_approx) {
           const double k = std::sqrt(2.0 / std::numbers::pi);
           return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
         }
         return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
       },
       nullptr, {{"approximate", AttrKind::kString, AttrValue(std::string("none")), "\"none\" or \"tanh\""}},
       [](const Attrs& attrs) { return Params{0, 0, attrs.get_string("approximate") == "tanh"}; }},
  };
  return defs;
}

// Attributes (name, default, doc) -> Params{a, b}.
Params alpha_param(const Attrs& attrs) { return Params{attrs.get_float("alpha"), 0, false}; }
AttrSpec float_attr(const char* name, double value, const char* doc) {
  return {name, AttrKind::kFloat, AttrValue(value), doc};
}

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

UnaryDef float_unary(const char* name, const char* doc, FloatFn f) {
  return {name, doc, DTypeSet::kFloat, f, nullptr, {}, nullptr};
}

// The math functions and the activations of ONNX beyond wave 1 (ONNX's definitions).
std::vector<UnaryDef> math_defs() {
  return {
      float_unary("sin", "sin(x)", [](double x, const Params&) { return std::sin(x); }),
      float_unary("cos", "cos(x)", [](double x, const Params&) { return std::cos(x); }),
      float_unary("tan", "tan(x)", [](double x, const Params&) { return std::tan(x); }),
      float_unary("asin", "asin(x) (nan outside [-1, 1])", [](double x, const Params&) { return std::asin(x); }),
      float_unary("acos", "acos(x) (nan outside [-1, 1])", [](double x, const Params&) { return std::acos(x); }),
      float_unary("atan", "atan(x)", [](double x, const Params&) { return std::atan(x); }),
      float_unary("sinh", "sinh(x)", [](double x, const Params&) { return std::sinh(x); }),
      float_unary("cosh", "cosh(x)", [](double x, const Params&) { return std::cosh(x); }),
      float_unary("asinh", "asinh(x)", [](double x, const Params&) { return std::asinh(x); }),
      float_unary("acosh", "acosh(x) (nan below 1)", [](double x, const Params&) { return std::acosh(x); }),
      float_unary("atanh", "atanh(x) (+-inf at +-1, nan outside)", [](double x, const Params&) { return std::atanh(x); }),
      float_unary("floor", "floor(x)", [](double x, const Params&) { return std::floor(x); }),
      float_unary("ceil", "ceil(x)", [](double x, const Params&) { return std::ceil(x); }),
      float_unary("round", "x rounded to the nearest integer, halves to even",
                  [](double x, const Params&) { return std::nearbyint(x); }),
      {"sign", "-1, 0 or 1 by the sign of x (nan stays nan)", DTypeSet::kNumeric,
       [](double x, const Params&) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; },
       [](int64_t x, const Params&) { return int64_t{x > 0 ? 1 : x < 0 ? -1 : 0}; }, {}, nullptr},
      float_unary("softplus", "log(1 + exp(x))", [](double x, const Params&) { return softplus(x); }),
      float_unary("softsign", "x / (1 + |x|)", [](double x, const Params&) { return x / (1.0 + std::fabs(x)); }),
      float_unary("mish", "x * tanh(softplus(x))", [](double x, const Params&) { return x * std::tanh(softplus(x)); }),
      {"elu", "x >= 0 ? x : alpha * (exp(x) - 1)", DTypeSet::kFloat,
       [](double x, const Params& p) { return x >= 0 ? x : p.a * std::expm1(x); }, nullptr,
       {float_attr("alpha", 1.0, "scale of the negative part")}, alpha_param},
      {"selu", "gamma * (x > 0 ? x : alpha * (exp(x) - 1))", DTypeSet::kFloat,
       [](double x, const Params& p) { return p.b * (x > 0 ? x : p.a * std::expm1(x)); }, nullptr,
       {float_attr("alpha", 1.67326319217681884765625, "scale of the negative part"),
        float_attr("gamma", 1.05070102214813232421875, "scale of the result")},
       [](const Attrs& attrs) { return Params{attrs.get_float("alpha"), attrs.get_float("gamma"), false}; }},
      {"celu", "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))", DTypeSet::kFloat,
       [](double x, const Params& p) { return std::max(0.0, x) + std::min(0.0, p.a * std::expm1(x / p.a)); }, nullptr,
       {float_attr("alpha", 1.0, "scale (non-zero)")}, alpha_param},
      {"thresholded_relu", "x > alpha ? x : 0", DTypeSet::kFloat,
       [](double x, const Params& p) { return x > p.a ? x : 0.0; }, nullptr,
       {float_attr("alpha", 1.0, "threshold")}, alpha_param},
      {"shrink", "x < -lambd ? x + bias : x > lambd ? x - bias : 0", DTypeSet::kFloat,
       [](double x, const Params& p) { return x < -p.a ? x + p.b : x > p.a ? x - p.b : 0.0; }, nullptr,
       {float_attr("lambd", 0.5, "half width of the zero band"), float_attr("bias", 0.0, "shift toward zero")},
       [](const Attrs& attrs) { return Params{attrs.get_float("lambd"), attrs.get_float("bias"), false}; }},
      {"swish", "x * sigmoid(alpha * x)", DTypeSet::kFloat,
       [](double x, const Params& p) { return x / (1.0 + std::exp(-p.a * x)); }, nullptr,
       {float_attr("alpha", 1.0, "slope inside the sigmoid")}, alpha_param},
  };
}

const UnaryDef& find_def(const char* name) {
  static const std::vector<UnaryDef> extra = math_defs();
  for (const auto& d : extra) {
    if (std::string(d.name) == name) return d;
  }
  for (const auto& d : unary_defs()) {
    if (std::string(d.name) == name) return d;
  }
  KILN_IFAIL() << "no unary definition '" << name << "'";
}

NDArray apply_unary(const UnaryDef& def, const NDArray& x, const Attrs& attrs) {
  const Params p = def.params ? def.params(attrs) : Params{};
  NDArray out = NDArray::empty(x.dtype(), x.shape());
  visit_dtype(x.dtype(), [&]<typename T>() {
    auto in = x.data<T>();
    auto o = out.mutable_data<T>();
    if constexpr (kIsFloatStorage<T>) {
      for (size_t i = 0; i < in.size(); ++i) o[i] = from_double<T>(def.f(to_double(in[i]), p));
    } else if constexpr (kIsIntStorage<T>) {
      KILN_ICHECK(def.fi != nullptr) << def.name << " on " << dtype_name(x.dtype());
      for (size_t i = 0; i < in.size(); ++i) o[i] = from_int64<T>(def.fi(to_int64(in[i]), p));
    } else {
      KILN_IFAIL() << def.name << " on bool";
    }
  });
  return out;
}

OpDef make_unary(const char* name) {
  const UnaryDef& def = find_def(name);
  OpDef d;
  d.name = def.name;
  d.doc = def.doc;
  d.attrs = def.attrs;
  d.pattern = OpPattern::kElemwise;
  d.infer_type = [&def](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype(def.name, 0, "x", in[0].dtype, def.dtypes);
    if (std::string(def.name) == "gelu") {
      const std::string& approx = attrs.get_string("approximate");
      if (approx != "none" && approx != "tanh") {
        fail_attr("gelu", "approximate", "is \"" + approx + "\"", "expected \"none\" or \"tanh\"");
      }
    }
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [&def](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>&) {
    return std::vector<NDArray>{apply_unary(def, in[0], attrs)};
  };
  return with_arity_check(std::move(d));
}

}  // namespace

KILN_REGISTER_OP(relu) { return make_unary("relu"); }
KILN_REGISTER_OP(sigmoid) { return make_unary("sigmoid"); }
KILN_REGISTER_OP(tanh) { return make_unary("tanh"); }
KILN_REGISTER_OP(erf) { return make_unary("erf"); }
KILN_REGISTER_OP(exp) { return make_unary("exp"); }
KILN_REGISTER_OP(log) { return make_unary("log"); }
KILN_REGISTER_OP(sqrt) { return make_unary("sqrt"); }
KILN_REGISTER_OP(neg) { return make_unary("neg"); }
KILN_REGISTER_OP(abs) { return make_unary("abs"); }
KILN_REGISTER_OP(reciprocal) { return make_unary("reciprocal"); }
KILN_REGISTER_OP(hard_swish) { return make_unary("hard_swish"); }
KILN_REGISTER_OP(leaky_relu) { return make_unary("leaky_relu"); }
KILN_REGISTER_OP(hard_sigmoid) { return make_unary("hard_sigmoid"); }
KILN_REGISTER_OP(clip) { return make_unary("clip"); }
KILN_REGISTER_OP(gelu) { return make_unary("gelu"); }
KILN_REGISTER_OP(sin) { return make_unary("sin"); }
KILN_REGISTER_OP(cos) { return make_unary("cos"); }
KILN_REGISTER_OP(tan) { return make_unary("tan"); }
KILN_REGISTER_OP(asin) { return make_unary("asin"); }
KILN_REGISTER_OP(acos) { return make_unary("acos"); }
KILN_REGISTER_OP(atan) { return make_unary("atan"); }
KILN_REGISTER_OP(sinh) { return make_unary("sinh"); }
KILN_REGISTER_OP(cosh) { return make_unary("cosh"); }
KILN_REGISTER_OP(asinh) { return make_unary("asinh"); }
KILN_REGISTER_OP(acosh) { return make_unary("acosh"); }
KILN_REGISTER_OP(atanh) { return make_unary("atanh"); }
KILN_REGISTER_OP(floor) { return make_unary("floor"); }
KILN_REGISTER_OP(ceil) { return make_unary("ceil"); }
KILN_REGISTER_OP(round) { return make_unary("round"); }
KILN_REGISTER_OP(sign) { return make_unary("sign"); }
KILN_REGISTER_OP(softplus) { return make_unary("softplus"); }
KILN_REGISTER_OP(softsign) { return make_unary("softsign"); }
KILN_REGISTER_OP(mish) { return make_unary("mish"); }
KILN_REGISTER_OP(elu) { return make_unary("elu"); }
KILN_REGISTER_OP(selu) { return make_unary("selu"); }
KILN_REGISTER_OP(celu) { return make_unary("celu"); }
KILN_REGISTER_OP(thresholded_relu) { return make_unary("thresholded_relu"); }
KILN_REGISTER_OP(shrink) { return make_unary("shrink"); }
KILN_REGISTER_OP(swish) { return make_unary("swish"); }

}  // namespace kiln::ir::ops
