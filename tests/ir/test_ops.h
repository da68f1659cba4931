// Small operators registered by the graph IR tests themselves, so these tests do not depend on the
// real operator set (src/ir/ops/): t_add (same-shape add, f32), t_scale (x * factor attribute),
// t_split2 (splits axis 0 in two halves: two outputs).
#ifndef KILN_TESTS_IR_TEST_OPS_H_
#define KILN_TESTS_IR_TEST_OPS_H_

#include "kiln/ir/op.h"
#include "kiln/support/error.h"

namespace kiln::testing_ops {

using namespace kiln::ir;

inline void register_test_ops() {
  static bool done = false;
  if (done) return;
  done = true;
  OpDef add;
  add.name = "t_add";
  add.min_inputs = add.max_inputs = 2;
  add.infer_type = [](const std::vector<TensorType>& in, const Attrs&) {
    if (in[0] != in[1]) throw UserError(UserErrorKind::kInvalidArgument, "t_add", "input types differ");
    return std::vector<TensorType>{in[0]};
  };
  add.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
    NDArray r = NDArray::empty(out[0].dtype, out[0].shape);
    for (int64_t i = 0; i < r.numel(); ++i) r.set_from_double(i, in[0].get_as_double(i) + in[1].get_as_double(i));
    return std::vector<NDArray>{r};
  };
  OpRegistry::global().add(add);

  OpDef scale;
  scale.name = "t_scale";
  scale.attrs = {{"factor", AttrKind::kFloat, AttrValue(1.0), "multiplier"},
                 {"tag", AttrKind::kString, AttrValue(std::string("x")), "free text"}};
  scale.infer_type = [](const std::vector<TensorType>& in, const Attrs&) { return std::vector<TensorType>{in[0]}; };
  scale.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out) {
    NDArray r = NDArray::empty(out[0].dtype, out[0].shape);
    for (int64_t i = 0; i < r.numel(); ++i) r.set_from_double(i, in[0].get_as_double(i) * attrs.get_float("factor"));
    return std::vector<NDArray>{r};
  };
  OpRegistry::global().add(scale);

  OpDef split;
  split.name = "t_split2";
  split.infer_type = [](const std::vector<TensorType>& in, const Attrs&) {
    if (in[0].rank() < 1 || in[0].shape[0] % 2 != 0) {
      throw UserError(UserErrorKind::kInvalidArgument, "t_split2", "axis 0 must be even");
    }
    TensorType half = in[0];
    half.shape[0] = dim_floordiv(half.shape[0], Dim(2));
    return std::vector<TensorType>{half, half};
  };
  split.reference = [](const std::vector<NDArray>& in, const Attrs&, const std::vector<TensorType>& out) {
    std::vector<NDArray> r;
    for (int k = 0; k < 2; ++k) {
      NDArray h = NDArray::empty(out[k].dtype, out[k].shape);
      for (int64_t i = 0; i < h.numel(); ++i) h.set_from_double(i, in[0].get_as_double(k * h.numel() + i));
      r.push_back(h);
    }
    return r;
  };
  OpRegistry::global().add(split);
}

}  // namespace kiln::testing_ops

#endif  // KILN_TESTS_IR_TEST_OPS_H_
