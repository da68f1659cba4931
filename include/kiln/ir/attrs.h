// Operator attributes: a small typed dictionary. Each operator declares the attributes it takes
// (name, kind, default) in its OpDef (op.h); the registry validates a node's attributes against
// that schema once, so operator code reads them with typed getters and never parses strings.
#ifndef KILN_IR_ATTRS_H_
#define KILN_IR_ATTRS_H_

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "kiln/ir/tensor_type.h"

namespace kiln::ir {

enum class AttrKind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kDType, kShape };

const char* attr_kind_name(AttrKind kind);

// A value of one attribute. kDType is stored as the DType enum; kShape is a list of dimensions,
// static or symbolic (a reshape's target shape). Where a kShape is declared, a kInts value is
// accepted (and converted) by the registry.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, DType, Shape>;

AttrKind attr_value_kind(const AttrValue& value);
// Text form, e.g. `3`, `1.5`, `"nearest"`, `[2, 2]`, `[0.5, 1]`, `f32`, `[batch, seq * 12, 64]`.
std::string attr_value_to_string(const AttrValue& value);

class Attrs {
 public:
  Attrs() = default;

  Attrs& set(const std::string& name, AttrValue value) {
    values_[name] = std::move(value);
    return *this;
  }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const AttrValue* find(const std::string& name) const;

  // Typed getters. An absent attribute or a kind mismatch is an InternalError (the registry has
  // already validated and filled defaults by the time operator code runs).
  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  const std::vector<double>& get_floats(const std::string& name) const;
  DType get_dtype(const std::string& name) const;
  const Shape& get_shape(const std::string& name) const;

  // Sorted by name.
  const std::map<std::string, AttrValue>& values() const { return values_; }
  bool operator==(const Attrs&) const = default;

 private:
  std::map<std::string, AttrValue> values_;
};

}  // namespace kiln::ir

#endif  // KILN_IR_ATTRS_H_
