// Fused groups in the graph IR: the `fused` operator.
//
// FuseOps turns each group of operators that will become one kernel into a call of the registered
// operator `fused`, whose string attribute `body` holds the group's sub-graph in the IR's text
// form on one line, and whose `label` names it (the member ops joined by '_', e.g.
// "conv2d_add_relu"). So a fused graph is an ordinary graph: the printer, parser, verifier,
// structural equality and reference executor handle it with no special case.
//
//   %5 = fused(%4, %w1, %b1, body="graph(%p0: f32[1, 64, 56, 56], ...) { %0 = conv2d(%p0, %p1, %p2, ...)
//        : f32[...] %1 = relu(%0) : f32[...] return %1 as \"out0\" }", label="conv2d_relu") : f32[...]
//
// Contract of a body: its inputs are the fused call's arguments in order (named %p0, %p1, ...);
// its calls, in topological order, are the group's operators; its outputs ("out0", ...) are the
// call's outputs. Small constants (<= 16 elements) may live inside the body; weights are always
// arguments. Bodies never contain `fused` calls. The type inference of `fused` parses the body
// (parsed bodies are cached by text, so each distinct body is parsed once per process) and checks
// the argument types against the body's inputs; its reference implementation runs the body on the
// reference executor.
//
// Lowering takes a group directly from fused_body(call): inputs, topo_order() calls, outputs.
#ifndef KILN_PASS_FUSED_CALL_H_
#define KILN_PASS_FUSED_CALL_H_

#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::pass {

// The registered `fused` operator.
const ir::OpDef& fused_op();
bool is_fused_call(const ir::Node& node);

// The body of a fused call (cached; shared).
std::shared_ptr<const ir::Graph> fused_body(const ir::CallNode& call);
// Parses a body text (cached). UserError(kParse) for a bad body.
std::shared_ptr<const ir::Graph> parse_fused_body(const std::string& text);

// The one-line text of a body (every constant inline).
std::string fused_body_text(const ir::Graph& body);

// A `fused` call of `body` on `args` (which must have the types of body's inputs).
ir::NodePtr make_fused_call(const ir::Graph& body, std::vector<ir::Value> args, const std::string& label);

}  // namespace kiln::pass

#endif  // KILN_PASS_FUSED_CALL_H_
