// ONNX import: reads an ONNX model (ONNX's protobuf schema, Debian's libonnx/libprotobuf) into
// Kiln's graph IR. Supported: ai.onnx opsets kOnnxMinOpset..kOnnxMaxOpset, initializers (also in
// external data files, relative to the model's directory), Constant nodes, and the operators of
// onnx_supported_ops(), mapped to the graph-level ops of docs/ops.md with ONNX semantics. Every
// compile-time input (shapes, axes, pads, scales, ...) is resolved to attributes; nodes whose
// inputs are all constant (shape subgraphs: Shape -> Gather -> Concat -> Reshape) are evaluated
// with the reference implementations and become constants. Details and limits: docs/onnx.md.
//
// Every problem with the model is a kiln::UserError naming the file, node or input, never a crash.
#ifndef KILN_FRONTEND_ONNX_H_
#define KILN_FRONTEND_ONNX_H_

#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/ndarray.h"

namespace kiln::frontend {

constexpr int kOnnxMinOpset = 7;
constexpr int kOnnxMaxOpset = 28;

struct OnnxImportOptions {
  // Fixes an input's shape (needed where the model leaves a dimension symbolic); dimensions the
  // model fixes must agree.
  std::map<std::string, ir::Shape> input_shapes;
  // Binds graph inputs to known values: each becomes a constant (and is no longer a graph input),
  // so inputs that Kiln needs at compile time (a Reshape's shape, a Clip's bounds fed as graph
  // inputs, as ONNX's node tests do) can be given. The array's dtype must match the input's.
  std::map<std::string, ir::NDArray> constant_inputs;
  // Keeps the dimensions the model leaves symbolic (ONNX dim_param, or no size) as size variables
  // of the graph (kiln/ir/dim.h) instead of refusing them: one variable per dim_param name
  // (made an identifier: other characters become '_'), `<input>_d<axis>` for an unnamed one.
  // --input-shape still pins an input. Off: every such dimension is an error that lists them.
  bool symbolic_dims = false;
  // Declared ranges of size variables, by name (`--dim NAME=LO..HI`); the others get
  // [ir::kDefaultDimMin, ir::kDefaultDimMax]. A name the model does not use is a UserError.
  std::map<std::string, std::pair<int64_t, int64_t>> dim_ranges;
};

ir::Graph import_onnx(const std::string& path, const OnnxImportOptions& options = {});

// Imports from bytes already in memory; external data files are looked up in `model_dir`.
ir::Graph import_onnx_bytes(const std::string& bytes, const std::string& model_dir, const OnnxImportOptions& options,
                            const std::string& display_name);

// Reads a serialized onnx.TensorProto (the .pb files of ONNX's node tests) into an NDArray.
ir::NDArray read_onnx_tensor(const std::string& path);

// Names of the model's graph inputs that are not initializers, in order (the order of the
// input_N.pb files of ONNX's node tests).
std::vector<std::string> onnx_input_names(const std::string& path);

// The distinct op_types of the model's graph and its subgraphs (If/Loop/Scan bodies), sorted ("domain.op" outside ai.onnx).
std::vector<std::string> onnx_op_types(const std::string& path);

// The ONNX op_types the importer handles, sorted.
std::vector<std::string> onnx_supported_ops();

// Parses one `--input-shape` value, `NAME:1,3,224,224` (`NAME:` for a scalar), into `out`.
// A malformed value is a UserError(kInvalidArgument) naming the option.
void parse_input_shape_option(const std::string& spec, std::map<std::string, ir::Shape>* out);

// Parses one `--bind` value, `NAME=FILE.npy`, reading the array into `out` (for
// OnnxImportOptions::constant_inputs). A malformed value or a repeated name is a
// UserError(kInvalidArgument); an unreadable file is read_npy's UserError.
// Parses one `--dim NAME=LO..HI` (or NAME=N for LO = HI = N) into `out`. A malformed value or a
// repeated name is a UserError(kInvalidArgument).
void parse_dim_option(const std::string& spec, std::map<std::string, std::pair<int64_t, int64_t>>* out);

void parse_bind_option(const std::string& spec, std::map<std::string, ir::NDArray>* out);

}  // namespace kiln::frontend

#endif  // KILN_FRONTEND_ONNX_H_
