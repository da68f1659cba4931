#include "kiln/ir/graph.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "kiln/support/error.h"

namespace kiln::ir {

struct NodeFactoryAccess {
  static NodePtr input(std::string name, TensorType type) {
    return NodePtr(new InputNode(std::move(name), std::move(type)));
  }
  static NodePtr constant(std::string name, NDArray data) {
    return NodePtr(new ConstantNode(std::move(name), std::move(data)));
  }
  static NodePtr call(const OpDef* op, std::vector<Value> args, Attrs attrs, std::vector<TensorType> types,
                      std::string name) {
    return NodePtr(new CallNode(op, std::move(args), std::move(attrs), std::move(types), std::move(name)));
  }
};

const char* node_kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::kInput: return "input";
    case NodeKind::kConstant: return "constant";
    case NodeKind::kCall: return "call";
  }
  return "?";
}

const TensorType& Value::type() const {
  KILN_ICHECK(node != nullptr) << "type of an undefined value";
  KILN_ICHECK(index >= 0 && index < node->num_outputs()) << "output " << index << " of a node with "
                                                         << node->num_outputs() << " outputs";
  return node->output_types()[index];
}

Value Node::output(int index) const {
  KILN_ICHECK(index >= 0 && index < num_outputs()) << "output " << index << " of a node with " << num_outputs();
  return Value{shared_from_this(), index};
}

const InputNode& Node::as_input() const {
  KILN_ICHECK(kind_ == NodeKind::kInput) << "node '" << name_ << "' is a " << node_kind_name(kind_);
  return static_cast<const InputNode&>(*this);
}
const ConstantNode& Node::as_constant() const {
  KILN_ICHECK(kind_ == NodeKind::kConstant) << "node '" << name_ << "' is a " << node_kind_name(kind_);
  return static_cast<const ConstantNode&>(*this);
}
const CallNode& Node::as_call() const {
  KILN_ICHECK(kind_ == NodeKind::kCall) << "node '" << name_ << "' is a " << node_kind_name(kind_);
  return static_cast<const CallNode&>(*this);
}

CallNode::~CallNode() {
  // Destroying the last reference to a node would destroy its arguments recursively; a graph
  // 100,000 calls deep would overflow the stack. Instead, arguments this node solely owns are
  // unlinked into a worklist first, so each node is destroyed with no arguments left.
  std::vector<NodePtr> pending;
  for (auto& a : args_) pending.push_back(std::move(a.node));
  args_.clear();
  while (!pending.empty()) {
    NodePtr node = std::move(pending.back());
    pending.pop_back();
    if (node && node.use_count() == 1 && node->kind() == NodeKind::kCall) {
      // Sole owner: nobody else can observe this node any more.
      auto& call = const_cast<CallNode&>(static_cast<const CallNode&>(*node));
      for (auto& a : call.args_) pending.push_back(std::move(a.node));
      call.args_.clear();
    }
  }
}

NodePtr make_input(std::string name, TensorType type) {
  KILN_ICHECK(!name.empty()) << "graph input without a name";
  for (const Dim& d : type.shape) KILN_ICHECK(d.is_symbolic() || d.value() >= 0) << "input '" << name << "' has dimension " << d.to_string();
  return NodeFactoryAccess::input(std::move(name), std::move(type));
}

NodePtr make_constant(std::string name, NDArray data) {
  KILN_ICHECK(!name.empty()) << "constant without a name";
  KILN_ICHECK(data.defined()) << "constant '" << name << "' without data";
  return NodeFactoryAccess::constant(std::move(name), std::move(data));
}

NodePtr make_call(const OpDef& op, std::vector<Value> args, const Attrs& attrs, std::string name) {
  const std::string subject = name.empty() ? "call of '" + op.name + "'" : "node '" + name + "' (" + op.name + ")";
  const int n = static_cast<int>(args.size());
  if (n < op.min_inputs || (op.max_inputs >= 0 && n > op.max_inputs)) {
    std::string expected = op.max_inputs < 0 ? "at least " + std::to_string(op.min_inputs)
                           : op.min_inputs == op.max_inputs
                               ? std::to_string(op.min_inputs)
                               : std::to_string(op.min_inputs) + " to " + std::to_string(op.max_inputs);
    throw UserError(UserErrorKind::kInvalidArgument, subject,
                    "takes " + expected + " arguments, got " + std::to_string(n));
  }
  std::vector<TensorType> in_types;
  for (const Value& v : args) {
    KILN_ICHECK(v.defined()) << subject << ": undefined argument";
    in_types.push_back(v.type());
  }
  Attrs full;
  std::vector<TensorType> out_types;
  try {
    full = OpRegistry::global().validate_attrs(op, attrs);
    out_types = op.infer_type(in_types, full);
  } catch (const UserError& e) {
    std::string types;
    for (const auto& t : in_types) types += (types.empty() ? "" : ", ") + t.to_string();
    throw UserError(e.kind(), subject, e.reason() + " (inputs: " + types + ")", e.hint());
  }
  KILN_ICHECK(!out_types.empty()) << op.name << ": type inference gave no outputs";
  return NodeFactoryAccess::call(&op, std::move(args), std::move(full), std::move(out_types), std::move(name));
}

NodePtr make_call(std::string_view op_name, std::vector<Value> args, const Attrs& attrs, std::string name) {
  return make_call(OpRegistry::global().get(op_name), std::move(args), attrs, std::move(name));
}

Graph::Graph(std::vector<NodePtr> inputs, std::vector<Value> outputs, std::vector<std::string> output_names,
             std::vector<DimVar> dim_vars)
    : inputs_(std::move(inputs)), outputs_(std::move(outputs)), output_names_(std::move(output_names)),
      dim_vars_(std::move(dim_vars)) {
  for (size_t i = 0; i < dim_vars_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      KILN_ICHECK(!dim_vars_[i].var.same_as(dim_vars_[j].var)) << "size variable '" << dim_vars_[i].name() << "' declared twice";
    }
  }
  for (const auto& in : inputs_) {
    KILN_ICHECK(in) << "null graph input";
    for (const Dim& d : in->output_types()[0].shape) {
      for (const tir::Var& v : dim_vars_of(d)) {
        if (find_dim_var(v) == nullptr) dim_vars_.push_back(DimVar{v, kDefaultDimMin, kDefaultDimMax});
      }
    }
  }
  for (const auto& in : inputs_) KILN_ICHECK(in && in->kind() == NodeKind::kInput) << "graph input is not an InputNode";
  for (const auto& out : outputs_) KILN_ICHECK(out.defined()) << "undefined graph output";
  if (output_names_.empty()) {
    for (size_t i = 0; i < outputs_.size(); ++i) output_names_.push_back("out" + std::to_string(i));
  }
  KILN_ICHECK(output_names_.size() == outputs_.size()) << output_names_.size() << " output names for "
                                                       << outputs_.size() << " outputs";
}

const DimVar* Graph::find_dim_var(const tir::Var& var) const {
  for (const DimVar& d : dim_vars_) {
    if (d.var.same_as(var)) return &d;
  }
  return nullptr;
}

std::vector<NodePtr> Graph::topo_order() const {
  std::vector<NodePtr> order;
  std::unordered_set<const Node*> done;
  for (const auto& in : inputs_) {
    if (done.insert(in.get()).second) order.push_back(in);
  }
  // Iterative DFS (graphs can be thousands of nodes deep).
  std::unordered_set<const Node*> on_stack;
  for (const Value& out : outputs_) {
    if (done.count(out.node.get())) continue;
    std::vector<std::pair<NodePtr, size_t>> stack{{out.node, 0}};
    on_stack.insert(out.node.get());
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (node->kind() == NodeKind::kCall && next < node->as_call().args().size()) {
        const NodePtr& arg = node->as_call().args()[next++].node;
        if (done.count(arg.get())) continue;
        KILN_ICHECK(!on_stack.count(arg.get())) << "cycle through node '" << arg->name() << "'";
        on_stack.insert(arg.get());
        stack.emplace_back(arg, 0);
        continue;
      }
      on_stack.erase(node.get());
      done.insert(node.get());
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

int Graph::num_calls() const {
  int n = 0;
  for (const auto& node : topo_order()) n += node->kind() == NodeKind::kCall;
  return n;
}

bool structurally_equal(const Graph& a, const Graph& b, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (a.inputs().size() != b.inputs().size()) return fail("different numbers of inputs");
  if (a.outputs().size() != b.outputs().size()) return fail("different numbers of outputs");
  if (a.dim_vars().size() != b.dim_vars().size()) return fail("different numbers of size variables");
  for (size_t i = 0; i < a.dim_vars().size(); ++i) {
    const DimVar& x = a.dim_vars()[i];
    const DimVar& y = b.dim_vars()[i];
    if (x.name() != y.name() || x.lo != y.lo || x.hi != y.hi) {
      return fail("size variable #" + std::to_string(i) + " differs ('" + x.name() + "' " + std::to_string(x.lo) + ".." +
                  std::to_string(x.hi) + " vs '" + y.name() + "' " + std::to_string(y.lo) + ".." + std::to_string(y.hi) + ")");
    }
  }
  // Types compare by their text: size variables are the graph's own objects, named uniquely.
  auto same_types = [](const std::vector<TensorType>& x, const std::vector<TensorType>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].dtype != y[i].dtype || x[i].shape.size() != y[i].shape.size()) return false;
      if (x[i].shape.is_static() && y[i].shape.is_static() ? !(x[i].shape == y[i].shape)
                                                             : shape_to_string(x[i].shape) != shape_to_string(y[i].shape)) {
        return false;
      }
    }
    return true;
  };
  // Shape attributes compare by text too; the other kinds by value.
  auto same_attrs = [](const Attrs& x, const Attrs& y) {
    if (x.values().size() != y.values().size()) return false;
    for (auto i = x.values().begin(), j = y.values().begin(); i != x.values().end(); ++i, ++j) {
      if (i->first != j->first) return false;
      const auto* sx = std::get_if<Shape>(&i->second);
      const auto* sy = std::get_if<Shape>(&j->second);
      if (sx && sy ? shape_to_string(*sx) != shape_to_string(*sy) : !(i->second == j->second)) return false;
    }
    return true;
  };
  const auto oa = a.topo_order();
  const auto ob = b.topo_order();
  if (oa.size() != ob.size()) {
    return fail("different numbers of nodes: " + std::to_string(oa.size()) + " vs " + std::to_string(ob.size()));
  }
  std::unordered_map<const Node*, size_t> pos_a, pos_b;
  for (size_t i = 0; i < oa.size(); ++i) {
    pos_a[oa[i].get()] = i;
    pos_b[ob[i].get()] = i;
  }
  for (size_t i = 0; i < oa.size(); ++i) {
    const Node& x = *oa[i];
    const Node& y = *ob[i];
    const std::string where = "node #" + std::to_string(i) + " ('" + x.name() + "')";
    if (x.kind() != y.kind()) return fail(where + ": kinds differ");
    if (!same_types(x.output_types(), y.output_types())) return fail(where + ": types differ");
    switch (x.kind()) {
      case NodeKind::kInput:
        if (x.name() != y.name()) return fail(where + ": input names differ ('" + y.name() + "')");
        break;
      case NodeKind::kConstant:
        if (x.name() != y.name()) return fail(where + ": constant names differ ('" + y.name() + "')");
        if (!x.as_constant().data().bitwise_equal(y.as_constant().data())) return fail(where + ": constant data differs");
        break;
      case NodeKind::kCall: {
        const CallNode& cx = x.as_call();
        const CallNode& cy = y.as_call();
        if (cx.op().name != cy.op().name) return fail(where + ": ops differ (" + cx.op().name + " vs " + cy.op().name + ")");
        if (!same_attrs(cx.attrs(), cy.attrs())) return fail(where + ": attributes differ");
        if (cx.args().size() != cy.args().size()) return fail(where + ": argument counts differ");
        for (size_t k = 0; k < cx.args().size(); ++k) {
          if (pos_a.at(cx.args()[k].node.get()) != pos_b.at(cy.args()[k].node.get()) ||
              cx.args()[k].index != cy.args()[k].index) {
            return fail(where + ": argument " + std::to_string(k) + " differs");
          }
        }
        break;
      }
    }
  }
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    const Value& va = a.outputs()[i];
    const Value& vb = b.outputs()[i];
    if (pos_a.at(va.node.get()) != pos_b.at(vb.node.get()) || va.index != vb.index) {
      return fail("output " + std::to_string(i) + " differs");
    }
    if (a.output_names()[i] != b.output_names()[i]) return fail("output " + std::to_string(i) + " names differ");
  }
  return true;
}

}  // namespace kiln::ir
