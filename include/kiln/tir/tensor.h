// Tensor expressions: *what* to compute, independent of loop order or storage.
//
//   Tensor A = placeholder({M, K}, DType::kF32, "A");
//   Tensor B = placeholder({K, N}, DType::kF32, "B");
//   IterVar k = reduce_axis(K, "k");
//   Tensor C = compute({M, N}, [&](const std::vector<Var>& i) {
//     return sum(A(i[0], k) * B(k, i[1]), {k}); }, "C");
//
// A Tensor is a handle to the operation producing it: a placeholder (a kernel input) or a compute
// (one expression per output element, over data-parallel axes; a Reduce may be the whole body).
// Shapes are static. Indexing a tensor out of its bounds is undefined; computes that need padding
// say so with select/guards in their body.
#ifndef KILN_TIR_TENSOR_H_
#define KILN_TIR_TENSOR_H_

#include <functional>
#include <string>
#include <vector>

#include "kiln/tir/expr.h"

namespace kiln::tir {

enum class OpKind : uint8_t { kPlaceholder, kCompute };

struct OperationNode : public Object {
  OpKind kind = OpKind::kPlaceholder;
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  // kCompute only: one data-parallel IterVar per output dimension, and the body (a Reduce at the
  // top for reductions).
  std::vector<IterVar> axis;
  Expr body;

  int ndim() const { return static_cast<int>(shape.size()); }
  // The reduction axes of the body (empty unless the body is a Reduce).
  std::vector<IterVar> reduce_axis() const;
  // The tensors this operation reads, in first-use order.
  std::vector<Tensor> inputs() const;
};

class Tensor : public Ref<OperationNode> {
 public:
  Tensor() = default;
  Tensor(const OperationNode* n) : Ref<OperationNode>(n) {}  // NOLINT
  explicit Tensor(const Ref<OperationNode>& r) : Ref<OperationNode>(r.get()) {}

  const std::string& name() const { return get()->name; }
  DType dtype() const { return get()->dtype; }
  const std::vector<int64_t>& shape() const { return get()->shape; }
  int ndim() const { return get()->ndim(); }

  // Element access inside a compute body: A(i, j). Checks the number of indices.
  Expr operator()(std::vector<Expr> indices) const;
  template <typename... Args>
  Expr operator()(Args... args) const {
    return (*this)(std::vector<Expr>{Expr(args)...});
  }
  bool operator==(const Tensor& o) const { return same_as(o); }
};

// The tensors that `e` reads (its TensorLoads), each once, in first-use order.
std::vector<Tensor> tensors_read(const Expr& e);

// A kernel input. Throws UserError on a negative dimension or an empty name.
Tensor placeholder(std::vector<int64_t> shape, DType dtype, std::string name);

// A computed tensor. `fn` gets one index variable per dimension (named after `name`'s axes:
// "i0", "i1", ... unless `axis_names` is given) and returns the element's value. The result dtype
// is the body's element type.
Tensor compute(std::vector<int64_t> shape, const std::function<Expr(const std::vector<Var>&)>& fn,
               std::string name, std::vector<std::string> axis_names = {});

// t(indices) where every index is inside t's shape, else `fallback` (e.g. the zero of a padded
// convolution input). Select evaluates both sides, so the read uses indices clamped into range:
// it never touches memory outside t.
Expr read_or(const Tensor& t, const std::vector<Expr>& indices, Expr fallback);

// A reduction axis over [0, extent), for sum/max_reduce/min_reduce.
IterVar reduce_axis(int64_t extent, std::string name);

}  // namespace kiln::tir

#endif  // KILN_TIR_TENSOR_H_
