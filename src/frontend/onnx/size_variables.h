// The graph's size variables made from an ONNX model's symbolic input dimensions
// (OnnxImportOptions::symbolic_dims): one variable per dim_param name, made an identifier
// (`batch size` -> `batch_size`, `1st` -> `d_1st`), `<input>_d<axis>` for a dimension without a
// name, the declared range from `--dim` (OnnxImportOptions::dim_ranges) or the default one.
#ifndef KILN_FRONTEND_ONNX_SIZE_VARIABLES_H_
#define KILN_FRONTEND_ONNX_SIZE_VARIABLES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/dim.h"

namespace kiln::frontend::onnx_import {

class SizeVariables {
 public:
  explicit SizeVariables(const std::map<std::string, std::pair<int64_t, int64_t>>& ranges) : ranges_(ranges) {}

  // The variable for axis `axis` of input `input`, whose ONNX dim_param is `dim_param` (empty when
  // the dimension has no name). The same dim_param gives the same variable.
  ir::Dim dim(const std::string& input, int axis, const std::string& dim_param);
  // The variables in first-use order. UserError(kNotFound) for a --dim name no input uses.
  std::vector<ir::DimVar> finish() const;

 private:
  const std::map<std::string, std::pair<int64_t, int64_t>>& ranges_;
  std::map<std::string, ir::DimVar> by_key_;  // dim_param (or input/axis) -> variable
  std::vector<ir::DimVar> order_;
};

// `text` as a size-variable name: characters other than letters, digits and '_' become '_', and
// a leading digit (or an empty name) gets a "d_" prefix.
std::string size_variable_name(const std::string& text);

}  // namespace kiln::frontend::onnx_import

#endif  // KILN_FRONTEND_ONNX_SIZE_VARIABLES_H_
