// numpy .npy files <-> NDArray.
//
// Reading accepts format versions 1.0, 2.0 and 3.0, the descrs of every Kiln dtype in either byte
// order ('<f4', '>f4', '=f4', '|u1', '|b1', ..., with 'f2' as f16 and 'V2' as bf16, since numpy has
// no bfloat16), and Fortran-order files, which are transposed into C order (a copy). Big-endian
// data is byte-swapped. Anything else (complex, object, strings, unsigned types wider than a byte,
// structured dtypes) is UserError(kUnsupported); a malformed or truncated file is
// UserError(kParse) naming the file and what is wrong.
//
// Writing produces version 1.0 files (2.0 when the header needs it) in C order, little-endian,
// which numpy.load reads; bf16 is written as descr '<V2' (numpy loads it as raw 2-byte voids).
// Reading maps the file into an NDArray Kiln owns (one copy of the data).
#ifndef KILN_IR_NPY_H_
#define KILN_IR_NPY_H_

#include <string>
#include <string_view>

#include "kiln/ir/ndarray.h"

namespace kiln::ir {

// Reads `path`. Throws UserError(kNotFound/kIO) when it cannot be read, kParse/kUnsupported as above.
NDArray read_npy(const std::string& path);
// Parses the bytes of a .npy file; `name` is used in error messages.
NDArray parse_npy(std::string_view bytes, const std::string& name);

// Writes `array` to `path`. Throws UserError(kIO) when the file cannot be written.
void write_npy(const std::string& path, const NDArray& array);
// The bytes of a .npy file holding `array`.
std::string encode_npy(const NDArray& array);

}  // namespace kiln::ir

#endif  // KILN_IR_NPY_H_
