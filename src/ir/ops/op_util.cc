#include "ir/ops/op_util.h"

#include <algorithm>

namespace kiln::ir::ops {

std::string input_subject(const std::string& op, int index, const std::string& name) {
  return op + " input " + std::to_string(index) + " (" + name + ")";
}

std::string attr_subject(const std::string& op, const std::string& attr) { return op + " attribute '" + attr + "'"; }

void fail_input(const std::string& op, int index, const std::string& name, const std::string& reason,
                const std::string& hint) {
  throw UserError(UserErrorKind::kInvalidArgument, input_subject(op, index, name), reason, hint);
}

void fail_attr(const std::string& op, const std::string& attr, const std::string& reason, const std::string& hint) {
  throw UserError(UserErrorKind::kInvalidArgument, attr_subject(op, attr), reason, hint);
}

void fail_unsupported_dtype(const std::string& op, int index, const std::string& name, DType dtype,
                            const std::string& allowed) {
  throw UserError(UserErrorKind::kUnsupported, input_subject(op, index, name),
                  std::string("element type ") + dtype_name(dtype) + " is not supported", "supported: " + allowed);
}

OpDef with_arity_check(OpDef def) {
  InferTypeFn infer = std::move(def.infer_type);
  const std::string name = def.name;
  const int lo = def.min_inputs, hi = def.max_inputs;
  def.infer_type = [infer, name, lo, hi](const std::vector<TensorType>& in, const Attrs& attrs) {
    const int n = static_cast<int>(in.size());
    if (n < lo || (hi >= 0 && n > hi)) {
      const std::string expected = hi < 0   ? "at least " + std::to_string(lo)
                                   : lo == hi ? std::to_string(lo)
                                              : std::to_string(lo) + " to " + std::to_string(hi);
      throw UserError(UserErrorKind::kInvalidArgument, "operator '" + name + "'",
                      "takes " + expected + " input(s), got " + std::to_string(n));
    }
    return infer(in, attrs);
  };
  return def;
}

bool dtype_in(DType dtype, DTypeSet set) {
  switch (set) {
    case DTypeSet::kFloat: return is_float(dtype);
    case DTypeSet::kSignedNumeric: return is_float(dtype) || dtype == DType::kI8 || dtype == DType::kI16 ||
                                          dtype == DType::kI32 || dtype == DType::kI64;
    case DTypeSet::kNumeric: return dtype != DType::kBool;
    case DTypeSet::kAny: return true;
    case DTypeSet::kIndex: return dtype == DType::kI32 || dtype == DType::kI64;
  }
  return false;
}

const char* dtype_set_name(DTypeSet set) {
  switch (set) {
    case DTypeSet::kFloat: return "f32, f64, f16, bf16";
    case DTypeSet::kSignedNumeric: return "f32, f64, f16, bf16, i8, i16, i32, i64";
    case DTypeSet::kNumeric: return "f32, f64, f16, bf16, i8, u8, i16, i32, i64, u16, u32, u64";
    case DTypeSet::kAny: return "any element type";
    case DTypeSet::kIndex: return "i32, i64";
  }
  return "?";
}

void require_dtype(const std::string& op, int index, const std::string& name, DType dtype, DTypeSet set) {
  if (!dtype_in(dtype, set)) fail_unsupported_dtype(op, index, name, dtype, dtype_set_name(set));
}

void require_rank(const std::string& op, int index, const std::string& name, const TensorType& type, int rank,
                  const std::string& layout) {
  if (type.rank() != rank) {
    fail_input(op, index, name,
               "has shape " + shape_to_string(type.shape) + " (rank " + std::to_string(type.rank()) +
                   "), expected rank " + std::to_string(rank) + " " + layout);
  }
}

void require_same_dtype(const std::string& op, const std::vector<TensorType>& inputs,
                        const std::vector<std::string>& names) {
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].dtype != inputs[0].dtype) {
      const std::string& n = i < names.size() ? names[i] : names.back();
      fail_input(op, static_cast<int>(i), n,
                 std::string("has element type ") + dtype_name(inputs[i].dtype) + ", but input 0 (" + names[0] +
                     ") has " + dtype_name(inputs[0].dtype),
                 "insert a cast so the element types match");
    }
  }
}

const std::vector<int64_t>& ints_of_size(const std::string& op, const Attrs& attrs, const std::string& name,
                                         size_t size) {
  const auto& v = attrs.get_ints(name);
  if (v.size() != size) {
    fail_attr(op, name, "has " + std::to_string(v.size()) + " values, expected " + std::to_string(size));
  }
  return v;
}

void require_all_at_least(const std::string& op, const std::string& name, const std::vector<int64_t>& values,
                          int64_t min) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < min) {
      fail_attr(op, name,
                "value " + std::to_string(values[i]) + " at position " + std::to_string(i) + " is below " +
                    std::to_string(min));
    }
  }
}

int64_t axis_attr(const std::string& op, const Attrs& attrs, const std::string& name, int rank) {
  const int64_t axis = attrs.get_int(name);
  if (axis < 0 || axis >= rank) {
    fail_attr(op, name, "is " + std::to_string(axis) + ", expected an axis in [0, " + std::to_string(rank) + ")",
              "negative axes are resolved by the importer; a graph must give a non-negative axis");
  }
  return axis;
}

Shape broadcast_shapes(const std::string& op, const std::vector<Shape>& shapes, const std::vector<std::string>& names) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  std::vector<int> owner(rank, -1);  // which input set out[d] (for the error message)
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    for (size_t i = 0; i < s.size(); ++i) {
      const size_t d = rank - s.size() + i;
      if (s[i] == 1) continue;
      if (out[d] == 1) {
        out[d] = s[i];
        owner[d] = static_cast<int>(k);
      } else if (!(out[d] == s[i])) {
        const int o = owner[d];
        const std::string subject = op + " inputs " + std::to_string(o) + " (" + names[o] + ") and " +
                                    std::to_string(k) + " (" + names[k] + ")";
        const std::string dims = " (dimension " + out[d].to_string() + " vs " + s[i].to_string() + ")";
        if (out[d].is_static() && s[i].is_static()) {
          throw UserError(UserErrorKind::kInvalidArgument, subject,
                          "shapes " + shape_to_string(shapes[o]) + " and " + shape_to_string(s) + " do not broadcast" + dims,
                          "numpy broadcasting needs each pair of trailing dimensions to be equal or 1");
        }
        // A symbolic dimension against a different one: equal, or one of them 1, only at run time.
        throw UserError(UserErrorKind::kUnsupported, subject,
                        "shapes " + shape_to_string(shapes[o]) + " and " + shape_to_string(s) +
                            " broadcast only if their sizes turn out equal (or 1) at run time" + dims +
                            "; Kiln needs broadcast dimensions it can prove equal",
                        "give both dimensions one size variable, or pin them with --input-shape");
      }
    }
  }
  return out;
}

void require_same_dim(const std::string& subject, const Dim& a, const Dim& b, const std::string& what) {
  if (a == b) return;
  const std::string dims = what + " are " + a.to_string() + " and " + b.to_string();
  if (dims_provably_differ(a, b)) throw UserError(UserErrorKind::kInvalidArgument, subject, dims + ", which differ");
  throw UserError(UserErrorKind::kUnsupported, subject,
                  dims + ", which Kiln cannot prove equal (only run time could tell)",
                  "give both dimensions one size variable, or pin them with --input-shape");
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const Dim& f = from[from.size() - 1 - i];
    if (!(f == 1) && !(f == to[to.size() - 1 - i])) return false;
  }
  return true;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out_shape) {
  KILN_ICHECK(shape.size() <= out_shape.size()) << shape_to_string(shape) << " vs " << shape_to_string(out_shape);
  const std::vector<int64_t> own = contiguous_strides(shape);
  std::vector<int64_t> strides(out_shape.size(), 0);
  const size_t lead = out_shape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    KILN_ICHECK(shape[i] == 1 || shape[i] == out_shape[lead + i])
        << shape_to_string(shape) << " does not broadcast to " << shape_to_string(out_shape);
    strides[lead + i] = shape[i] == 1 ? 0 : own[i];
  }
  return strides;
}

AxisSplit split_at_axis(const Shape& shape, int axis) {
  AxisSplit s;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d < axis) s.outer *= shape[d];
    if (d == axis) s.size = shape[d];
    if (d > axis) s.inner *= shape[d];
  }
  return s;
}

std::vector<double> to_doubles(const NDArray& a) {
  std::vector<double> out(static_cast<size_t>(a.numel()));
  for (int64_t i = 0; i < a.numel(); ++i) out[i] = a.get_as_double(i);
  return out;
}

}  // namespace kiln::ir::ops
