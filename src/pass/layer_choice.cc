// Graph-level tuning choices: see include/kiln/pass/layer_choice.h.
#include "kiln/pass/layer_choice.h"

#include <algorithm>

#include "kiln/pass/pass.h"
#include "kiln/support/error.h"
#include "kiln/support/fnv.h"

namespace kiln::pass {

namespace {

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

std::string LayerChoicePoint::signature() const { return fnv1a64_hex(kind + "|" + structure); }

int LayerChoices::applied() const {
  return static_cast<int>(std::count_if(points.begin(), points.end(), [](const Met& m) { return m.from_lookup; }));
}

std::string conv_layer_structure(const std::string& dtype, const std::vector<int64_t>& nchw, int64_t out_channels,
                                 const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                 const std::vector<int64_t>& pads, const std::vector<int64_t>& dilations,
                                 int64_t groups, int lanes) {
  return "conv2d " + dtype + " x=" + join(nchw) + " m=" + std::to_string(out_channels) + " k=" + join(kernel) +
         " s=" + join(strides) + " p=" + join(pads) + " d=" + join(dilations) + " g=" + std::to_string(groups) +
         " lanes=" + std::to_string(lanes);
}

double conv_layer_macs(const std::vector<int64_t>& nchw, int64_t out_channels, const std::vector<int64_t>& kernel,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                       const std::vector<int64_t>& dilations, int64_t groups) {
  double macs = static_cast<double>(nchw[0]) * static_cast<double>(out_channels) *
                static_cast<double>(nchw[1] / std::max<int64_t>(1, groups));
  for (size_t d = 0; d < 2; ++d) {
    const int64_t window = dilations[d] * (kernel[d] - 1) + 1;
    const int64_t out = (nchw[2 + d] + pads[d] + pads[d + 2] - window) / std::max<int64_t>(1, strides[d]) + 1;
    macs *= static_cast<double>(kernel[d]) * static_cast<double>(std::max<int64_t>(0, out));
  }
  return macs;
}

int64_t choose_layer(PassContext& ctx, LayerChoicePoint point) {
  KILN_ICHECK(std::is_sorted(point.alternatives.begin(), point.alternatives.end()) &&
              std::binary_search(point.alternatives.begin(), point.alternatives.end(), point.default_value))
      << "layer choice " << point.kind << " alternatives must be sorted and hold the default";
  LayerChoices* choices = ctx.options().layer_choices;
  if (choices == nullptr) return point.default_value;
  const std::string sig = point.signature();
  auto it = choices->index.find(sig);
  if (it != choices->index.end()) {  // same structure: same decision
    ++choices->points[it->second].layers;
    return choices->points[it->second].value;
  }
  LayerChoices::Met met;
  met.value = point.default_value;
  if (choices->lookup) {
    if (std::optional<int64_t> v = choices->lookup(point);
        v && std::binary_search(point.alternatives.begin(), point.alternatives.end(), *v)) {
      met.value = *v;
      met.from_lookup = true;
    }
  }
  met.point = std::move(point);
  choices->index[sig] = choices->points.size();
  choices->points.push_back(std::move(met));
  return choices->points.back().value;
}

}  // namespace kiln::pass
