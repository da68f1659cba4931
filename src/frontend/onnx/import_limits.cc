// Resource limits of the ONNX importer (see import_limits.h).
#include "import_limits.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "kiln/support/error.h"

namespace kiln::frontend::onnx_import {

uint64_t max_tensor_bytes() {
  if (const char* env = std::getenv("KILN_MAX_TENSOR_BYTES")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return v;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return uint64_t{1} << 40;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

TensorSize checked_tensor_size(ir::DType dtype, const ir::Shape& shape, const std::string& subject) {
  const uint64_t limit = max_tensor_bytes();
  const uint64_t elem = ir::dtype_size(dtype);
  uint64_t count = 1;
  bool too_big = false, empty = false;
  for (int64_t d : shape) {
    if (d < 0) {
      throw UserError(UserErrorKind::kParse, subject, "has a negative dimension in shape " + ir::shape_to_string(shape),
                      "the file is corrupt");
    }
    if (d == 0) empty = true;
    else if (count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) too_big = true;
    else count *= static_cast<uint64_t>(d);
  }
  if (empty && !too_big) return {};  // (dimensions that overflow beside a 0 are refused too)
  if (too_big || count > limit / std::max<uint64_t>(elem, 1)) {
    throw UserError(UserErrorKind::kInvalidArgument, subject,
                    "shape " + ir::shape_to_string(shape) + " needs " +
                        (too_big ? std::string("more than 2^64 elements") : std::to_string(count * elem) + " bytes") +
                        ", more than one tensor may take (" + std::to_string(limit) + " bytes, the machine's memory)",
                    "the file is corrupt, or set KILN_MAX_TENSOR_BYTES if this machine should try");
  }
  return {static_cast<int64_t>(count), static_cast<size_t>(count * elem)};
}

int64_t checked_dimension(double value, const std::string& subject) {
  if (!(value >= 0.0 && value <= 0x1p62)) {
    throw UserError(UserErrorKind::kInvalidArgument, subject,
                    "computes a dimension of " + std::to_string(value) + ", outside 0..2^62", "the file is corrupt");
  }
  return static_cast<int64_t>(value);
}

int64_t checked_integer_element(const ir::NDArray& a, int64_t k, const std::string& subject) {
  if (a.dtype() == ir::DType::kI64) return a.data<int64_t>()[k];
  const double value = a.get_as_double(k);
  if (!(value >= -0x1p63 && value < 0x1p63)) {
    throw UserError(UserErrorKind::kInvalidArgument, subject,
                    "holds " + std::to_string(value) + ", outside the int64 range", "the file is corrupt");
  }
  return static_cast<int64_t>(value);
}

}  // namespace kiln::frontend::onnx_import
