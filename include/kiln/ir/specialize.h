// Specialization of size variables: a graph with symbolic dimensions (kiln/ir/dim.h) and values
// for some or all of its size variables becomes the graph with those values substituted. Input
// types and shape attributes are rewritten, every call's type is inferred anew, and a `shape_of`
// whose shape became static becomes a constant. The variables left keep their declared ranges.
//
// This is the step between one symbolic graph and a static one: the static variants of a dynamic
// model (buckets) and tests that run a symbolically imported model at concrete sizes are built on
// it, and its range check is the one the executor applies to each run's input shapes.
#ifndef KILN_IR_SPECIALIZE_H_
#define KILN_IR_SPECIALIZE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::ir {

// `values` maps size-variable names to sizes. A name the graph does not declare is
// UserError(kNotFound) listing the graph's variables; a value outside its variable's range is
// UserError(kInvalidArgument) naming the variable, the value and the range.
Graph specialize_dims(const Graph& graph, const std::map<std::string, int64_t>& values);

// The values of the size variables that a run's input shapes (one per graph input, in order) give:
// a dimension that is a size variable binds it; every other dimension (static, or an expression
// such as `seq + 1`) is then checked against the bound values. Errors are UserError
// (kInvalidArgument) naming the input, the dimension and the value: a wrong number of inputs or
// rank, a static size or expression that does not match, a variable bound to two values, a value
// outside its variable's range; a variable that only expressions use is kUnsupported.
std::map<std::string, int64_t> bind_dim_vars(const Graph& graph, const std::vector<std::vector<int64_t>>& input_shapes);

}  // namespace kiln::ir

#endif  // KILN_IR_SPECIALIZE_H_
