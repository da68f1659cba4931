// Kiln's graph IR: a dataflow graph of operator calls over typed tensor values.
//
// Contract:
//   - A Graph has ordered inputs (InputNode), ordered named outputs (Values), and every node reachable
//     from the outputs. Nodes are immutable and shared (NodePtr = shared_ptr<const Node>): a rewrite
//     builds new nodes and shares the unchanged ones.
//   - Three node kinds (NodeKind): kInput (a graph input, one value), kConstant (an NDArray held by
//     reference, one value; the data is never copied), kCall (an operator call with any number of
//     outputs, e.g. split).
//   - A Value is (node, output index); its type is the node's output type at that index.
//   - Nodes are only created through the factories below, which validate: a call's attributes are
//     checked against its OpDef's schema (defaults filled in) and its output types come from the
//     op's type inference, so every node in a graph is well-typed by construction.
//   - Graph::topo_order() lists every node once, arguments before users, inputs first in their
//     declared order; it is deterministic (depth-first from the outputs, arguments left to right).
#ifndef KILN_IR_GRAPH_H_
#define KILN_IR_GRAPH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/attrs.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/ir/ndarray.h"
#include "kiln/ir/op.h"

namespace kiln::ir {

enum class NodeKind : uint8_t { kInput, kConstant, kCall };

const char* node_kind_name(NodeKind kind);

class Node;
class InputNode;
class ConstantNode;
class CallNode;
using NodePtr = std::shared_ptr<const Node>;

// One output of a node.
struct Value {
  NodePtr node;
  int index = 0;

  const TensorType& type() const;
  bool defined() const { return node != nullptr; }
  bool operator==(const Value& other) const { return node == other.node && index == other.index; }
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeKind kind() const { return kind_; }
  // Input and constant names are unique in a graph; a call's name is optional (e.g. the ONNX node
  // name, kept for error messages) and not part of the graph's structure.
  const std::string& name() const { return name_; }
  const std::vector<TensorType>& output_types() const { return types_; }
  int num_outputs() const { return static_cast<int>(types_.size()); }
  Value output(int index = 0) const;

  // Checked downcasts (by kind, never dynamic_cast).
  const InputNode& as_input() const;
  const ConstantNode& as_constant() const;
  const CallNode& as_call() const;

 protected:
  Node(NodeKind kind, std::string name, std::vector<TensorType> types)
      : kind_(kind), name_(std::move(name)), types_(std::move(types)) {}

 private:
  NodeKind kind_;
  std::string name_;
  std::vector<TensorType> types_;
};

class InputNode final : public Node {
 public:
  const TensorType& type() const { return output_types()[0]; }

 private:
  InputNode(std::string name, TensorType type) : Node(NodeKind::kInput, std::move(name), {std::move(type)}) {}
  friend struct NodeFactoryAccess;
};

class ConstantNode final : public Node {
 public:
  const TensorType& type() const { return output_types()[0]; }
  const NDArray& data() const { return data_; }

 private:
  ConstantNode(std::string name, NDArray data)
      : Node(NodeKind::kConstant, std::move(name), {data.type()}), data_(std::move(data)) {}
  NDArray data_;
  friend struct NodeFactoryAccess;
};

class CallNode final : public Node {
 public:
  // Releases long argument chains iteratively (no recursion depth limit on deep graphs).
  ~CallNode() override;

  const OpDef& op() const { return *op_; }
  const std::vector<Value>& args() const { return args_; }
  const Attrs& attrs() const { return attrs_; }

 private:
  CallNode(const OpDef* op, std::vector<Value> args, Attrs attrs, std::vector<TensorType> types, std::string name)
      : Node(NodeKind::kCall, std::move(name), std::move(types)), op_(op), args_(std::move(args)), attrs_(std::move(attrs)) {}
  const OpDef* op_;
  std::vector<Value> args_;
  Attrs attrs_;
  friend struct NodeFactoryAccess;
};

// Factories. Names of inputs and constants must be non-empty.
NodePtr make_input(std::string name, TensorType type);
NodePtr make_constant(std::string name, NDArray data);
// Validates the argument count and attributes and infers the output types. A bad call throws
// UserError naming the op (and `name` when given) with the reason from the schema or inference.
NodePtr make_call(const OpDef& op, std::vector<Value> args, const Attrs& attrs, std::string name = "");
NodePtr make_call(std::string_view op_name, std::vector<Value> args, const Attrs& attrs, std::string name = "");

class Graph {
 public:
  Graph() = default;
  // `inputs` are InputNodes. `output_names` is empty (names "out0", "out1", ... are made up) or has
  // one name per output. `dim_vars` declares the ranges of size variables; every variable that an
  // input's shape uses and `dim_vars` does not list gets the default range (kiln/ir/dim.h).
  Graph(std::vector<NodePtr> inputs, std::vector<Value> outputs, std::vector<std::string> output_names = {},
        std::vector<DimVar> dim_vars = {});

  const std::vector<NodePtr>& inputs() const { return inputs_; }
  const std::vector<Value>& outputs() const { return outputs_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  // The size variables of the inputs' shapes with their ranges: those declared, then the others
  // in first-use order. Empty for a graph of static shapes.
  const std::vector<DimVar>& dim_vars() const { return dim_vars_; }
  // The declaration of `var`, nullptr when it is not one of this graph's size variables.
  const DimVar* find_dim_var(const tir::Var& var) const;

  // Every node once, arguments before their users; inputs first, in declared order.
  std::vector<NodePtr> topo_order() const;
  // Number of call nodes (a quick size measure for tests and logs).
  int num_calls() const;

 private:
  std::vector<NodePtr> inputs_;
  std::vector<Value> outputs_;
  std::vector<std::string> output_names_;
  std::vector<DimVar> dim_vars_;
};

// True when both graphs have the same structure: inputs (names, types), constants (names, types,
// bytes), calls (op, attributes, argument wiring, types) in the same topological positions and the
// same outputs (names included). Call node names are not compared. On a difference, `why` (when not
// null) says where.
bool structurally_equal(const Graph& a, const Graph& b, std::string* why = nullptr);

}  // namespace kiln::ir

#endif  // KILN_IR_GRAPH_H_
