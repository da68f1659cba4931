// The attribute schema shared by max_pool2d/avg_pool2d and their blocked-layout forms
// max_pool2d_nchwc/avg_pool2d_nchwc (pool_nchwc.cc), which AlterOpLayout makes.
#ifndef KILN_SRC_IR_OPS_POOL_ATTRS_H_
#define KILN_SRC_IR_OPS_POOL_ATTRS_H_

#include <vector>

#include "kiln/ir/op.h"

namespace kiln::ir::ops {

// Window attributes; `average` adds avg_pool2d's count_include_pad.
inline std::vector<AttrSpec> pool2d_attr_specs(bool average) {
  std::vector<AttrSpec> a = {
      {"kernel", AttrKind::kInts, std::nullopt, "[kh, kw]"},
      {"strides", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1}), "[sh, sw]"},
      {"pads", AttrKind::kInts, AttrValue(std::vector<int64_t>{0, 0, 0, 0}), "[top, left, bottom, right]"},
      {"dilations", AttrKind::kInts, AttrValue(std::vector<int64_t>{1, 1}), "[dh, dw]"},
      {"ceil_mode", AttrKind::kInt, AttrValue(int64_t{0}), "1: round the output size up"},
  };
  if (average) a.push_back({"count_include_pad", AttrKind::kInt, AttrValue(int64_t{0}), "1: padding counts in the divisor"});
  return a;
}

}  // namespace kiln::ir::ops

#endif  // KILN_SRC_IR_OPS_POOL_ATTRS_H_
