// The passes' layer choice points: see layer_choice_hooks.h.
#include "pass/layer_choice_hooks.h"

#include <algorithm>

namespace kiln::pass {

namespace {

std::string conv_label(const char* what, int64_t kh, int64_t kw, int64_t c, int64_t m, int64_t h, int64_t w) {
  return std::string(what) + " conv2d " + std::to_string(kh) + "x" + std::to_string(kw) + " " + std::to_string(c) +
         "->" + std::to_string(m) + " @" + std::to_string(h) + "x" + std::to_string(w);
}

}  // namespace

int choose_winograd_tile(PassContext& ctx, const ir::CallNode& conv, const ir::TensorType& x,
                         const ir::TensorType& y, int rule_tile) {
  const ir::Attrs& at = conv.attrs();
  const ir::TensorType& wt = conv.args()[1].type();  // OIHW{ib}i{ob}o
  const int64_t c = x.shape[1] * x.shape[4], m = y.shape[1] * y.shape[4];
  LayerChoicePoint p;
  p.kind = "winograd_tile";
  p.structure = conv_layer_structure(ir::dtype_name(x.dtype), {x.shape[0], c, x.shape[2], x.shape[3]}, m,
                                     {wt.shape[2], wt.shape[3]}, at.get_ints("strides"), at.get_ints("pads"),
                                     at.get_ints("dilations"), at.get_int("groups"), ctx.options().layout_block);
  p.label = conv_label("winograd", wt.shape[2], wt.shape[3], c, m, x.shape[2], x.shape[3]);
  p.macs = conv_layer_macs({x.shape[0], c, x.shape[2], x.shape[3]}, m, {wt.shape[2], wt.shape[3]},
                           at.get_ints("strides"), at.get_ints("pads"), at.get_ints("dilations"), at.get_int("groups"));
  p.default_value = rule_tile;
  p.alternatives = {0, 2, 4};
  if (!std::binary_search(p.alternatives.begin(), p.alternatives.end(), p.default_value)) return rule_tile;
  return static_cast<int>(choose_layer(ctx, std::move(p)));
}

int64_t choose_conv_output_block(PassContext& ctx, const ir::CallNode& conv, const ir::TensorType& x,
                                 const ir::TensorType& w, int64_t rule_block, int64_t lanes) {
  const ir::Attrs& at = conv.attrs();
  const int64_t m = w.shape[0];
  LayerChoicePoint p;
  p.kind = "oc_block";
  p.structure = conv_layer_structure(ir::dtype_name(x.dtype), x.shape, m, {w.shape[2], w.shape[3]},
                                     at.get_ints("strides"), at.get_ints("pads"), at.get_ints("dilations"),
                                     at.get_int("groups"), ctx.options().layout_block);
  p.label = conv_label("oc_block", w.shape[2], w.shape[3], x.shape[1], m, x.shape[2], x.shape[3]);
  p.macs = conv_layer_macs(x.shape, m, {w.shape[2], w.shape[3]}, at.get_ints("strides"), at.get_ints("pads"),
                           at.get_ints("dilations"), at.get_int("groups"));
  p.default_value = rule_block;
  p.alternatives = {rule_block};
  for (int64_t b : {lanes, 2 * lanes, 4 * lanes}) {
    if (b > 1 && m % b == 0) p.alternatives.push_back(b);
  }
  std::sort(p.alternatives.begin(), p.alternatives.end());
  p.alternatives.erase(std::unique(p.alternatives.begin(), p.alternatives.end()), p.alternatives.end());
  if (p.alternatives.size() < 2) return rule_block;  // nothing to choose
  return choose_layer(ctx, std::move(p));
}

}  // namespace kiln::pass
