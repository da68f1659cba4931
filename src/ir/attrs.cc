#include "kiln/ir/attrs.h"

#include <cstdio>

#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

template <typename T>
const T& get_as(const Attrs& attrs, const std::string& name, AttrKind kind) {
  const AttrValue* v = attrs.find(name);
  KILN_ICHECK(v != nullptr) << "attribute '" << name << "' is missing";
  const T* p = std::get_if<T>(v);
  KILN_ICHECK(p != nullptr) << "attribute '" << name << "' is " << attr_kind_name(attr_value_kind(*v))
                            << ", not " << attr_kind_name(kind);
  return *p;
}

std::string format_double(double d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  return buf;
}

}  // namespace

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
    case AttrKind::kDType: return "dtype";
    case AttrKind::kShape: return "shape";
  }
  return "?";
}

AttrKind attr_value_kind(const AttrValue& value) { return static_cast<AttrKind>(value.index()); }

std::string attr_value_to_string(const AttrValue& value) {
  switch (attr_value_kind(value)) {
    case AttrKind::kInt: return std::to_string(std::get<int64_t>(value));
    case AttrKind::kFloat: return format_double(std::get<double>(value));
    case AttrKind::kString: {
      std::string out = "\"";
      for (char c : std::get<std::string>(value)) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      return out + "\"";
    }
    case AttrKind::kInts: {
      std::string out = "[";
      const auto& v = std::get<std::vector<int64_t>>(value);
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
      return out + "]";
    }
    case AttrKind::kFloats: {
      std::string out = "[";
      const auto& v = std::get<std::vector<double>>(value);
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + format_double(v[i]);
      return out + "]";
    }
    case AttrKind::kDType: return dtype_name(std::get<DType>(value));
    case AttrKind::kShape: return shape_to_string(std::get<Shape>(value));
  }
  KILN_IFAIL() << "unknown attribute kind";
}

const AttrValue* Attrs::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

int64_t Attrs::get_int(const std::string& name) const { return get_as<int64_t>(*this, name, AttrKind::kInt); }
double Attrs::get_float(const std::string& name) const { return get_as<double>(*this, name, AttrKind::kFloat); }
const std::string& Attrs::get_string(const std::string& name) const {
  return get_as<std::string>(*this, name, AttrKind::kString);
}
const std::vector<int64_t>& Attrs::get_ints(const std::string& name) const {
  return get_as<std::vector<int64_t>>(*this, name, AttrKind::kInts);
}
const std::vector<double>& Attrs::get_floats(const std::string& name) const {
  return get_as<std::vector<double>>(*this, name, AttrKind::kFloats);
}
DType Attrs::get_dtype(const std::string& name) const { return get_as<DType>(*this, name, AttrKind::kDType); }
const Shape& Attrs::get_shape(const std::string& name) const { return get_as<Shape>(*this, name, AttrKind::kShape); }

}  // namespace kiln::ir
