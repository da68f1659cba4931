#include "kiln/ir/op.h"

#include <algorithm>

#include "kiln/support/error.h"

namespace kiln::ir {

const char* op_pattern_name(OpPattern pattern) {
  switch (pattern) {
    case OpPattern::kElemwise: return "elemwise";
    case OpPattern::kBroadcast: return "broadcast";
    case OpPattern::kInjective: return "injective";
    case OpPattern::kCommReduce: return "comm_reduce";
    case OpPattern::kOutEWiseFusable: return "out_ewise_fusable";
    case OpPattern::kOpaque: return "opaque";
  }
  return "?";
}

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::add(OpDef def) {
  KILN_ICHECK(!def.name.empty()) << "operator without a name";
  KILN_ICHECK(find(def.name) == nullptr) << "operator '" << def.name << "' registered twice";
  KILN_ICHECK(def.infer_type) << "operator '" << def.name << "' has no type inference";
  ops_.push_back(std::move(def));
}

const OpDef* OpRegistry::find(std::string_view name) const {
  for (const auto& op : ops_) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& op : ops_) out.push_back(op.name);
  std::sort(out.begin(), out.end());
  return out;
}

const OpDef& OpRegistry::get(std::string_view name) const {
  if (const OpDef* op = find(name)) return *op;
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw UserError(UserErrorKind::kNotFound, "operator '" + std::string(name) + "'",
                  "no such operator in Kiln's graph IR", "known operators: " + known);
}

Attrs OpRegistry::validate_attrs(const OpDef& op, const Attrs& attrs) const {
  Attrs out;
  for (const auto& [name, value] : attrs.values()) {
    auto spec = std::find_if(op.attrs.begin(), op.attrs.end(), [&](const AttrSpec& s) { return s.name == name; });
    if (spec == op.attrs.end()) {
      std::string known;
      for (const auto& s : op.attrs) known += (known.empty() ? "" : ", ") + s.name;
      throw UserError(UserErrorKind::kInvalidArgument, "operator '" + op.name + "'",
                      "unknown attribute '" + name + "'", known.empty() ? "it takes no attributes" : "its attributes: " + known);
    }
    AttrValue v = value;
    // An int literal is accepted where a float is declared (e.g. alpha=1).
    if (spec->kind == AttrKind::kFloat && attr_value_kind(v) == AttrKind::kInt) v = static_cast<double>(std::get<int64_t>(v));
    if (spec->kind == AttrKind::kFloats && attr_value_kind(v) == AttrKind::kInts) {
      const auto& ints = std::get<std::vector<int64_t>>(v);
      v = std::vector<double>(ints.begin(), ints.end());
    }
    // A shape where a list of ints is declared (code that builds attributes from a value's shape):
    // its static sizes.
    if (spec->kind == AttrKind::kInts && attr_value_kind(v) == AttrKind::kShape) {
      const Shape& dims = std::get<Shape>(v);
      if (!dims.is_static()) {
        throw UserError(UserErrorKind::kUnsupported, "operator '" + op.name + "'",
                        "attribute '" + name + "' is the symbolic shape " + shape_to_string(dims) +
                            "; this attribute takes static sizes only",
                        "pin the model's symbolic dimensions with --input-shape");
      }
      v = static_cast<std::vector<int64_t>>(dims);
    }
    if (spec->kind == AttrKind::kShape && attr_value_kind(v) == AttrKind::kInts) {
      const auto& ints = std::get<std::vector<int64_t>>(v);
      for (int64_t d : ints) {
        if (d < 0) {
          throw UserError(UserErrorKind::kInvalidArgument, "operator '" + op.name + "'",
                          "attribute '" + name + "' has the negative dimension " + std::to_string(d));
        }
      }
      v = Shape(ints);
    }
    if (attr_value_kind(v) != spec->kind) {
      throw UserError(UserErrorKind::kInvalidArgument, "operator '" + op.name + "'",
                      "attribute '" + name + "' is " + attr_kind_name(attr_value_kind(v)) + ", expected " +
                          attr_kind_name(spec->kind));
    }
    out.set(name, std::move(v));
  }
  for (const auto& spec : op.attrs) {
    if (out.has(spec.name)) continue;
    if (!spec.default_value) {
      throw UserError(UserErrorKind::kInvalidArgument, "operator '" + op.name + "'",
                      "required attribute '" + spec.name + "' is missing");
    }
    out.set(spec.name, *spec.default_value);
  }
  return out;
}

}  // namespace kiln::ir
