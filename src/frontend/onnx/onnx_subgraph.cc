// Converting decoded ONNX nodes: convert_node (one node through its operator's converter, used for
// the main graph and every subgraph alike) and import_subgraph (an If branch or a Loop/Scan body
// imported in a new scope of the ImportContext, with its formal inputs bound to given values, so
// that control-flow converters can inline it; names of enclosing graphs stay visible).
#include <new>
#include <stdexcept>

#include "kiln/frontend/onnx.h"
#include "kiln/support/error.h"
#include "known_values.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {

namespace {

std::string supported_list() {
  std::string s;
  for (const auto& op : onnx_supported_ops()) s += (s.empty() ? "" : ", ") + op;
  return s;
}

const char* value_kind_name(OnnxGraphValue::Kind k) {
  switch (k) {
    case OnnxGraphValue::kSequence: return "a sequence";
    case OnnxGraphValue::kOptional: return "an optional";
    case OnnxGraphValue::kOtherType: return "a non-tensor (map or sparse tensor)";
    default: return "a tensor";
  }
}

}  // namespace

void convert_node(ImportContext& ctx, const OnnxNode& node) {
  ctx.begin_node(&node);
  const bool contrib = node.domain == "com.microsoft";  // ONNX Runtime's quantized contrib operators
  if (!(node.domain.empty() || node.domain == "ai.onnx" || contrib)) {
    throw UserError(UserErrorKind::kUnsupported, ctx.node_subject(),
                    "operator domain '" + node.domain + "' is not supported (only ai.onnx and com.microsoft's quantized operators)",
                    "supported operators: " + supported_list());
  }
  const auto& table = contrib ? contrib_converters() : converters();
  auto it = table.find(node.op_type);
  if (it == table.end() && contrib) {
    throw UserError(UserErrorKind::kUnsupported, ctx.node_subject(),
                    "operator com.microsoft." + node.op_type + " is not supported",
                    "Kiln imports the com.microsoft quantized operators listed in docs/int8.md");
  }
  if (it == table.end()) {
    throw UserError(UserErrorKind::kUnsupported, ctx.node_subject(),
                    "operator " + node.op_type + " (opset " + std::to_string(ctx.opset()) + ") is not supported",
                    "supported operators: " + supported_list());
  }
  for (const auto& [name, attr] : node.attrs) {
    if (attr.kind == OnnxAttr::kOther) {
      ctx.fail_attr(name, "has a kind Kiln does not read (sparse tensor or list of strings/tensors/graphs)");
    }
  }
  if (node.outputs.empty()) {
    throw UserError(UserErrorKind::kParse, ctx.node_subject(), "has no outputs (every ONNX operator has at least one)",
                    "the file is corrupt");
  }
  std::vector<ir::Value> outs;
  try {
    // A value computed from symbolic shapes whose elements are known (known_values.h): a
    // constant when every element is static, else the converter's value, recorded as known.
    const std::optional<KnownInts> known = contrib ? std::nullopt : propagate_known(ctx);
    if (known && known->is_static()) {
      outs = {ctx.constant(known_array(*known), node.outputs[0])};
    } else {
      outs = it->second(ctx);
    }
    if (known && !known->is_static() && !outs.empty() && outs[0].defined()) {
      const ir::TensorType& t = outs[0].type();
      KILN_ICHECK(t.rank() == (known->scalar ? 0 : 1) && ir::shape_numel_dim(t.shape) == ir::Dim(known->elems.size()))
          << ctx.node_subject() << ": the known value has " << known->elems.size() << " elements, the converter made "
          << t.to_string();
      ctx.set_known(outs[0], *known);
    }
  } catch (const std::bad_alloc&) {
    // The safety net under the size checks (import_limits.h) that run before known allocations.
    throw UserError(UserErrorKind::kInvalidArgument, ctx.node_subject(),
                    "ran out of memory while converting (a constant or a value evaluated at import is too large)",
                    "the model is corrupt, or this machine lacks the memory to import it");
  } catch (const ir::SymbolicSizeError& e) {
    throw UserError(UserErrorKind::kUnsupported, ctx.node_subject(),
                    "needs the static size of the symbolic dimension '" + e.dim() +
                        "' (this operator's import does not work on symbolic shapes yet)",
                    e.hint());
  } catch (const std::out_of_range& e) {
    // The safety net under the converters' own shape checks: an operand of a rank the converter
    // indexes past (found by fuzzing; each case also gets its own check with a precise message).
    throw UserError(UserErrorKind::kInvalidArgument, ctx.node_subject(),
                    std::string("has an input of a rank or size its operator does not take (") + e.what() + ")",
                    "check the node's input shapes against the ONNX operator's definition");
  }
  if (outs.size() > node.outputs.size()) {  // converters return optional trailing outputs only when named
    throw UserError(UserErrorKind::kParse, ctx.node_subject(),
                    "names " + std::to_string(node.outputs.size()) + " outputs; the operator requires " +
                        std::to_string(outs.size()),
                    "the file is corrupt");
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k].empty()) continue;
    if (k >= outs.size() || !outs[k].defined()) {
      ctx.fail_unsupported("output " + std::to_string(k) + " ('" + node.outputs[k] + "') is not supported");
    }
    ctx.define(node.outputs[k], outs[k]);
  }
}

std::vector<ir::Value> import_subgraph(ImportContext& ctx, const OnnxGraph& graph, const std::vector<ir::Value>& inputs,
                                       const std::string& where) {
  // Checked before entering the scope, so that the error names the control-flow node.
  auto refuse_kind = [&](const OnnxGraphValue& v, const char* role) {
    if (v.kind == OnnxGraphValue::kTensor || v.kind == OnnxGraphValue::kUntyped) return;
    ctx.fail_unsupported(std::string(role) + " '" + v.name + "' of " + where + " is " + value_kind_name(v.kind) +
                             ": sequence and optional types are not supported (Kiln compiles tensors only)",
                         "export the model without sequence/optional values (e.g. return tensors, not lists)");
  };
  for (const auto& v : graph.inputs) refuse_kind(v, "input");
  for (const auto& v : graph.outputs) refuse_kind(v, "output");
  if (inputs.size() != graph.inputs.size()) {
    ctx.fail_invalid(where + " declares " + std::to_string(graph.inputs.size()) + " inputs, the node passes it " +
                     std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& formal = graph.inputs[i];
    if (formal.dtype && *formal.dtype != inputs[i].type().dtype) {
      ctx.fail_invalid(where + " declares input " + std::to_string(i) + " ('" + formal.name + "') as " +
                       ir::dtype_name(*formal.dtype) + ", the node passes it " + inputs[i].type().to_string());
    }
  }
  std::vector<ir::Value> outs;
  {
    SubgraphScope scope(ctx, where);
    for (const auto& [name, data] : graph.initializers) ctx.define(name, ctx.constant(data, name));
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!graph.inputs[i].name.empty()) ctx.define(graph.inputs[i].name, inputs[i]);
    }
    for (const OnnxNode& node : graph.nodes) convert_node(ctx, node);
    ctx.begin_node(nullptr);
    for (const auto& out : graph.outputs) {
      if (!ctx.has(out.name)) {
        throw UserError(UserErrorKind::kParse, ctx.model_name() + ": " + where,
                        "output '" + out.name + "' is not defined by the subgraph or an enclosing graph");
      }
      outs.push_back(ctx.value(out.name));
    }
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const auto& formal = graph.outputs[k];
    if (formal.dtype && *formal.dtype != outs[k].type().dtype) {
      ctx.fail_invalid(where + " declares output " + std::to_string(k) + " ('" + formal.name + "') as " +
                       ir::dtype_name(*formal.dtype) + " but computes " + outs[k].type().to_string());
    }
  }
  return outs;
}

int64_t subgraph_size(const OnnxGraph& graph) {
  int64_t n = 0;
  for (const OnnxNode& node : graph.nodes) {
    ++n;
    for (const auto& [name, attr] : node.attrs) {
      if (attr.kind == OnnxAttr::kGraph && attr.graph) n += subgraph_size(*attr.graph);
    }
  }
  return n;
}

}  // namespace kiln::frontend::onnx_import
