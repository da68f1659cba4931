// Kernel taps that read only zero padding (SimplifyInference's conv rule, docs/passes.md).
#ifndef KILN_PASS_CONV_PADDING_TAPS_H_
#define KILN_PASS_CONV_PADDING_TAPS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::pass {

// The taps [first, last] of one kernel axis that read the input for at least one output position:
// tap t of output o reads input index o * stride + t * dilation - pad_begin, which must lie in
// [0, in). first > last when no tap does.
struct LiveTaps {
  int64_t first = 0, last = -1;
};
LiveTaps live_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin);

// conv2d `node` (its arguments `args`) without the kernel rows/columns that only ever read zero
// padding (dilated convolutions on small feature maps, e.g. DeepLab's ASPP at rate 12..36 on a
// 10x10 map, where only the centre tap is live): the weights sliced to the live taps
// (strided_slice, folded when constant) and the pads reduced by the dropped taps' reach, so the
// output shape and values are unchanged (the dropped products were all x 0). nullopt when every
// tap is live, none is, or a reduced pad would be negative.
std::optional<ir::Value> drop_padding_taps(const ir::CallNode& node, const std::vector<ir::Value>& args);

}  // namespace kiln::pass

#endif  // KILN_PASS_CONV_PADDING_TAPS_H_
