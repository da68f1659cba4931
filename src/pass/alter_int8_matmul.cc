// AlterInt8Matmul: puts quantized matmuls with constant weights on the fast int8 matmul kernel
// (docs/int8.md, "Int8 matmul"; the kernel: include/kiln/topi/int8.h). Contract:
//   - qnn_matmul(a, w, a_zp, w_zp) with a u8 of rank >= 2, w an s8 constant [K, N], w_zp constant
//     zeros (one value or [N]) and a_zp one u8 value (constant or computed at run time: dynamic
//     quantization) becomes int8_matmul_i32(a', int8_pack_matmul_weights(w),
//     int8_matmul_weight_sums(w), a_zp): the same i32 product. a' = a, or reshape(a, [rows, K])
//     when a has batch dimensions (the rows of every batch times the same weights form one
//     product), the result reshaped back to [.., M, N].
//   - requantize(qnn_matmul(...), x_scale, y_scale, y_zp, bias?) of such a matmul, with a_zp,
//     x_scale (one value or per column, requantize axis = the last), y_scale, y_zp (u8) and the
//     bias (i32, one value or [N]) constants, becomes one int8_matmul: the product and the
//     requantize epilogue in one kernel writing u8, scale[n] = x_scale[n] / y_scale (requantize's
//     own f32 division, done here), zero points and clamps as attributes.
//   - narrow = 1 when every weight is in [-64, 64] (topi::int8::weights_fit_narrow): the AVX2
//     single-vpmaddubsw form; otherwise the exact two-step form. Results are identical.
//   The packing and the column sums are folded by the FoldConstant that follows.
// Numerics: bit-exact to the rewritten ops (the op references in src/ir/ops/int8_matmul.cc).
// Anything else (i8 activations, u8 weights, weight zero points, per-row activation zero points,
// two run-time operands) is left to the generic integer kernels.
// Stats: "int8_matmul" (requantized), "int8_matmul_i32", "narrow".
#include <unordered_map>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "kiln/topi/int8.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::DType;
using ir::Value;

constexpr int64_t kPanelWidth = 16;  // output columns per panel: two i32 vectors on AVX2

const ir::NDArray* constant_of(const Value& v) {
  return v.node->kind() == ir::NodeKind::kConstant ? &v.node->as_constant().data() : nullptr;
}

// The operands of a qnn_matmul that the fast kernel takes (already mapped by the mutator).
struct FastMatmul {
  Value a, w, a_zero_point;
  bool narrow = false;
};

class Int8MatmulRewriter : public ir::GraphMutator {
 public:
  Int8MatmulRewriter(const ir::Graph& graph, PassContext& ctx) : GraphMutator("AlterInt8Matmul"), ctx_(ctx), names_(graph) {}

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    if (&node.op() == qnn_matmul_) {
      const std::optional<FastMatmul> mm = fast_operands(args);
      if (!mm) return rebuild_call(node, args);
      ++ctx_.stat("int8_matmul_i32");
      const Value y = product(*mm, [&](const Value& a2, const Value& packed, const Value& sums, int64_t n) {
        const Attrs attrs = Attrs().set("n", n).set("narrow", int64_t{mm->narrow ? 1 : 0});
        return ir::make_call("int8_matmul_i32", {a2, packed, sums, mm->a_zero_point}, attrs, node.name())->output();
      });
      fast_[y.node.get()] = *mm;
      return {y};
    }
    if (&node.op() == requantize_) {
      if (std::optional<Value> y = requantized(node, args)) return {*y};
    }
    return rebuild_call(node, args);
  }

 private:
  std::optional<FastMatmul> fast_operands(const std::vector<Value>& args) const {
    const Value &a = args[0], &w = args[1], &azp = args[2], &wzp = args[3];
    const ir::NDArray *wc = constant_of(w), *wz = constant_of(wzp);
    if (!wc || !wz || a.type().dtype != DType::kU8 || a.type().rank() < 2 || w.type().dtype != DType::kI8 ||
        w.type().rank() != 2 || azp.type().dtype != DType::kU8 || azp.type().numel() != 1) {
      return std::nullopt;
    }
    for (int64_t i = 0; i < wz->numel(); ++i) {
      if (wz->get_as_double(i) != 0) return std::nullopt;
    }
    return FastMatmul{a, w, azp, topi::int8::weights_fit_narrow(wc->data<int8_t>().data(), wc->numel())};
  }

  // make(a [rows, K], panels, column sums, N) -> [rows, N], wrapped in the reshapes a batched `a` needs.
  template <typename Make>
  Value product(const FastMatmul& mm, Make make) {
    const ir::Shape& as = mm.a.type().shape;
    const int64_t k = as.back(), n = mm.w.type().shape[1];
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < as.size(); ++i) rows *= as[i];
    if (mm.narrow) ++ctx_.stat("narrow");
    const Value packed = ir::make_call("int8_pack_matmul_weights", {mm.w}, Attrs().set("nb", kPanelWidth))->output();
    const Value sums = ir::make_call("int8_matmul_weight_sums", {mm.w}, {})->output();
    const Value a2 = as.size() == 2 ? mm.a : ir::make_call("reshape", {mm.a}, Attrs().set("shape", ir::Shape{rows, k}))->output();
    const Value y2 = make(a2, packed, sums, n);
    if (as.size() == 2) return y2;
    ir::Shape out = as;
    out.back() = n;
    return ir::make_call("reshape", {y2}, Attrs().set("shape", out))->output();
  }

  // requantize(int8 product) with constant parameters -> one int8_matmul; nullopt otherwise.
  std::optional<Value> requantized(const ir::CallNode& node, const std::vector<Value>& args) {
    const auto it = fast_.find(args[0].node.get());
    if (it == fast_.end()) return std::nullopt;
    const FastMatmul& mm = it->second;
    const int64_t n = mm.w.type().shape[1];
    const ir::NDArray *azp = constant_of(mm.a_zero_point), *xs = constant_of(args[1]), *ys = constant_of(args[2]),
                      *yzp = constant_of(args[3]);
    const ir::NDArray* bias = args.size() > 4 ? constant_of(args[4]) : nullptr;
    if (!azp || !xs || !ys || !yzp || (args.size() > 4 && !bias) || xs->dtype() != DType::kF32 ||
        ys->dtype() != DType::kF32 || ys->numel() != 1 || yzp->dtype() != DType::kU8 || yzp->numel() != 1 ||
        (xs->numel() != 1 && xs->numel() != n) ||
        (bias && (bias->dtype() != DType::kI32 || (bias->numel() != 1 && bias->numel() != n)))) {
      return std::nullopt;
    }
    const bool per_column = xs->numel() > 1 || (bias && bias->numel() > 1);
    if (per_column && node.attrs().get_int("axis") != args[0].type().rank() - 1) return std::nullopt;
    // scale[n] = x_scale[n] / y_scale: requantize's own f32 division.
    const float y_scale = ys->data<float>()[0];
    ir::NDArray scale = ir::NDArray::empty(DType::kF32, {n});
    ir::NDArray b = ir::NDArray::empty(DType::kI32, {n});
    for (int64_t i = 0; i < n; ++i) {
      scale.mutable_data<float>()[i] = xs->data<float>()[xs->numel() == 1 ? 0 : i] / y_scale;
      b.mutable_data<int32_t>()[i] = bias ? bias->data<int32_t>()[bias->numel() == 1 ? 0 : i] : 0;
    }
    const Value bias_c = ir::make_constant(names_.fresh("int8_bias"), b)->output();
    const Value scale_c = ir::make_constant(names_.fresh("int8_scale"), scale)->output();
    Attrs attrs;
    attrs.set("n", n)
        .set("a_zero_point", int64_t{azp->data<uint8_t>()[0]})
        .set("y_zero_point", int64_t{yzp->data<uint8_t>()[0]})
        .set("clamp_min", node.attrs().get_int("clamp_min"))
        .set("clamp_max", node.attrs().get_int("clamp_max"))
        .set("narrow", int64_t{mm.narrow ? 1 : 0});
    ++ctx_.stat("int8_matmul");
    --ctx_.stat("int8_matmul_i32");  // its i32 product stays only where something else uses it
    if (mm.narrow) --ctx_.stat("narrow");
    return product(mm, [&](const Value& a2, const Value& packed, const Value& sums, int64_t) {
      return ir::make_call("int8_matmul", {a2, packed, sums, bias_c, scale_c}, attrs, node.name())->output();
    });
  }

  PassContext& ctx_;
  NameSupply names_;
  std::unordered_map<const ir::Node*, FastMatmul> fast_;  // int8_matmul_i32 results (or their reshape) -> operands
  const ir::OpDef* requantize_ = op_ptr("requantize");
  const ir::OpDef* qnn_matmul_ = op_ptr("qnn_matmul");
};

class AlterInt8Matmul final : public Pass {
 public:
  const char* name() const override { return "AlterInt8Matmul"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override { return Int8MatmulRewriter(graph, ctx).mutate(graph); }
};

}  // namespace

std::unique_ptr<Pass> make_alter_int8_matmul() { return std::make_unique<AlterInt8Matmul>(); }

}  // namespace kiln::pass
