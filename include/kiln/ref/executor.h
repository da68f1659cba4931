// The reference executor: runs any graph by calling each operator's reference implementation (the
// OpDef's `reference`, plain C++ loops) in topological order. Each intermediate value is released
// right after its last use, so peak memory is the live set, not the whole graph. It is the oracle
// that generated code is tested against: simple and obviously correct, not fast.
#ifndef KILN_REF_EXECUTOR_H_
#define KILN_REF_EXECUTOR_H_

#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/ndarray.h"

namespace kiln::ref {

// `inputs` in the order of graph.inputs(); each must have exactly the input's type (else
// UserError(kInvalidArgument) naming the input). A graph with size variables runs at the sizes
// the inputs give (ir::bind_dim_vars, then ir::specialize_dims; their errors name the input and
// dimension). Returns one array per graph output.
std::vector<ir::NDArray> run_graph(const ir::Graph& graph, const std::vector<ir::NDArray>& inputs);

// Inputs by name; a missing or unknown name is a UserError listing the graph's inputs.
std::vector<ir::NDArray> run_graph(const ir::Graph& graph, const std::map<std::string, ir::NDArray>& inputs);

// Evaluates one call on concrete arguments (also used by the importer to fold constants); checks
// that the results have the call's inferred types.
std::vector<ir::NDArray> evaluate_call(const ir::CallNode& call, const std::vector<ir::NDArray>& args);

}  // namespace kiln::ref

#endif  // KILN_REF_EXECUTOR_H_
