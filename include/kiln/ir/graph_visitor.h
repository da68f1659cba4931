// Visiting and rewriting graphs.
//
// GraphVisitor walks every node of a graph once in topological order (arguments before users) and
// dispatches on the node kind to visit_input / visit_constant / visit_call.
//
// GraphMutator rewrites a graph bottom-up: each node is replaced by a list of Values, one per output
// of the original node. By default a call whose (rewritten) arguments are all unchanged is kept as
// the very same node, and a call whose arguments changed is rebuilt through make_call (re-running
// validation and type inference); so a mutator that changes nothing returns a graph whose nodes are
// all identical (pointer-equal) to the original's. Override rewrite_call (and, rarely,
// rewrite_input / rewrite_constant) to change nodes. In debug builds (no NDEBUG) the result is
// verified (verify_graph) before it is returned.
#ifndef KILN_IR_GRAPH_VISITOR_H_
#define KILN_IR_GRAPH_VISITOR_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::ir {

class GraphVisitor {
 public:
  virtual ~GraphVisitor() = default;
  void visit(const Graph& graph);

 protected:
  virtual void visit_input(const InputNode& node) {}
  virtual void visit_constant(const ConstantNode& node) {}
  virtual void visit_call(const CallNode& node) {}
};

class GraphMutator {
 public:
  // `pass_name` names the rewrite in verifier failures.
  explicit GraphMutator(std::string pass_name = "GraphMutator") : pass_name_(std::move(pass_name)) {}
  virtual ~GraphMutator() = default;

  Graph mutate(const Graph& graph);

 protected:
  // Each returns one Value per output of `node`. `new_args` are the already-rewritten arguments.
  virtual std::vector<Value> rewrite_input(const InputNode& node);
  virtual std::vector<Value> rewrite_constant(const ConstantNode& node);
  virtual std::vector<Value> rewrite_call(const CallNode& node, const std::vector<Value>& new_args);

  // The default call rewrite: the same node when `new_args` equal the node's arguments, else a
  // rebuilt call with the same op, attributes and name.
  static std::vector<Value> rebuild_call(const CallNode& node, const std::vector<Value>& new_args);
  // The Value an already-visited original value maps to (for use inside rewrite_*).
  Value mapped(const Value& original) const;

 private:
  std::string pass_name_;
  std::unordered_map<const Node*, std::vector<Value>> memo_;
};

}  // namespace kiln::ir

#endif  // KILN_IR_GRAPH_VISITOR_H_
