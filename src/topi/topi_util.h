// Helpers shared by the operator computes in src/topi/: element types, numpy broadcasting of
// index variables, flat <-> multi-dimensional indices, and the errors computes throw.
#ifndef KILN_SRC_TOPI_TOPI_UTIL_H_
#define KILN_SRC_TOPI_TOPI_UTIL_H_

#include <string>
#include <vector>

#include "kiln/ir/tensor_type.h"
#include "kiln/support/error.h"
#include "kiln/tir/expr.h"
#include "kiln/tir/tensor.h"
#include "kiln/topi/compute.h"

namespace kiln::topi {

using tir::Expr;
using tir::Tensor;
using tir::Var;

// The type sums and transcendental math of `dtype` are computed in: f32 for f16/bf16/f32, else
// the type itself.
ir::DType compute_dtype(ir::DType dtype);
// cast(dtype, e) unless e already has that element type.
Expr cast_to(ir::DType dtype, const Expr& e);
// The constant `value` of `dtype`.
Expr constant(ir::DType dtype, double value);

// Indices into `shape` for an element of a broadcast output indexed by `out` (numpy alignment to
// the right; size-1 dimensions read index 0).
std::vector<Expr> broadcast_indices(const std::vector<Var>& out, const ir::Shape& shape);
std::vector<Expr> broadcast_indices(const std::vector<Expr>& out, const ir::Shape& shape);
// Row-major flat index of `idx` in `shape`, and its inverse.
Expr ravel(const std::vector<Expr>& idx, const ir::Shape& shape);
std::vector<Expr> unravel(const Expr& flat, const ir::Shape& shape);
std::vector<Expr> as_exprs(const std::vector<Var>& vars);

ir::Shape shape_of(const Tensor& t);
ir::TensorType type_of(const Tensor& t);

// UserError(kUnsupported): "<op>: <what>" has no generated kernel yet.
[[noreturn]] void fail_unsupported(const std::string& op, const std::string& what, const std::string& hint = "");

// A single-output elementwise/injective result.
ComputeResult injective_result(Tensor out);

}  // namespace kiln::topi

#endif  // KILN_SRC_TOPI_TOPI_UTIL_H_
