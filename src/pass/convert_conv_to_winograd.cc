// ConvertConvToWinograd (-O3, after AlterOpLayout and the FoldConstant that packs the weights):
// rewrites conv2d_nchwc calls that a Winograd F(m x m, 3 x 3) kernel computes with fewer
// operations into conv2d_winograd_nchwc (src/ir/ops/conv2d_winograd.cc). Contract:
//   - candidates: f32 conv2d_nchwc with a 3x3 kernel, strides 1, dilations 1, groups 1 and
//     constant weights (so the weight transform G g G^T is done here, at compile time, by the
//     winograd_weight_transform reference; the new constant holds a*a/9 times the weights:
//     4x for F(4x4), 1.8x for F(2x2));
//   - the tile m (0 = keep the direct convolution, 2 or 4) comes from winograd_tile_for(): a rule
//     on the shapes only (see there), or PassOptions::winograd_tile when that forces one, or a
//     tuning record's decision for this conv's structure (PassOptions::layer_choices);
//   - values change by Winograd's rounding: F(4x4, 3x3) in f32 differs from the direct
//     convolution by up to ~1e-5 relative on ResNet-50-sized layers (measured in
//     tests/topi/conv2d_winograd_test.cc); the references compute in double (exact up to the
//     f32 rounding of the transformed weights).
// Stats: "convs_converted", "tile4", "tile2" (convs per tile size), "candidates" (3x3 stride-1
// convs seen).
#include <cmath>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "kiln/ref/executor.h"
#include "kiln/support/error.h"
#include "pass/layer_choice_hooks.h"
#include "pass/pass_util.h"

namespace kiln::pass {

int winograd_tile_for(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow) {
  // Estimated time in units of one FMA of the direct kernel (which runs near peak: 9 FMAs per
  // output pixel and channel pair). Winograd with tile t (a = t + 2, P tiles):
  //   - the batched product: a*a*P*C*M FMAs at about the same speed, but it reads a*a*C*M
  //     transformed weights once per call, each used by P tiles: below kBalance tiles it is bound
  //     by memory bandwidth (a weight float costs kBalance FMAs' time: ~100 GFLOP/s of FMA
  //     against ~15 GB/s from DRAM on the Zen 3 machine), so it counts max(P, kBalance);
  //   - the transforms: B^T d B per tile and input channel, A^T m A per tile and output channel,
  //     about 2*a^3/3 vector operations each after sharing the row sums; memory-bound passes over
  //     a*a/(t*t) times the activations, weighted kTransform (measured on Zen 3: F(4x4) on
  //     56x56x64 spends ~20-25% of its 0.83 ms outside the product; the rule then agrees with the
  //     measured winner on every layer of docs/performance.md's Winograd table, 16 to 512
  //     channels, 7x7 to 112x112).
  // The direct convolution stays unless the estimate is at least 20% lower.
  constexpr double kBalance = 12, kTransform = 3;
  const double direct = 9.0 * static_cast<double>(n * oh * ow) * static_cast<double>(c * m);
  int best = 0;
  double best_cost = direct;
  for (int t : {2, 4}) {
    const double a = t + 2;
    const double tiles = static_cast<double>(n * ((oh + t - 1) / t) * ((ow + t - 1) / t));
    const double product = a * a * std::max(tiles, kBalance) * static_cast<double>(c * m);
    const double transforms = kTransform * tiles * (2 * a * a * a / 3) * static_cast<double>(c + m);
    const double cost = product + transforms;
    if (cost < 0.8 * direct && cost < best_cost) {
      best = t;
      best_cost = cost;
    }
  }
  return best;
}

namespace {

using ir::Attrs;
using ir::Value;

class WinogradConverter : public ir::GraphMutator {
 public:
  WinogradConverter(const ir::Graph& graph, PassContext& ctx)
      : GraphMutator("ConvertConvToWinograd"), ctx_(ctx), names_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    if (&node.op() != conv2d_nchwc_) return rebuild_call(node, args);
    const Attrs& at = node.attrs();
    const ir::TensorType& xt = args[0].type();
    const ir::TensorType& wt = args[1].type();
    const bool shape_ok = xt.dtype == ir::DType::kF32 && wt.shape.size() == 6 && wt.shape[2] == 3 && wt.shape[3] == 3 &&
                          all_ints_equal(at.get_ints("strides"), 1) && all_ints_equal(at.get_ints("dilations"), 1) &&
                          at.get_int("groups") == 1;
    if (!shape_ok) return rebuild_call(node, args);
    ++ctx_.stat("candidates");
    if (args[1].node->kind() != ir::NodeKind::kConstant) return rebuild_call(node, args);
    const ir::TensorType& yt = node.output_types()[0];
    const int64_t c = xt.shape[1] * xt.shape[4], m = yt.shape[1] * yt.shape[4];
    const int forced = ctx_.options().winograd_tile;
    // Tuning records may settle this conv's tile (layer_choice_hooks.h); without them, the rule's.
    const int tile = forced >= 0 ? forced
                                 : choose_winograd_tile(ctx_, node, xt, yt,
                                                        winograd_tile_for(xt.shape[0], c, m, yt.shape[2], yt.shape[3]));
    if (tile != 2 && tile != 4) return rebuild_call(node, args);

    const Attrs tile_attrs = Attrs().set("tile", int64_t{tile});
    ir::NodePtr transform = ir::make_call(*weight_transform_, {args[1]}, tile_attrs);
    std::vector<ir::NDArray> u = ref::evaluate_call(transform->as_call(), {args[1].node->as_constant().data()});
    const std::string base = (args[1].node->name().empty() ? std::string("w") : args[1].node->name()) + ".winograd";
    Value weights = ir::make_constant(names_.fresh(base), std::move(u[0]))->output();
    std::vector<Value> conv_args = {args[0], weights};
    if (args.size() > 2) conv_args.push_back(args[2]);
    ir::NodePtr conv = ir::make_call(*winograd_conv_, conv_args,
                                     Attrs().set("pads", at.get_ints("pads")).set("tile", int64_t{tile}), node.name());
    KILN_ICHECK(conv->output_types()[0] == yt) << "winograd conv type " << conv->output_types()[0].to_string();
    ++ctx_.stat("convs_converted");
    ++ctx_.stat(tile == 4 ? "tile4" : "tile2");
    return {conv->output()};
  }

 private:
  PassContext& ctx_;
  NameSupply names_;
  const ir::OpDef* conv2d_nchwc_ = op_ptr("conv2d_nchwc");
  const ir::OpDef* weight_transform_ = op_ptr("winograd_weight_transform");
  const ir::OpDef* winograd_conv_ = op_ptr("conv2d_winograd_nchwc");
};

class ConvertConvToWinograd final : public Pass {
 public:
  const char* name() const override { return "ConvertConvToWinograd"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override {
    return WinogradConverter(graph, ctx).mutate(graph);
  }
};

}  // namespace

std::unique_ptr<Pass> make_convert_conv_to_winograd() { return std::make_unique<ConvertConvToWinograd>(); }

}  // namespace kiln::pass
