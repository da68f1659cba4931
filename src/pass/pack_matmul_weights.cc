// PackMatmulWeights: matrix products whose right operand is a constant (the weights of a dense
// layer) take it pre-packed, so the kernel reads contiguous panels without packing B on every
// call; the FoldConstant that follows evaluates the packing once at compile time. Contract:
//   - matmul(a, w) with w a rank-2 constant, a of rank >= 2 and a float dtype becomes
//     matmul_packed(a, pack_matmul_b(w, n_block), n = N);
//   - gemm(a, w, c?) with trans_a = 0 and w a constant becomes
//     matmul_packed(a, pack_matmul_b(w, n_block, trans_b)), times alpha (a mul, when alpha != 1),
//     plus c (times beta when beta != 1; nothing when beta = 0 or c is absent). Those elementwise
//     ops become the product's epilogue in FuseOps.
//   - a of rank > 2 with more than one matrix in its batch dimensions is reshaped to one
//     [rows, K] matrix around the product (the weights are shared), result reshaped back;
//   - n_block = 2 x layout_block (the target's f32 vector lanes: two vectors per register-tile
//     row) when it divides N, else layout_block when that does, else 2 x layout_block capped at
//     N rounded up to the lanes; a product whose packed weights would be padded beyond
//     FoldConstant's growth limit is left alone.
//   - the same constant packed the same way by several products is packed once;
//   - Anything else (a non-constant b: batched attention products; 1-D operands; trans_a) is left
//     alone; the matmul kernel packs those itself.
// Numerics: the product accumulates in the same order as the matmul kernel; the gemm form rounds
// alpha * (a b) and the add of beta * c separately (the reference gemm rounds once): ~1 ulp.
// Stats: "packed", "batch_rows_merged".
#include <algorithm>
#include <map>
#include <tuple>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::Value;

class Packer : public ir::GraphMutator {
 public:
  Packer(const ir::Graph& graph, PassContext& ctx)
      : GraphMutator("PackMatmulWeights"), ctx_(ctx), names_(graph), lanes_(std::max(1, ctx.options().layout_block)) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    const bool is_matmul = &node.op() == matmul_, is_gemm = &node.op() == gemm_;
    if (!is_matmul && !is_gemm) return rebuild_call(node, args);
    const Value& a = args[0];
    const Value& w = args[1];
    if (w.node->kind() != ir::NodeKind::kConstant || w.type().rank() != 2 || a.type().rank() < 2 ||
        !ir::is_float(a.type().dtype)) {
      return rebuild_call(node, args);
    }
    const bool tb = is_gemm && node.attrs().get_int("trans_b") != 0;
    if (is_gemm && node.attrs().get_int("trans_a") != 0) return rebuild_call(node, args);
    const int64_t n = tb ? w.type().shape[0] : w.type().shape[1];
    const int64_t nb = n_block(n);
    // Zero columns past N would make the packed constant larger than the weights, and FoldConstant
    // leaves such growth alone (the kernel then packs B itself, as without this pass).
    const int64_t padded = (n + nb - 1) / nb * nb * (w.type().numel() / std::max<int64_t>(1, n));
    const auto& opt = ctx_.options();
    if (padded > w.type().numel() &&
        static_cast<double>(padded) > std::max(opt.fold_growth_limit * static_cast<double>(w.type().numel()),
                                               static_cast<double>(opt.fold_small_limit))) {
      return rebuild_call(node, args);
    }
    // One packing per weight (an unrolled recurrent layer multiplies by the same R at every step).
    Value& packed = packed_[{w.node.get(), nb, tb}];
    if (!packed.defined()) {
      packed = ir::make_call("pack_matmul_b", {w}, Attrs().set("n_block", nb).set("trans_b", int64_t{tb ? 1 : 0}))->output();
    }
    // A batch of row blocks times the same weights is one product of all the rows: a [B..., M, K]
    // with prod(B) > 1 runs as [prod(B) * M, K] (a view), so that e.g. a [197, 1, 768] input
    // (sequence-first attention) is one 197-row GEMM instead of 197 one-row GEMVs.
    const ir::Shape& as = a.type().shape;
    int64_t batch = 1;
    for (size_t i = 0; i + 2 < as.size(); ++i) batch *= as[i];
    Value y;
    if (batch > 1) {
      const ir::Shape rows = {batch * as[as.size() - 2], as.back()};
      ir::Shape out = as;
      out.back() = n;
      const Value a2 = ir::make_call("reshape", {a}, Attrs().set("shape", rows))->output();
      const Value y2 = ir::make_call("matmul_packed", {a2, packed}, Attrs().set("n", n), node.name())->output();
      y = ir::make_call("reshape", {y2}, Attrs().set("shape", out))->output();
      ++ctx_.stat("batch_rows_merged");
    } else {
      y = ir::make_call("matmul_packed", {a, packed}, Attrs().set("n", n), node.name())->output();
    }
    if (is_gemm) {
      const ir::DType dt = a.type().dtype;
      const double alpha = node.attrs().get_float("alpha"), beta = node.attrs().get_float("beta");
      if (alpha != 1.0) y = ir::make_call("mul", {y, scalar_constant(names_, "gemm_alpha", dt, alpha)->output()}, {})->output();
      if (args.size() > 2 && beta != 0.0) {
        Value c = args[2];
        if (beta != 1.0) c = ir::make_call("mul", {c, scalar_constant(names_, "gemm_beta", dt, beta)->output()}, {})->output();
        y = ir::make_call("add", {y, c}, {})->output();
      }
    }
    ++ctx_.stat("packed");
    return {y};
  }

 private:
  // Two vectors per panel row when they divide N, else one vector when it does, else two (padded).
  int64_t n_block(int64_t n) const {
    if (n % (2 * lanes_) == 0) return 2 * lanes_;
    if (n % lanes_ == 0) return lanes_;
    return std::min<int64_t>(2 * lanes_, (n + lanes_ - 1) / lanes_ * lanes_);
  }

  PassContext& ctx_;
  NameSupply names_;
  std::map<std::tuple<const ir::Node*, int64_t, bool>, Value> packed_;  // (weights, n_block, trans_b)
  const int64_t lanes_;
  const ir::OpDef* matmul_ = op_ptr("matmul");
  const ir::OpDef* gemm_ = op_ptr("gemm");
};

class PackMatmulWeights final : public Pass {
 public:
  const char* name() const override { return "PackMatmulWeights"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Packer(graph, ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_pack_matmul_weights() { return std::make_unique<PackMatmulWeights>(); }

}  // namespace kiln::pass
