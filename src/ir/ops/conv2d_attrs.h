// The attribute schema shared by conv2d and conv2d_nchwc (the blocked-layout form AlterOpLayout
// makes): both take the same strides, pads, dilations and groups.
#ifndef KILN_SRC_IR_OPS_CONV2D_ATTRS_H_
#define KILN_SRC_IR_OPS_CONV2D_ATTRS_H_

#include <vector>

#include "kiln/ir/op.h"

namespace kiln::ir::ops {

inline std::vector<AttrSpec> conv2d_attr_specs() {
  return {
      {"strides", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1}), "[sh, sw]"},
      {"pads", AttrKind::kInts, AttrValue(std::vector<int64_t>{0, 0, 0, 0}), "[top, left, bottom, right]"},
      {"dilations", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1}), "[dh, dw]"},
      {"groups", AttrKind::kInt, AttrValue(int64_t{1}), "channel groups (C and M divisible by it)"},
  };
}

}  // namespace kiln::ir::ops

#endif  // KILN_SRC_IR_OPS_CONV2D_ATTRS_H_
