// SizeVariables (see size_variables.h) and `--dim NAME=LO..HI` (kiln/frontend/onnx.h).
#include "frontend/onnx/size_variables.h"

#include <cctype>

#include "kiln/frontend/onnx.h"
#include "kiln/support/error.h"

namespace kiln::frontend {
namespace onnx_import {

std::string size_variable_name(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "d_" + out;
  return out;
}

ir::Dim SizeVariables::dim(const std::string& input, int axis, const std::string& dim_param) {
  const std::string key = dim_param.empty() ? input + "_d" + std::to_string(axis) : dim_param;
  auto it = by_key_.find(key);
  if (it != by_key_.end()) return ir::Dim::of(it->second);
  // Distinct keys may clean up to one name (`a-b`, `a_b`): number the later ones.
  std::string name = size_variable_name(key);
  for (int n = 1;; ++n) {
    bool taken = false;
    for (const ir::DimVar& v : order_) taken = taken || v.name() == name;
    if (!taken) break;
    name = size_variable_name(key) + "_" + std::to_string(n);
  }
  int64_t lo = ir::kDefaultDimMin, hi = ir::kDefaultDimMax;
  if (auto r = ranges_.find(name); r != ranges_.end()) std::tie(lo, hi) = r->second;
  ir::DimVar v = ir::make_dim_var(name, lo, hi);
  by_key_[key] = v;
  order_.push_back(v);
  return ir::Dim::of(v);
}

std::vector<ir::DimVar> SizeVariables::finish() const {
  for (const auto& [name, range] : ranges_) {
    bool used = false;
    for (const ir::DimVar& v : order_) used = used || v.name() == name;
    if (!used) {
      std::string names;
      for (const ir::DimVar& v : order_) names += (names.empty() ? "" : ", ") + v.name();
      throw UserError(UserErrorKind::kNotFound, "--dim " + name, "no input dimension of the model is named '" + name + "'",
                      "the model's size variables: " + (names.empty() ? std::string("(none)") : names));
    }
  }
  return order_;
}

}  // namespace onnx_import

void parse_dim_option(const std::string& spec, std::map<std::string, std::pair<int64_t, int64_t>>* out) {
  const std::string hint = "write NAME=LO..HI or NAME=N, e.g. --dim seq=1..512";
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw UserError(UserErrorKind::kInvalidArgument, "--dim " + spec, "expected NAME=LO..HI", hint);
  }
  const std::string name = spec.substr(0, eq), range = spec.substr(eq + 1);
  if (!ir::is_dim_var_name(name)) {
    throw UserError(UserErrorKind::kInvalidArgument, "--dim " + spec, "'" + name + "' is not a size variable name",
                    "size variables are named with letters, digits and '_' (kiln ir --dynamic lists them)");
  }
  auto parse = [&](const std::string& text) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (text.empty() || used != text.size() || v < 0) {
      throw UserError(UserErrorKind::kInvalidArgument, "--dim " + spec, "'" + text + "' is not a non-negative integer", hint);
    }
    return static_cast<int64_t>(v);
  };
  const auto dots = range.find("..");
  const int64_t lo = parse(dots == std::string::npos ? range : range.substr(0, dots));
  const int64_t hi = dots == std::string::npos ? lo : parse(range.substr(dots + 2));
  if (lo > hi) throw UserError(UserErrorKind::kInvalidArgument, "--dim " + spec, "the range is empty (LO > HI)", hint);
  if (out->count(name)) throw UserError(UserErrorKind::kInvalidArgument, "--dim " + spec, "'" + name + "' given twice");
  (*out)[name] = {lo, hi};
}

}  // namespace kiln::frontend
