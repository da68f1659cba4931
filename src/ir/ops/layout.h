// Tensor layouts for the blocked-layout operators (layout_transform, conv2d_nchwc).
//
// A layout string names each dimension of a tensor, outermost first. An upper-case letter is a
// primal axis (N, C, H, W for data; O, I, H, W for weights); a number followed by the same letter
// in lower case is an inner block of that axis with that many elements, and the upper-case
// dimension then counts blocks. Examples: "NCHW"; "NCHW8c" = [N, C/8, H, W, 8] with channel
// c = outer * 8 + inner; "OIHW8i16o" = [O/16, I/8, H, W, 8, 16]. Each primal axis appears once in
// upper case and at most once blocked; two layouts convert into each other when they have the
// same primal axes.
#ifndef KILN_IR_OPS_LAYOUT_H_
#define KILN_IR_OPS_LAYOUT_H_

#include <string>
#include <vector>

#include "kiln/ir/tensor_type.h"
#include "kiln/ir/ndarray.h"

namespace kiln::ir::ops {

struct LayoutDim {
  char axis;       // primal axis letter, upper case
  int64_t factor;  // 0: the primal (outer) dimension; > 0: an inner block of this many elements
};

struct Layout {
  std::string text;
  std::vector<LayoutDim> dims;
  // The block factor of a primal axis (1 when it is not blocked).
  int64_t block_of(char axis) const;
  bool has_axis(char axis) const;
};

// Parses a layout string; UserError(kInvalidArgument) naming `op` and `attr` when malformed.
Layout parse_layout(const std::string& text, const std::string& op, const std::string& attr);

// The shape a tensor of `shape` in `src` has in `dst` (checks ranks, primal axes and that each
// block divides its axis; errors name `op`).
Shape convert_layout_shape(const Shape& shape, const Layout& src, const Layout& dst, const std::string& op);

// Moves the elements of `in` (laid out as `src`) into layout `dst` (any dtype).
NDArray convert_layout(const NDArray& in, const Layout& src, const Layout& dst);

// "NCHW{block}c".
std::string nchwc_layout(int64_t block);

}  // namespace kiln::ir::ops

#endif  // KILN_IR_OPS_LAYOUT_H_
