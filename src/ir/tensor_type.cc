// Shape and TensorType (see kiln/ir/tensor_type.h).
#include "kiln/ir/tensor_type.h"

namespace kiln::ir {

Shape::Shape(const std::vector<int64_t>& dims) : std::vector<Dim>(dims.begin(), dims.end()) {}

std::vector<int64_t> static_sizes(const Shape& shape) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) out.push_back(static_cast<int64_t>(d));
  return out;
}

bool Shape::is_static() const {
  for (const Dim& d : *this) {
    if (d.is_symbolic()) return false;
  }
  return true;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (const Dim& d : shape) n *= static_cast<int64_t>(d);
  return n;
}

Dim shape_numel_dim(const Shape& shape) {
  Dim n(1);
  for (const Dim& d : shape) n = dim_mul(n, d);
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].to_string();
  }
  return s + "]";
}

std::string TensorType::to_string() const { return std::string(dtype_name(dtype)) + shape_to_string(shape); }

}  // namespace kiln::ir
