// numpy dtype <-> DLPack dtype <-> Kiln dtype, for inputs, outputs and bound constants.
// Anything numpy or Kiln cannot represent is a UserError naming the tensor, never a silent cast.
#include <string>

#include "binding.h"
#include "kiln/driver/artifact.h"
#include "kiln/support/error.h"

namespace kiln::python {
namespace {

// DLPack's kDLBool (6, DLPack >= 0.8; Debian's header predates it), as the artifact writer uses.
constexpr uint8_t kDLBoolCode = 6;

struct Row {
  DLDataType dl;
  const char* numpy_char;  // numpy's type character
  const char* name;
};

const Row kRows[] = {
    {{kDLFloat, 32, 1}, "f", "float32"}, {{kDLFloat, 64, 1}, "d", "float64"}, {{kDLFloat, 16, 1}, "e", "float16"},
    {{kDLInt, 8, 1}, "b", "int8"},       {{kDLInt, 16, 1}, "h", "int16"},     {{kDLInt, 32, 1}, "i", "int32"},
    {{kDLInt, 64, 1}, "q", "int64"},     {{kDLUInt, 8, 1}, "B", "uint8"},     {{kDLUInt, 16, 1}, "H", "uint16"},
    {{kDLUInt, 32, 1}, "I", "uint32"},   {{kDLUInt, 64, 1}, "Q", "uint64"},   {{kDLBoolCode, 8, 1}, "?", "bool"},
};

bool same(const DLDataType& a, const DLDataType& b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

}  // namespace

std::string dtype_name(const DLDataType& dtype) {
  for (const Row& r : kRows) {
    if (same(r.dl, dtype)) return r.name;
  }
  if (dtype.code == kDLBfloat && dtype.bits == 16) return "bfloat16";
  return "dlpack(code " + std::to_string(dtype.code) + ", bits " + std::to_string(dtype.bits) + ")";
}

DLDataType dl_dtype_of(const py::dtype& dtype, const std::string& what) {
  const char kind = dtype.kind();
  const auto size = static_cast<uint8_t>(dtype.itemsize() * 8);
  const bool native = dtype.attr("isnative").cast<bool>();
  DLDataType dl{0, size, 1};
  if (kind == 'f') dl.code = kDLFloat;
  else if (kind == 'i') dl.code = kDLInt;
  else if (kind == 'u') dl.code = kDLUInt;
  else if (kind == 'b') dl.code = kDLBoolCode;
  for (const Row& r : kRows) {
    if (native && (kind == 'f' || kind == 'i' || kind == 'u' || kind == 'b') && same(r.dl, dl)) return dl;
  }
  throw UserError(UserErrorKind::kUnsupported, what,
                  "numpy dtype " + py::str(static_cast<const py::object&>(dtype)).cast<std::string>() +
                      " has no Kiln equivalent",
                  "use one of float16/32/64, int8/16/32/64, uint8/16/32/64, bool in native byte order");
}

py::dtype numpy_dtype_of(const DLDataType& dtype, const std::string& what) {
  for (const Row& r : kRows) {
    if (same(r.dl, dtype)) return py::dtype(r.numpy_char);
  }
  throw UserError(UserErrorKind::kUnsupported, what, "its dtype " + dtype_name(dtype) + " has no numpy equivalent",
                  "compile the model with that tensor cast to float32 (e.g. a Cast node in the ONNX model)");
}

ir::DType ir_dtype_of(const DLDataType& dtype, const std::string& what) {
  for (ir::DType d : {ir::DType::kF32, ir::DType::kF64, ir::DType::kF16, ir::DType::kBF16, ir::DType::kI8,
                      ir::DType::kU8, ir::DType::kI16, ir::DType::kI32, ir::DType::kI64, ir::DType::kBool,
                      ir::DType::kU16, ir::DType::kU32, ir::DType::kU64}) {
    if (same(driver::to_dl_dtype(d), dtype)) return d;
  }
  throw UserError(UserErrorKind::kUnsupported, what, "dtype " + dtype_name(dtype) + " has no Kiln equivalent");
}

}  // namespace kiln::python
