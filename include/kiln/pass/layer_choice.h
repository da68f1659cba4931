// Graph-level tuning choices (issue 15): decision points inside graph passes that the auto-tuner
// may settle per layer, e.g. "Winograd or the direct convolution for this conv" or "the output
// channel block of this conv".
//
//   pass::LayerChoices choices;                       // no lookup: every point keeps its default
//   choices.lookup = [&](const LayerChoicePoint& p) -> std::optional<int64_t> { ... };
//   PassOptions po; po.layer_choices = &choices;      // the passes consult it and log every point
//
// Contract:
//   - A point is identified by its kind and the layer's structure (LayerChoicePoint::signature):
//     the op, its attributes and its input/weight shapes and the target's layout facts -- never a
//     node name. Layers with the same structure share one point (and one decision).
//   - choose_layer() returns the point's default when no LayerChoices is set, when the lookup has
//     no value for it, or when the looked-up value is not one of the point's alternatives. So
//     without records every pass behaves exactly as it does without this mechanism.
//   - Every point met is logged once (in the order first met) in LayerChoices::points, with the
//     value used and how many layers met it; `applied` counts the distinct points whose value came
//     from the lookup.
#ifndef KILN_PASS_LAYER_CHOICE_H_
#define KILN_PASS_LAYER_CHOICE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::pass {

class PassContext;

struct LayerChoicePoint {
  std::string kind;                   // the knob: "winograd_tile" (0 = direct, 2, 4) or "oc_block"
  std::string structure;              // readable layer structure (what the signature hashes)
  std::string label;                  // short, for reports: "conv2d 3x3 64->64 @56x56"
  int64_t default_value = 0;          // what the pass's own rule picks
  std::vector<int64_t> alternatives;  // sorted, unique, holds the default
  // The layer's multiply-adds (not part of the signature): with LayerChoices::Met::layers, the
  // share of the model's work the point decides (the layer tuner settles the heaviest first).
  double macs = 0;
  // 16 hex digits of FNV-1a over kind + structure: the tuning record's task key.
  std::string signature() const;
};

struct LayerChoices {
  // The decision for a point (e.g. from a tuning-records database); nullopt: the default.
  std::function<std::optional<int64_t>(const LayerChoicePoint&)> lookup;
  struct Met {
    LayerChoicePoint point;
    int64_t value = 0;       // what the pass used
    bool from_lookup = false;
    int64_t layers = 1;      // layers met with this structure (they share the decision)
  };
  std::vector<Met> points;                     // every distinct point met, first-met order
  std::map<std::string, size_t> index;         // signature -> points
  int applied() const;
};

// The structure text of a 2-D convolution layer: dtype, N C H W, M, kernel, strides, pads,
// dilations, groups, and the target's f32 lanes (the layout facts the passes derive blocks from).
std::string conv_layer_structure(const std::string& dtype, const std::vector<int64_t>& nchw, int64_t out_channels,
                                 const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                 const std::vector<int64_t>& pads, const std::vector<int64_t>& dilations,
                                 int64_t groups, int lanes);

// The multiply-adds of a 2-D convolution of an N x C x H x W input (NCHW dims, unblocked) into M
// channels with kernel kh x kw, strides, pads (top, left, bottom, right), dilations and groups.
double conv_layer_macs(const std::vector<int64_t>& nchw, int64_t out_channels, const std::vector<int64_t>& kernel,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                       const std::vector<int64_t>& dilations, int64_t groups);
// The value a pass uses at `point` (see the contract above).
int64_t choose_layer(PassContext& ctx, LayerChoicePoint point);

}  // namespace kiln::pass

#endif  // KILN_PASS_LAYER_CHOICE_H_
