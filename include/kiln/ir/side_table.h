// Storing the text form's side table (constant name -> NDArray, see text.h) as files, so that
// `kiln ir MODEL --side-table DIR` output parses back to the same graph: DIR/index.tsv lists
// `name<TAB>file` per constant (names escaped: \t, \n and \\), each file a .npy in DIR.
#ifndef KILN_IR_SIDE_TABLE_H_
#define KILN_IR_SIDE_TABLE_H_

#include <map>
#include <string>

#include "kiln/ir/ndarray.h"

namespace kiln::ir {

// Creates DIR when needed and writes every array. UserError(kIO) when writing fails.
void write_side_table(const std::string& dir, const std::map<std::string, NDArray>& table);

// Reads what write_side_table wrote. UserError(kNotFound/kParse) naming the file at fault.
std::map<std::string, NDArray> read_side_table(const std::string& dir);

}  // namespace kiln::ir

#endif  // KILN_IR_SIDE_TABLE_H_
