// Dropping conv2d kernel taps that read only zero padding (see conv_padding_taps.h).
#include "pass/conv_padding_taps.h"

#include <algorithm>

#include "kiln/ir/graph_visitor.h"
#include "kiln/support/error.h"
#include "pass/pass_util.h"

namespace kiln::pass {

LiveTaps live_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin) {
  LiveTaps live{kernel, -1};
  for (int64_t t = 0; t < kernel; ++t) {
    const int64_t lo = t * dilation - pad_begin;  // input index of output 0
    // The first output whose index is >= 0, then whether it is still inside the input.
    const int64_t o = lo >= 0 ? 0 : (-lo + stride - 1) / stride;
    if (o < out && lo + o * stride < in) {
      live.first = std::min(live.first, t);
      live.last = std::max(live.last, t);
    }
  }
  return live;
}

std::optional<ir::Value> drop_padding_taps(const ir::CallNode& node, const std::vector<ir::Value>& args) {
  const ir::TensorType& x = args[0].type();
  const ir::TensorType& w = args[1].type();
  const ir::TensorType& y = node.output_types()[0];
  if (x.rank() != 4 || w.rank() != 4 || y.rank() != 4) return std::nullopt;
  const ir::Attrs& at = node.attrs();
  const std::vector<int64_t>& strides = at.get_ints("strides");
  const std::vector<int64_t>& dilations = at.get_ints("dilations");
  std::vector<int64_t> pads = at.get_ints("pads");  // [top, left, bottom, right]
  LiveTaps live[2];
  bool all_live = true;
  for (int a = 0; a < 2; ++a) {
    const int64_t k = w.shape[2 + a];
    live[a] = live_taps(x.shape[2 + a], y.shape[2 + a], k, strides[a], dilations[a], pads[a]);
    if (live[a].first > live[a].last) return std::nullopt;  // the output is the bias alone: leave it
    all_live = all_live && live[a].first == 0 && live[a].last == k - 1;
  }
  if (all_live) return std::nullopt;
  for (int a = 0; a < 2; ++a) {
    pads[a] -= live[a].first * dilations[a];
    pads[a + 2] -= (w.shape[2 + a] - 1 - live[a].last) * dilations[a];
    if (pads[a] < 0 || pads[a + 2] < 0) return std::nullopt;
  }
  const ir::Attrs slice = ir::Attrs()
                              .set("begins", std::vector<int64_t>{live[0].first, live[1].first})
                              .set("ends", std::vector<int64_t>{live[0].last + 1, live[1].last + 1})
                              .set("axes", std::vector<int64_t>{2, 3})
                              .set("steps", std::vector<int64_t>{1, 1});
  std::vector<ir::Value> conv_args = args;
  conv_args[1] = ir::make_call(*op_ptr("strided_slice"), {args[1]}, slice)->output();
  ir::Attrs attrs = at;
  attrs.set("pads", pads);
  ir::NodePtr conv = ir::make_call(node.op(), conv_args, attrs, node.name());
  KILN_ICHECK(conv->output_types()[0] == y) << "conv without padding taps has type " << conv->output_types()[0].to_string();
  return conv->output();
}

}  // namespace kiln::pass
