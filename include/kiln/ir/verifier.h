// The graph verifier: checks the invariants every graph pass must preserve.
//   - every InputNode reachable from the outputs is one of the graph's declared inputs (no dangling
//     values), and every argument / output index is in range;
//   - a call's stored output types equal what its op's type inference gives now for its arguments'
//     types and its attributes (and the attributes pass the op's schema);
//   - the topological order puts every argument before its users (no cycles);
//   - input and constant names are unique, output names are unique and non-empty.
// Passes call verify_graph_in_debug after a rewrite (GraphMutator does it for them).
#ifndef KILN_IR_VERIFIER_H_
#define KILN_IR_VERIFIER_H_

#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::ir {

// Every problem found, one line each (empty: the graph is well-formed).
std::vector<std::string> verify_graph(const Graph& graph);

// Throws InternalError listing the problems, naming `context` (e.g. the pass that produced it).
void check_graph(const Graph& graph, const std::string& context);

// check_graph in debug builds (no NDEBUG); nothing in release builds.
void verify_graph_in_debug(const Graph& graph, const std::string& context);

}  // namespace kiln::ir

#endif  // KILN_IR_VERIFIER_H_
