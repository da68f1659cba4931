// ConvertInt8ConvToWinograd (-O3, after AlterInt8Layout and the FoldConstant that packs its
// weights; docs/int8.md, "Winograd F(2x2, 3x3) in integers"): rewrites int8_conv2d calls that
// Winograd F(2x2, 3x3) computes with fewer multiplies into int8_conv2d_winograd
// (src/ir/ops/int8_winograd.cc). Contract:
//   - candidates: int8_conv2d with 3x3 constant (packed) weights, strides 1, dilations 1, and a
//     blocked u8 input [N, C/ib, H, W, ib] with ib even (the output of another int8 kernel);
//   - exactness: the kernel's i32 arithmetic gives 4x the direct sum modulo 2^32, so it needs
//     |direct sum| < 2^29: converted only when C * 9 * 255 * max|w| < 2^29 (always for C < 1827);
//     then the result is bit-identical to int8_conv2d's (same requantize epilogue, same
//     dequantize attributes);
//   - when: int8_winograd_pays() (the shapes' cost rule, below), or every candidate when
//     PassOptions::winograd_tile forces a tile (2 or 4); none when it is 0 (Winograd off);
//   - the weights are unpacked from int8_pack_conv_weights' words and transformed here, at
//     compile time, by int8_winograd_weight_transform's reference (s16 pairs, 16/9 x the
//     convolution's words: 3.6x its bytes).
// Stats: "candidates" (3x3 stride-1 int8 convs seen), "convs_converted".
#include <cstdlib>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "kiln/ref/executor.h"
#include "kiln/support/error.h"
#include "pass/pass_util.h"

namespace kiln::pass {

bool int8_winograd_pays(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow) {
  // Units of one multiply-add of the direct kernel. The 16-bit product (vpmaddwd: 16 per
  // instruction) runs at the byte kernel's rate (vpmaddubsw + vpmaddwd: 32 per two), so
  // F(2x2, 3x3) does 16 per 2x2 tile and channel pair against the direct 36; below kBalance
  // tiles the product is bound by reading its 4-byte weight words (as the f32 rule in
  // convert_conv_to_winograd.cc); the transforms are memory-bound passes over 4x (input) and 8x
  // (output, i32) the activations, weighted kTransform per channel and tile.
  constexpr double kBalance = 12, kTransform = 128;
  const double tiles = static_cast<double>(n * ((oh + 1) / 2) * ((ow + 1) / 2));
  const double direct = 9.0 * static_cast<double>(n * oh * ow) * static_cast<double>(c * m);
  const double product = 16.0 * std::max(tiles, kBalance) * static_cast<double>(c * m);
  const double transforms = kTransform * tiles * static_cast<double>(c + m);
  return product + transforms < 0.8 * direct;
}

namespace {

using ir::Attrs;
using ir::Value;

class Int8WinogradConverter : public ir::GraphMutator {
 public:
  Int8WinogradConverter(const ir::Graph& graph, PassContext& ctx)
      : GraphMutator("ConvertInt8ConvToWinograd"), ctx_(ctx), names_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    if (&node.op() != int8_conv2d_) return rebuild_call(node, args);
    const Attrs& at = node.attrs();
    const ir::TensorType& xt = args[0].type();
    const ir::TensorType& pt = args[1].type();
    if (xt.rank() != 5 || xt.shape[4] % 2 != 0 || pt.rank() != 5 || pt.shape[2] != 3 || pt.shape[3] != 3 ||
        !all_ints_equal(at.get_ints("strides"), 1) || !all_ints_equal(at.get_ints("dilations"), 1)) {
      return rebuild_call(node, args);
    }
    ++ctx_.stat("candidates");
    if (args[1].node->kind() != ir::NodeKind::kConstant) return rebuild_call(node, args);
    const ir::TensorType& yt = node.output_types()[0];
    const int64_t c = xt.shape[1] * xt.shape[4], m = yt.shape[1] * yt.shape[4];
    const int forced = ctx_.options().winograd_tile;
    if (forced == 0 || (forced < 0 && !int8_winograd_pays(xt.shape[0], c, m, yt.shape[2], yt.shape[3]))) {
      return rebuild_call(node, args);
    }
    const ir::NDArray w = unpack_weights(args[1].node->as_constant().data(), c);
    int64_t max_w = 0;
    for (int8_t v : w.data<int8_t>()) max_w = std::max<int64_t>(max_w, std::abs(int64_t{v}));
    if (c * 9 * 255 * max_w >= (int64_t{1} << 29)) return rebuild_call(node, args);

    const Attrs tattrs = Attrs().set("ob", yt.shape[4]).set("ib", xt.shape[4]);
    const ir::NodePtr w_const = ir::make_constant(names_.fresh("int8_w"), w);
    ir::NodePtr transform = ir::make_call(*transform_, {w_const->output()}, tattrs);
    std::vector<ir::NDArray> u = ref::evaluate_call(transform->as_call(), {w});
    const std::string base = (args[1].node->name().empty() ? std::string("w") : args[1].node->name()) + ".winograd";
    const Value weights = ir::make_constant(names_.fresh(base), std::move(u[0]))->output();
    Attrs attrs;
    for (const char* key : {"pads", "x_zero_point", "y_zero_point", "clamp_min", "clamp_max", "dequantize", "dequantize_scale",
                            "dequantize_zero_point"}) {
      if (const ir::AttrValue* v = at.find(key)) attrs.set(key, *v);
    }
    ir::NodePtr conv = ir::make_call(*winograd_conv_, {args[0], weights, args[3], args[4]}, attrs, node.name());
    KILN_ICHECK(conv->output_types()[0] == yt) << "int8 winograd conv type " << conv->output_types()[0].to_string();
    ++ctx_.stat("convs_converted");
    return {conv->output()};
  }

 private:
  // s8 [M, C, 3, 3] from int8_pack_conv_weights' words [M/ob, ceil(C/4), 3, 3, ob].
  static ir::NDArray unpack_weights(const ir::NDArray& packed, int64_t c) {
    const ir::Shape& ps = packed.shape();
    const int64_t mb = ps[0], c4 = ps[1], ob = ps[4];
    ir::NDArray w = ir::NDArray::empty(ir::DType::kI8, {mb * ob, c, 3, 3});
    auto pw = packed.data<int32_t>();
    auto o = w.mutable_data<int8_t>();
    for (int64_t mm = 0; mm < mb * ob; ++mm)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t k = 0; k < 9; ++k) {
          const auto word = static_cast<uint32_t>(pw[(((mm / ob) * c4 + ci / 4) * 9 + k) * ob + mm % ob]);
          o[(mm * c + ci) * 9 + k] = static_cast<int8_t>(static_cast<uint8_t>(word >> (8 * (ci % 4))));
        }
    return w;
  }

  PassContext& ctx_;
  NameSupply names_;
  const ir::OpDef* int8_conv2d_ = op_ptr("int8_conv2d");
  const ir::OpDef* transform_ = op_ptr("int8_winograd_weight_transform");
  const ir::OpDef* winograd_conv_ = op_ptr("int8_conv2d_winograd");
};

class ConvertInt8ConvToWinograd final : public Pass {
 public:
  const char* name() const override { return "ConvertInt8ConvToWinograd"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override {
    return Int8WinogradConverter(graph, ctx).mutate(graph);
  }
};

}  // namespace

std::unique_ptr<Pass> make_convert_int8_conv_to_winograd() { return std::make_unique<ConvertInt8ConvToWinograd>(); }

}  // namespace kiln::pass
