// ComputeHalfInFloat: float16/bfloat16 models compute their heavy operators in float32. x86 CPUs
// have no half-precision arithmetic (only conversions: F16C), so a convolution or matrix product
// on f16 storage converts every operand element it reads, per use, and the blocked f32 kernels
// (NCHWc convs, packed matmuls, Winograd) never apply. Contract:
//   - a call whose op pattern is kOutEWiseFusable, kCommReduce or kOpaque (convolutions, matrix
//     products, pooling, reductions, softmax, norms; never `fused`), whose outputs all have one
//     half dtype h (f16 or bf16) and that has at least one argument of dtype h, becomes
//     cast(op(cast(args of dtype h, f32), other args), h) per output: the op computes in f32 and
//     its result is rounded to h once, as the op's reference does (f16/bf16 inputs converted to
//     f32, computed, rounded back);
//   - elementwise, broadcast and injective calls stay in h (their computes already evaluate half
//     in f32 and round each result once, src/topi/elementwise.cc);
//   - the casts of constant weights are folded by the FoldConstant that follows (weights are
//     converted at compile time, once), and FuseOps fuses the output cast into the heavy op's
//     epilogue and an activation's input cast into the epilogue of the group that produces it, so
//     a chain conv -> add -> relu -> conv stores one tensor between the convolutions.
// The pass runs first at every opt level >= 1; on graphs without f16/bf16 calls it changes nothing.
// Stats: "promoted" (calls rewritten).
#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::DType;
using ir::Value;

bool is_half(DType t) { return t == DType::kF16 || t == DType::kBF16; }

class Promoter : public ir::GraphMutator {
 public:
  explicit Promoter(PassContext& ctx) : GraphMutator("ComputeHalfInFloat"), ctx_(ctx) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    const ir::OpPattern p = node.op().pattern;
    const bool heavy = p == ir::OpPattern::kOutEWiseFusable || p == ir::OpPattern::kCommReduce ||
                       p == ir::OpPattern::kOpaque;
    if (!heavy || &node.op() == fused_ || node.num_outputs() == 0) return rebuild_call(node, args);
    const DType h = node.output(0).type().dtype;
    if (!is_half(h)) return rebuild_call(node, args);
    for (int i = 0; i < node.num_outputs(); ++i) {
      if (node.output(i).type().dtype != h) return rebuild_call(node, args);
    }
    std::vector<Value> wide = args;
    bool any = false;
    for (Value& a : wide) {
      if (a.type().dtype != h) continue;
      a = ir::make_call("cast", {a}, Attrs().set("dtype", DType::kF32))->output();
      any = true;
    }
    if (!any) return rebuild_call(node, args);
    ir::NodePtr f32 = ir::make_call(node.op(), wide, node.attrs(), node.name());
    std::vector<Value> outs;
    for (int i = 0; i < f32->num_outputs(); ++i) {
      outs.push_back(ir::make_call("cast", {f32->output(i)}, Attrs().set("dtype", h))->output());
    }
    ++ctx_.stat("promoted");
    return outs;
  }

 private:
  PassContext& ctx_;
  const ir::OpDef* fused_ = op_ptr("fused");
};

class ComputeHalfInFloat final : public Pass {
 public:
  const char* name() const override { return "ComputeHalfInFloat"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Promoter(ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_compute_half_in_float() { return std::make_unique<ComputeHalfInFloat>(); }

}  // namespace kiln::pass
