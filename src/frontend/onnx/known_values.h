// Known integer values: the importer's data propagation through the small integer ops that
// compute shapes (ONNX's shape inference does the same with its PartialDataPropagationFunction).
//
// A PyTorch export spells `x.view(b, t, h, d)` as Reshape(x, Concat(Unsqueeze(Gather(Shape(x),
// 0)), ...)). On static shapes every value of that chain is a constant and folds at import. On a
// symbolic shape the Shape is computed at run time, but its elements are still known as
// dimensions (`batch`, `seq`); this propagation carries them through Gather, Concat, Unsqueeze,
// Squeeze, Reshape, Slice, Cast, Identity, Size, the integer arithmetic (Add, Sub, Mul, Div, Mod,
// Max, Min), Equal and Where, so that the Reshape converter reads a symbolic target shape
// (ImportContext::dims_input) and the chain, left unused, is removed as dead code.
//
// Only values of rank 0 or 1 with at most kMaxKnownElements elements are tracked. A rule that
// cannot decide (a division whose result depends on a sign it cannot prove, an Equal of two
// dimensions that may or may not be equal) gives up: the value is then simply not known, and a
// converter that needs it reports it as computed at run time.
#ifndef KILN_FRONTEND_ONNX_KNOWN_VALUES_H_
#define KILN_FRONTEND_ONNX_KNOWN_VALUES_H_

#include <optional>

#include "onnx_node.h"

namespace kiln::frontend::onnx_import {

inline constexpr size_t kMaxKnownElements = 64;

// The known elements of the current node's first output, when the node is one of the operators
// above and every input it reads is known (ctx.known_input); nullopt otherwise. Reads only; the
// caller defines the output (a constant when every element is static) or records it.
std::optional<KnownInts> propagate_known(const ImportContext& ctx);

// True when `d` is >= 0 for every non-negative value of its size variables.
bool provably_non_negative(const ir::Dim& d);

// `k` as a constant array of its dtype (KILN_ICHECK: k.is_static()).
ir::NDArray known_array(const KnownInts& k);

}  // namespace kiln::frontend::onnx_import

#endif  // KILN_FRONTEND_ONNX_KNOWN_VALUES_H_
