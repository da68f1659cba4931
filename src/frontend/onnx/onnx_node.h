// The ONNX importer's internal model: an ONNX node with its attributes decoded out of protobuf
// (so that the operator converters in onnx_ops*.cc compile without protobuf headers), and the
// ImportContext that converters build the graph through.
#ifndef KILN_FRONTEND_ONNX_ONNX_NODE_H_
#define KILN_FRONTEND_ONNX_ONNX_NODE_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/ndarray.h"

namespace kiln::frontend::onnx_import {

struct OnnxAttr {
  enum Kind { kInt, kFloat, kString, kInts, kFloats, kTensor, kOther } kind = kOther;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  ir::NDArray tensor;
};

struct OnnxNode {
  std::string op_type;
  std::string name;
  std::vector<std::string> inputs;   // "" for an omitted optional input
  std::vector<std::string> outputs;  // "" for an omitted optional output
  std::map<std::string, OnnxAttr> attrs;
};

class ImportContext {
 public:
  ImportContext(int opset, std::string model_name) : opset_(opset), model_name_(std::move(model_name)) {}

  int opset() const { return opset_; }
  const std::string& model_name() const { return model_name_; }

  // ---- values ----
  void define(const std::string& name, ir::Value value) { values_[name] = std::move(value); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  ir::Value value(const std::string& name) const;

  // ---- the node being converted (set by the importer) ----
  void begin_node(const OnnxNode* node) { node_ = node; }
  const OnnxNode& node() const { return *node_; }
  // "node 'conv1' (Conv)"
  std::string node_subject() const;

  // Input `i` of the current node; `required` inputs that are absent are an error.
  bool has_input(size_t i) const;
  ir::Value input(size_t i) const;
  // The constant data of input `i` (an error naming the input when it is not a constant).
  ir::NDArray constant_input(size_t i, const std::string& what) const;
  std::vector<int64_t> constant_ints(size_t i, const std::string& what) const;
  std::vector<double> constant_floats(size_t i, const std::string& what) const;

  // ---- attributes of the current node ----
  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback) const;
  std::vector<double> attr_floats(const std::string& name, std::vector<double> fallback) const;
  const ir::NDArray* attr_tensor(const std::string& name) const;

  // ---- building ----
  // A call of a graph-level op; when every argument is a constant, evaluates it with the reference
  // implementation and returns constants instead (constant folding).
  std::vector<ir::Value> call(const std::string& op, std::vector<ir::Value> args, const ir::Attrs& attrs = {});
  ir::Value call1(const std::string& op, std::vector<ir::Value> args, const ir::Attrs& attrs = {}) {
    return call(op, std::move(args), attrs).at(0);
  }
  ir::Value constant(ir::NDArray data, const std::string& name_hint);

  // ---- errors about the current node ----
  [[noreturn]] void fail_attr(const std::string& attr, const std::string& reason, const std::string& hint = "") const;
  [[noreturn]] void fail_unsupported(const std::string& reason, const std::string& hint = "") const;
  [[noreturn]] void fail_invalid(const std::string& reason, const std::string& hint = "") const;

  // An axis in [-rank, rank) made non-negative (an error naming `what` otherwise).
  int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) const;

  std::string unique_name(const std::string& base);

 private:
  int opset_;
  std::string model_name_;
  const OnnxNode* node_ = nullptr;
  std::unordered_map<std::string, ir::Value> values_;
  std::set<std::string> used_names_;
};

// Converts the context's current node; returns one Value per (non-empty) ONNX output, in order.
// Omitted outputs may be given an undefined Value.
using Converter = std::function<std::vector<ir::Value>(ImportContext& ctx)>;

// op_type -> converter, for the default (ai.onnx) domain.
const std::map<std::string, Converter>& converters();

// Registration helpers, one call per operator family file (onnx_ops_*.cc).
void add_nn_converters(std::map<std::string, Converter>& table);
void add_tensor_converters(std::map<std::string, Converter>& table);
void add_math_converters(std::map<std::string, Converter>& table);

// The name of a TensorProto data type ("FLOAT", "UINT4", ...; "UNDEFINED" for unknown values).
const char* onnx_type_name(int t);

}  // namespace kiln::frontend::onnx_import

#endif  // KILN_FRONTEND_ONNX_ONNX_NODE_H_
