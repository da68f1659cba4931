// NarrowConvToMatmul (-O3, right before AlterOpLayout): a pointwise convolution with fewer output
// channels than one vector becomes a matrix product over the pixels, in NCHW. Contract:
//   - candidates: f32 conv2d on a 4-D input with a 1x1 kernel, strides 1, pads 0 and groups 1
//     (dilations do not matter for 1x1) whose output channel count M is below both the layout
//     block (PassOptions::layout_block, the target's f32 vector width) and 9. AlterOpLayout
//     would give such a conv a block of M lanes (a partial vector) and an input transform to
//     NCHW{b}c on every call; the heads of segmentation, depth and detection networks (1 to 7
//     classes or maps) and the sweep's C=398 -> 4 layer ran at ~10% of the FMA peak that way.
//   - rewrite: y = reshape(matmul(reshape(w, [M, C]), reshape(x, [N, C, H*W])) (+ reshape(bias,
//     [M, 1])), [N, M, H, W]): the product reads the activation's rows as they are (contiguous
//     pixels; topi's matmul streams B unpacked for M <= 8 rows) with the pixels in the vector
//     lanes and the M rows in the register tile. The weight and bias reshapes fold to constants.
//   - values: the same sums in another order (f32 rounding differences only).
// Stats: "convs_converted".
#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "kiln/support/error.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::Value;

constexpr int64_t kMaxRows = 8;  // topi's matmul reads B unpacked up to this many rows

class NarrowConvRewriter : public ir::GraphMutator {
 public:
  explicit NarrowConvRewriter(PassContext& ctx) : GraphMutator("NarrowConvToMatmul"), ctx_(ctx) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    if (&node.op() != conv2d_ || args.size() < 2) return rebuild_call(node, args);
    const ir::TensorType& xt = args[0].type();
    const ir::TensorType& wt = args[1].type();
    const ir::TensorType& yt = node.output_types()[0];
    const Attrs& at = node.attrs();
    if (xt.dtype != ir::DType::kF32 || xt.shape.size() != 4 || wt.shape.size() != 4 || wt.shape[2] != 1 ||
        wt.shape[3] != 1 || !all_ints_equal(at.get_ints("strides"), 1) || !all_ints_equal(at.get_ints("pads"), 0) ||
        at.get_int("groups") != 1) {
      return rebuild_call(node, args);
    }
    const int64_t n = xt.shape[0], c = xt.shape[1], h = xt.shape[2], w = xt.shape[3], m = wt.shape[0];
    if (m >= ctx_.options().layout_block || m > kMaxRows) return rebuild_call(node, args);
    auto reshape = [&](const Value& v, std::vector<int64_t> shape) {
      return ir::make_call(*reshape_, {v}, Attrs().set("shape", std::move(shape)))->output();
    };
    Value y = ir::make_call(*matmul_, {reshape(args[1], {m, c}), reshape(args[0], {n, c, h * w})}, Attrs())->output();
    if (args.size() > 2) y = ir::make_call(*add_, {y, reshape(args[2], {m, 1})}, Attrs())->output();
    ir::NodePtr out = ir::make_call(*reshape_, {y}, Attrs().set("shape", std::vector<int64_t>{n, m, h, w}), node.name());
    KILN_ICHECK(out->output_types()[0] == yt) << "NarrowConvToMatmul changed the type to " << out->output_types()[0].to_string();
    ++ctx_.stat("convs_converted");
    return {out->output()};
  }

 private:
  PassContext& ctx_;
  const ir::OpDef* conv2d_ = op_ptr("conv2d");
  const ir::OpDef* matmul_ = op_ptr("matmul");
  const ir::OpDef* add_ = op_ptr("add");
  const ir::OpDef* reshape_ = op_ptr("reshape");
};

class NarrowConvToMatmul final : public Pass {
 public:
  const char* name() const override { return "NarrowConvToMatmul"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override {
    return NarrowConvRewriter(ctx).mutate(graph);
  }
};

}  // namespace

std::unique_ptr<Pass> make_narrow_conv_to_matmul() { return std::make_unique<NarrowConvToMatmul>(); }

}  // namespace kiln::pass
