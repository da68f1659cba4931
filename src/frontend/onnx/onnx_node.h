// The ONNX importer's internal model: an ONNX node with its attributes decoded out of protobuf
// (so that the operator converters in onnx_ops*.cc compile without protobuf headers), and the
// ImportContext that converters build the graph through.
#ifndef KILN_FRONTEND_ONNX_ONNX_NODE_H_
#define KILN_FRONTEND_ONNX_ONNX_NODE_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/ndarray.h"

namespace kiln::frontend::onnx_import {

struct OnnxGraph;

struct OnnxAttr {
  enum Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph, kOther } kind = kOther;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  ir::NDArray tensor;
  std::shared_ptr<const OnnxGraph> graph;  // kGraph: a subgraph (If branches, Loop/Scan bodies)
};

struct OnnxNode {
  std::string op_type;
  std::string domain;  // "" or "ai.onnx" for the default domain
  std::string name;
  std::vector<std::string> inputs;   // "" for an omitted optional input
  std::vector<std::string> outputs;  // "" for an omitted optional output
  std::map<std::string, OnnxAttr> attrs;
  // Outer-scope values that the node's subgraphs (If/Loop/Scan bodies) read: not inputs, but the
  // node must come after their producers (prepare_nodes, node_order.h).
  std::vector<std::string> implicit_inputs;
};

// A formal input or output of a subgraph: its name and, where the model declares it, its type.
struct OnnxGraphValue {
  enum Kind { kTensor, kSequence, kOptional, kOtherType, kUntyped } kind = kUntyped;
  std::string name;
  std::optional<ir::DType> dtype;  // a declared tensor element type Kiln knows
};

// A subgraph decoded out of protobuf (the graph attributes of If, Loop and Scan). Its nodes may
// read values of the enclosing graphs by name (ImportContext's scopes).
struct OnnxGraph {
  std::string name;
  std::vector<OnnxGraphValue> inputs, outputs;
  std::vector<std::pair<std::string, ir::NDArray>> initializers;
  std::vector<OnnxNode> nodes;
};

// The elements of a small integer tensor (a scalar or a vector) that the importer knows while the
// graph computes it at run time: a value made from a symbolic shape (`Shape(x)[0]` is `batch`).
// Converters that need a shape-setting input (Reshape's shape, Expand's, Range's limit) read it
// as dimensions through ImportContext::dims_input; known_values.h propagates them.
struct KnownInts {
  ir::DType dtype = ir::DType::kI64;
  bool scalar = false;          // rank 0 (else rank 1)
  std::vector<ir::Dim> elems;   // one per element
  bool is_static() const;
};

class ImportContext {
 public:
  ImportContext(int opset, std::string model_name) : opset_(opset), model_name_(std::move(model_name)) {}

  int opset() const { return opset_; }
  const std::string& model_name() const { return model_name_; }

  // ---- values ----
  // Defines `name` in the innermost scope; lookups search the scopes from the innermost outwards
  // (a subgraph sees the values of the graphs that enclose it; its own names shadow theirs).
  void define(const std::string& name, ir::Value value) { scopes_.back().values[name] = std::move(value); }
  bool has(const std::string& name) const;
  ir::Value value(const std::string& name) const;

  // ---- subgraph scopes ----
  // Enters a subgraph: a new innermost scope; `where` ("body of node 'loop' (Loop), iteration 3")
  // is appended to the subjects of errors about its nodes. leave_scope() restores the node that
  // was being converted. Use SubgraphScope.
  void enter_scope(std::string where);
  void leave_scope();
  int scope_depth() const { return static_cast<int>(scopes_.size()) - 1; }

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
  // The elements of input `i` when they are known: a constant integer scalar or vector, or a value
  // propagated from a symbolic shape (set_known). nullopt otherwise.
  std::optional<KnownInts> known_input(size_t i) const;
  // Input `i` as a list of dimensions (a shape-setting input): its known elements (a scalar counts
  // as one), else the error of constant_ints naming `what`.
  std::vector<ir::Dim> dims_input(size_t i, const std::string& what) const;
  // Records the known elements of `v` (a value computed at run time from symbolic shapes).
  void set_known(const ir::Value& v, KnownInts known);

  // ---- attributes of the current node ----
  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback) const;
  std::vector<double> attr_floats(const std::string& name, std::vector<double> fallback) const;
  std::vector<std::string> attr_strings(const std::string& name, std::vector<std::string> fallback) const;
  const ir::NDArray* attr_tensor(const std::string& name) const;
  // A graph attribute (an error naming it when it is absent or not a graph).
  const OnnxGraph& attr_graph(const std::string& name) const;

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
  struct Scope {
    std::unordered_map<std::string, ir::Value> values;
    std::string where;                 // "" for the main graph
    const OnnxNode* outer = nullptr;   // the node being converted when the scope was entered
  };
  std::vector<Scope> scopes_{Scope{}};
  std::set<std::string> used_names_;
  // Known elements of run-time values, keyed by node and output (the NodePtr keeps the key's node
  // alive so that its address is never reused).
  std::map<std::pair<const ir::Node*, int>, std::pair<ir::NodePtr, KnownInts>> known_;
  std::unordered_map<std::string, int> next_suffix_;
};

// " (from graph inputs 'a', 'b')": the graph inputs a value computed at run time depends on, for
// errors that need it constant ("" for a graph input itself).
std::string run_time_origin(const ir::Value& v);

// RAII: ImportContext::enter_scope / leave_scope (also when a converter throws).
class SubgraphScope {
 public:
  SubgraphScope(ImportContext& ctx, std::string where) : ctx_(ctx) { ctx_.enter_scope(std::move(where)); }
  ~SubgraphScope() { ctx_.leave_scope(); }
  SubgraphScope(const SubgraphScope&) = delete;
  SubgraphScope& operator=(const SubgraphScope&) = delete;

 private:
  ImportContext& ctx_;
};

// Converts one decoded node of the graph being imported (domain and operator checks, its
// converter) and defines its outputs in the current scope (onnx_subgraph.cc).
void convert_node(ImportContext& ctx, const OnnxNode& node);

// Imports `graph` in a new scope of `ctx` with its formal inputs bound to `inputs` (fewer inputs
// than formals is an error naming the subgraph) and returns its outputs, in order. `where` names
// the subgraph in errors ("then_branch of node 'if0' (If)"). Sequence- or optional-typed formals
// are refused (Kiln has tensors only).
std::vector<ir::Value> import_subgraph(ImportContext& ctx, const OnnxGraph& graph, const std::vector<ir::Value>& inputs,
                                       const std::string& where);

// The number of nodes in `graph`, counting those of nested subgraphs (the unrolling budget).
int64_t subgraph_size(const OnnxGraph& graph);

// Converts the context's current node; returns one Value per (non-empty) ONNX output, in order.
// Omitted outputs may be given an undefined Value.
using Converter = std::function<std::vector<ir::Value>(ImportContext& ctx)>;

// op_type -> converter, for the default (ai.onnx) domain.
const std::map<std::string, Converter>& converters();

// Registration helpers, one call per operator family file (onnx_ops_*.cc).
void add_nn_converters(std::map<std::string, Converter>& table);
void add_tensor_converters(std::map<std::string, Converter>& table);
void add_math_converters(std::map<std::string, Converter>& table);
// Conv, ConvTranspose, Max/Average/Lp pooling at spatial rank 1-3 (onnx_ops_conv.cc).
void add_conv_converters(std::map<std::string, Converter>& table);
// Wraps the current converters with the translation of their older opsets (onnx_ops_legacy.cc);
// called after every other add_*_converters.
void add_legacy_converters(std::map<std::string, Converter>& table);
void add_recurrent_converters(std::map<std::string, Converter>& table);
void add_tensorops_converters(std::map<std::string, Converter>& table);  // onnx_ops_tensorops.cc
void add_einsum_converters(std::map<std::string, Converter>& table);     // onnx_ops_einsum.cc
void add_attention_converters(std::map<std::string, Converter>& table);
void add_transformer_converters(std::map<std::string, Converter>& table);
void add_loss_converters(std::map<std::string, Converter>& table);
void add_elementwise_ext_converters(std::map<std::string, Converter>& table);  // onnx_ops_elementwise_ext.cc
void add_reduce_norm_converters(std::map<std::string, Converter>& table);      // onnx_ops_reduce_norm.cc
void add_control_flow_converters(std::map<std::string, Converter>& table);
void add_data_dependent_converters(std::map<std::string, Converter>& table);  // onnx_ops_data_dependent.cc
// QuantizeLinear, DequantizeLinear, QLinearConv/MatMul, ConvInteger, MatMulInteger,
// DynamicQuantizeLinear (onnx_ops_quant.cc).
void add_quant_converters(std::map<std::string, Converter>& table);
// op_type -> converter for the com.microsoft domain (ONNX Runtime's quantized contrib operators;
// onnx_ops_quant.cc).
const std::map<std::string, Converter>& contrib_converters();

// The name of a TensorProto data type ("FLOAT", "UINT4", ...; "UNDEFINED" for unknown values).
const char* onnx_type_name(int t);
// Kiln's element type for a TensorProto data type (false for types Kiln does not have).
bool onnx_dtype(int64_t t, ir::DType* out);

}  // namespace kiln::frontend::onnx_import

#endif  // KILN_FRONTEND_ONNX_ONNX_NODE_H_
