// Preparing the decoded nodes of an ONNX graph for conversion, whatever exporter wrote them:
// every node gets a unique, non-empty name, and the nodes are put in topological order.
#ifndef KILN_FRONTEND_ONNX_NODE_ORDER_H_
#define KILN_FRONTEND_ONNX_NODE_ORDER_H_

#include <set>
#include <string>
#include <vector>

#include "onnx_node.h"

namespace kiln::frontend::onnx_import {

// Names: an empty node name becomes "<op_type>_<index>", a repeated one gets a suffix "_2", "_3", ...
// (ONNX does not require node names to be unique or present).
//
// Order: each node is moved after the producers of its inputs and implicit_inputs (values its
// subgraphs read from the outer scope) (ONNX Runtime accepts graphs whose
// nodes are not sorted; so does Kiln). The sort is stable: nodes already in order keep the file's
// order, and among ready nodes the earliest in the file goes first. `defined` holds the names
// defined before any node (graph inputs, initializers); an input that nothing defines is left for
// the converter to report.
//
// Errors (UserError naming `model_name` and the nodes): a value produced by two nodes, or by a node
// and also a graph input / initializer (the graph is ambiguous), and a cycle (lists its nodes).
void prepare_nodes(std::vector<OnnxNode>& nodes, const std::set<std::string>& defined, const std::string& model_name);

}  // namespace kiln::frontend::onnx_import

#endif  // KILN_FRONTEND_ONNX_NODE_ORDER_H_
