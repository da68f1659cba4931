// numpy .npz files: several named arrays in one ZIP archive, each a .npy member ("NAME.npy"),
// which numpy.load opens as a mapping from NAME to array (what `numpy.savez` writes).
//
// Members are stored, not compressed (numpy.savez's default), with their CRC-32; names are
// written as UTF-8 (ZIP's language-encoding flag). The archive is a plain ZIP (no ZIP64), so a
// member or the whole file of 4 GiB or more is UserError(kUnsupported), as are two members with
// one name. Times are the fixed DOS date 1980-01-01, so equal arrays give byte-identical files.
#ifndef KILN_IR_NPZ_H_
#define KILN_IR_NPZ_H_

#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/ndarray.h"

namespace kiln::ir {

using NamedArrays = std::vector<std::pair<std::string, NDArray>>;

// The bytes of an .npz archive holding `arrays` in order.
std::string encode_npz(const NamedArrays& arrays);
// Writes encode_npz(arrays) to `path`. Throws UserError(kIO) when the file cannot be written.
void write_npz(const std::string& path, const NamedArrays& arrays);

}  // namespace kiln::ir

#endif  // KILN_IR_NPZ_H_
