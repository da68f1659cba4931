// specialize_dims (see kiln/ir/specialize.h).
#include "kiln/ir/specialize.h"

#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/ir/op.h"
#include "kiln/support/error.h"
#include "kiln/tir/ir_mutator.h"

namespace kiln::ir {
namespace {

using Substitution = std::vector<std::pair<const tir::Variable*, tir::Expr>>;

Dim specialize(const Dim& d, const Substitution& sub) {
  if (d.is_static()) return d;
  return Dim::of(tir::substitute(d.expr(), sub));
}

Shape specialize(const Shape& s, const Substitution& sub) {
  Shape out;
  for (const Dim& d : s) out.push_back(specialize(d, sub));
  return out;
}

Attrs specialize(const Attrs& attrs, const Substitution& sub) {
  Attrs out;
  for (const auto& [name, value] : attrs.values()) {
    if (const auto* shape = std::get_if<Shape>(&value)) {
      out.set(name, specialize(*shape, sub));
    } else {
      out.set(name, value);
    }
  }
  return out;
}

}  // namespace

Graph specialize_dims(const Graph& graph, const std::map<std::string, int64_t>& values) {
  Substitution sub;
  std::vector<DimVar> kept;
  for (const auto& [name, value] : values) {
    const DimVar* var = nullptr;
    for (const DimVar& v : graph.dim_vars()) {
      if (v.name() == name) var = &v;
    }
    if (var == nullptr) {
      std::string known;
      for (const DimVar& v : graph.dim_vars()) known += (known.empty() ? "" : ", ") + v.name();
      throw UserError(UserErrorKind::kNotFound, "size variable '" + name + "'", "is not one of the graph's",
                      known.empty() ? "the graph has static shapes only" : "the graph's size variables: " + known);
    }
    if (value < var->lo || value > var->hi) {
      throw UserError(UserErrorKind::kInvalidArgument, "size variable '" + name + "'",
                      "value " + std::to_string(value) + " is outside its range " + std::to_string(var->lo) + ".." +
                          std::to_string(var->hi),
                      "use a size in the declared range, or declare a wider one (--dim " + name + "=LO..HI)");
    }
    sub.emplace_back(var->var.node(), tir::make_int(value));
  }
  for (const DimVar& v : graph.dim_vars()) {
    if (!values.count(v.name())) kept.push_back(v);
  }

  // Constant (and input) names are unique in a graph: the folded shape_of take fresh ones.
  std::set<std::string> names;
  for (const NodePtr& node : graph.topo_order()) names.insert(node->name());
  auto unique_name = [&](const std::string& base) {
    std::string name = base + ".value";
    for (int k = 1; names.count(name); ++k) name = base + ".value" + std::to_string(k);
    names.insert(name);
    return name;
  };
  std::unordered_map<const Node*, std::vector<Value>> mapped;
  auto map_value = [&](const Value& v) { return mapped.at(v.node.get()).at(v.index); };
  for (const NodePtr& node : graph.topo_order()) {
    std::vector<Value> outs;
    switch (node->kind()) {
      case NodeKind::kInput: {
        const TensorType& t = node->output_types()[0];
        outs.push_back(make_input(node->name(), TensorType{t.dtype, specialize(t.shape, sub)})->output());
        break;
      }
      case NodeKind::kConstant: outs.push_back(node->output()); break;
      case NodeKind::kCall: {
        const CallNode& call = node->as_call();
        std::vector<Value> args;
        for (const Value& a : call.args()) args.push_back(map_value(a));
        const Attrs attrs = specialize(call.attrs(), sub);
        if (call.op().name == "shape_of" && args[0].type().shape.is_static()) {
          const Shape& s = args[0].type().shape;
          const int64_t start = attrs.get_int("start"), end = attrs.get_int("end");
          NDArray dims = NDArray::empty(DType::kI64, {end - start});
          for (int64_t i = start; i < end; ++i) dims.mutable_data<int64_t>()[i - start] = s[i].value();
          outs.push_back(make_constant(unique_name(node->name().empty() ? "shape_of" : node->name()), dims)->output());
          break;
        }
        NodePtr n = make_call(call.op(), args, attrs, node->name());
        for (int i = 0; i < n->num_outputs(); ++i) outs.push_back(n->output(i));
        break;
      }
    }
    mapped[node.get()] = std::move(outs);
  }
  std::vector<NodePtr> inputs;
  for (const NodePtr& in : graph.inputs()) inputs.push_back(mapped.at(in.get()).at(0).node);
  std::vector<Value> outputs;
  for (const Value& v : graph.outputs()) outputs.push_back(map_value(v));
  return Graph(inputs, outputs, graph.output_names(), kept);
}

std::map<std::string, int64_t> bind_dim_vars(const Graph& graph, const std::vector<std::vector<int64_t>>& input_shapes) {
  const auto& inputs = graph.inputs();
  if (input_shapes.size() != inputs.size()) {
    throw UserError(UserErrorKind::kInvalidArgument, "the run's inputs",
                    std::to_string(input_shapes.size()) + " given, the model takes " + std::to_string(inputs.size()));
  }
  auto subject = [&](size_t i, size_t axis) {
    return "input '" + inputs[i]->name() + "' dimension " + std::to_string(axis);
  };
  std::map<std::string, int64_t> values;
  std::map<std::string, std::string> bound_by;  // variable -> the dimension that set it
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& t = inputs[i]->output_types()[0];
    const std::vector<int64_t>& shape = input_shapes[i];
    if (shape.size() != t.shape.size()) {
      throw UserError(UserErrorKind::kInvalidArgument, "input '" + inputs[i]->name() + "'",
                      "has rank " + std::to_string(shape.size()) + ", the model takes " + t.to_string());
    }
    for (size_t a = 0; a < shape.size(); ++a) {
      const Dim& d = t.shape[a];
      const auto* var = d.is_symbolic() ? d.expr().as<tir::Variable>() : nullptr;
      if (var == nullptr) continue;
      const DimVar* decl = graph.find_dim_var(tir::Var(var));
      KILN_ICHECK(decl != nullptr) << "input '" << inputs[i]->name() << "' uses the undeclared size variable " << var->name;
      const int64_t v = shape[a];
      if (v < decl->lo || v > decl->hi) {
        throw UserError(UserErrorKind::kInvalidArgument, subject(i, a) + " (" + var->name + ")",
                        "is " + std::to_string(v) + ", outside the range " + std::to_string(decl->lo) + ".." +
                            std::to_string(decl->hi) + " of " + var->name,
                        "give a size in the range, or compile with a wider one (--dim " + var->name + "=LO..HI)");
      }
      auto [it, fresh] = values.emplace(var->name, v);
      if (!fresh && it->second != v) {
        throw UserError(UserErrorKind::kInvalidArgument, subject(i, a) + " (" + var->name + ")",
                        "is " + std::to_string(v) + ", but " + bound_by[var->name] + " set " + var->name + " to " +
                            std::to_string(it->second),
                        "the dimensions named " + var->name + " must have one size in a run");
      }
      if (fresh) bound_by[var->name] = subject(i, a);
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& t = inputs[i]->output_types()[0];
    for (size_t a = 0; a < t.shape.size(); ++a) {
      const Dim& d = t.shape[a];
      for (const tir::Var& v : dim_vars_of(d)) {
        if (!values.count(v.name())) {
          throw UserError(UserErrorKind::kUnsupported, subject(i, a) + " (" + d.to_string() + ")",
                          "uses the size variable " + v.name() + ", which no input dimension gives on its own",
                          "give " + v.name() + " a dimension of its own in some input");
        }
      }
      const int64_t want = evaluate_dim(d, values);
      if (input_shapes[i][a] != want) {
        throw UserError(UserErrorKind::kInvalidArgument, subject(i, a),
                        "is " + std::to_string(input_shapes[i][a]) + ", the model takes " +
                            (d.is_static() ? std::to_string(want) : d.to_string() + " = " + std::to_string(want)) +
                            " (input type " + t.to_string() + ")");
      }
    }
  }
  return values;
}

}  // namespace kiln::ir
