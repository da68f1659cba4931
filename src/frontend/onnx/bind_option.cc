// `--bind NAME=FILE.npy` (kiln compile, run, ir): reads the array that specializes graph input NAME
// to a constant (OnnxImportOptions::constant_inputs, as TVM's freeze_params does). The importer
// checks the name, dtype and shape against the model (onnx_model.cc).
#include <map>
#include <string>

#include "kiln/frontend/onnx.h"
#include "kiln/ir/npy.h"
#include "kiln/support/error.h"

namespace kiln::frontend {

void parse_bind_option(const std::string& spec, std::map<std::string, ir::NDArray>* out) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw UserError(UserErrorKind::kInvalidArgument, "--bind " + spec, "expected NAME=FILE.npy",
                    "e.g. --bind shape=shape.npy (the file holds the input's value)");
  }
  const std::string name = spec.substr(0, eq);
  if (out->count(name)) throw UserError(UserErrorKind::kInvalidArgument, "--bind " + spec, "input '" + name + "' given twice");
  (*out)[name] = ir::read_npy(spec.substr(eq + 1));
}

}  // namespace kiln::frontend
