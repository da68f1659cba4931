// Helpers shared by the graph passes: use counts, fresh constant names, and the registry lookup
// of the few operators a pass rewrites by identity (an OpDef pointer, never a name comparison on a
// node).
#ifndef KILN_PASS_PASS_UTIL_H_
#define KILN_PASS_PASS_UTIL_H_

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::pass {

// The OpDef of a registered operator (an InternalError when it is missing: the passes need it).
const ir::OpDef* op_ptr(const char* name);

// Number of uses of each node's outputs: by call arguments (once per argument) and graph outputs.
struct UseCounts {
  explicit UseCounts(const ir::Graph& graph);
  int of(const ir::Value& v) const;           // uses of that output
  int of_node(const ir::Node* node) const;    // uses of any output of the node
  std::unordered_map<const ir::Node*, std::vector<int>> per_output;
};

// Hands out constant names not used by the graph's inputs and constants ("<base>", "<base>.1", ...).
class NameSupply {
 public:
  explicit NameSupply(const ir::Graph& graph);
  std::string fresh(const std::string& base);

 private:
  std::set<std::string> used_;
};

// The reduced axes of a keepdims reduction (`axes` + `keepdims` attributes; no axes: all) when they
// are the trailing ones: the first of them; otherwise -1. (The mean/variance chains FuseLayerNorm
// and FuseRmsNorm recognize reduce over trailing axes.)
int64_t trailing_reduce_axis(const ir::CallNode& reduce);

// A scalar constant of `dtype`.
ir::NodePtr scalar_constant(NameSupply& names, const std::string& base, ir::DType dtype, double value);

// Whether every element of an int list attribute (strides, pads, dilations) equals `x` (true for
// an empty list).
bool all_ints_equal(const std::vector<int64_t>& v, int64_t x);

}  // namespace kiln::pass

#endif  // KILN_PASS_PASS_UTIL_H_
