// The operator library's interfaces: every registered graph op has a compute, the user-facing
// errors of build_op_kernel / knobs, default knobs derived from the target, the injective
// template really vectorizes, and computes compose into one fused kernel (conv2d -> relu).
#include <gtest/gtest.h>

#include "kiln/codegen/target.h"
#include "kiln/ir/op.h"
#include "kiln/support/error.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/printer.h"
#include "kiln/topi/build.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/schedule.h"
#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;
using Ints = std::vector<int64_t>;

template <typename Fn>
UserError expect_user_error(Fn&& fn, UserErrorKind kind) {
  try {
    fn();
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected a UserError";
  return UserError(kind, "", "");
}

TEST(TopiApi, EveryGraphOpHasACompute) {
  for (const std::string& op : ir::OpRegistry::global().names()) {
    // `fused` (made by FuseOps) has no compute of its own: the driver lowers its body's ops.
    if (op == "fused") continue;
    EXPECT_NE(ComputeRegistry::global().find(op), nullptr) << "no compute for graph op '" << op << "'";
  }
  for (const std::string& op : ComputeRegistry::global().names()) {
    EXPECT_NE(ir::OpRegistry::global().find(op), nullptr) << "compute for unknown op '" << op << "'";
  }
}

TEST(TopiApi, Errors) {
  const codegen::Target& host = codegen::host_target();
  expect_user_error([&] { build_op_kernel("no_such_op", {tt({4})}, {}, host); }, UserErrorKind::kNotFound);
  // Wrong input count, unknown attribute, inputs type inference rejects.
  expect_user_error([&] { build_op_kernel("add", {tt({4})}, {}, host); }, UserErrorKind::kInvalidArgument);
  expect_user_error([&] { build_op_kernel("relu", {tt({4})}, Attrs().set("alpha", 1.0), host); },
                    UserErrorKind::kInvalidArgument);
  expect_user_error([&] { build_op_kernel("add", {tt({4}), tt({5})}, {}, host); }, UserErrorKind::kInvalidArgument);
  // Every dtype the graph ops accept now has a kernel (integer pow was the last gap; its values are
  // checked in elementwise_test), so kUnsupported is only reachable through a compute's own limits.
  EXPECT_NO_THROW(build_op_kernel("pow", {tt({4}, DType::kI32), tt({4}, DType::kI32)}, {}, host));
  // Knobs: missing, non-positive, contradicting the compute's data layout.
  OpKernelOptions missing;
  missing.knobs = Knobs().set("vector", 8);
  UserError e = expect_user_error([&] { build_op_kernel("relu", {tt({13})}, {}, host, missing); }, UserErrorKind::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("parallel_min"), std::string::npos) << e.what();
  OpKernelOptions negative;
  negative.knobs = Knobs().set("vector", -8).set("parallel_min", 1);
  expect_user_error([&] { build_op_kernel("relu", {tt({13})}, {}, host, negative); }, UserErrorKind::kInvalidArgument);
  tir::Tensor a = tir::placeholder({32, 32}, DType::kF32, "a"), b = tir::placeholder({32, 32}, DType::kF32, "b");
  ComputeResult mm = compute_op("matmul", {a, b}, {}, layout_hints(host));
  Knobs k = default_knobs(mm, host);
  OpKernelOptions layout;
  layout.knobs = k.set("n_block", k.get("n_block") * 2);
  e = expect_user_error([&] { build_op_kernel("matmul", {tt({32, 32}), tt({32, 32})}, {}, host, layout); },
                        UserErrorKind::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("n_block"), std::string::npos) << e.what();
}

TEST(TopiApi, DefaultKnobsFollowTheTarget) {
  const codegen::Target avx2 = codegen::parse_target("llvm -mcpu=znver3");
  const codegen::Target avx512 = codegen::parse_target("llvm -mcpu=znver4");
  tir::Tensor a = tir::placeholder({64, 64}, DType::kF32, "a"), b = tir::placeholder({64, 64}, DType::kF32, "b");
  const ComputeResult r2 = compute_op("matmul", {a, b}, {}, layout_hints(avx2));
  const ComputeResult r5 = compute_op("matmul", {a, b}, {}, layout_hints(avx512));
  EXPECT_EQ(default_knobs(r2, avx2).get("vector"), 8);
  EXPECT_EQ(default_knobs(r5, avx512).get("vector"), 16);
  EXPECT_EQ(default_knobs(r2, avx2).get("n_block"), 16);   // two ymm per tile row
  EXPECT_EQ(default_knobs(r5, avx512).get("n_block"), 64);  // four zmm per tile row
  EXPECT_EQ(default_knobs(r2, avx2).get("tile_m"), 4);
  EXPECT_EQ(default_knobs(r5, avx512).get("tile_m"), 8);
  // conv2d 3x3 64->64 on 56x56 (NCHW op): two-vector oc block, a 1 x 4-column register tile of
  // 2 vectors on AVX2 (14 full tiles per row).
  tir::Tensor x = tir::placeholder({1, 64, 56, 56}, DType::kF32, "x");
  tir::Tensor w = tir::placeholder({64, 64, 3, 3}, DType::kF32, "w");
  const Attrs pads = Attrs().set("pads", Ints{1, 1, 1, 1});
  const ComputeResult c2 = compute_op("conv2d", {x, w}, pads, layout_hints(avx2));
  const Knobs kc = default_knobs(c2, avx2);
  EXPECT_EQ(kc.get("oc_block"), 16);
  EXPECT_EQ(kc.get("ic_block"), 8);
  EXPECT_EQ(c2.schedule, ScheduleKind::kConv2dNchwc);
  EXPECT_EQ(kc.to_string(), "ic_block=8 k_chunk=0 oc_block=16 oc_tile=1 parallel_min=16384 prefetch=0 rows_outer=1 tile_oh=1 tile_ow=4 vector=8");
  const ComputeResult c5 = compute_op("conv2d", {x, w}, pads, layout_hints(avx512));
  const Knobs k5 = default_knobs(c5, avx512);
  EXPECT_EQ(k5.get("oc_block"), 32);
  EXPECT_EQ(k5.get("ic_block"), 16);
  // conv2d_nchwc 3x3 on 512 channels, 9x7 (as TopiFused.ConvNchwcTallTileWithRowTails builds it):
  // one block per tile, several rows (2 x 7: no flat pixel tile does better).
  tir::Tensor xb = tir::placeholder({1, 64, 9, 7, 8}, DType::kF32, "xb");
  tir::Tensor wb = tir::placeholder({2, 64, 3, 3, 8, 8}, DType::kF32, "wb");
  const ComputeResult tall = compute_op("conv2d_nchwc", {xb, wb}, pads, layout_hints(avx2));
  const Knobs kt = default_knobs(tall, avx2);
  EXPECT_EQ(kt.get("oc_tile"), 1);
  EXPECT_GT(kt.get("tile_oh"), 1);
  EXPECT_EQ(tall.parts.at("anchor").ndim(), 5);
}

// The register tile rule on both register files, at ResNet-50's sizes (one vector per block, as
// AlterOpLayout blocks by the vector width): accumulators + weights + 3 fit the registers and the
// output splits into tiles without a short, latency-bound tail where a better split exists;
// weight panels above 256 KiB get one block per tile over several rows.
TEST(TopiApi, ConvRegisterTileFitsTheTarget) {
  struct Case {
    int64_t oc_blocks, size, block_bytes;
    int regs;
    int64_t oc_tile, tile_oh, tile_ow;
    int64_t vectors = 1;  // vectors per channel block (AlterOpLayout's two-vector blocks: 2)
  };
  const int64_t k3x3_512 = 512 * 9 * 8 * 4;  // one 8-channel block of a 3x3 conv on 512 channels
  const Case cases[] = {
      // AVX2, 16 ymm: 2 x 4 (8 accumulators, 14 / 28 / 7 full tiles) where 4 divides the
      // width, 2 x 5 on 14 (5 + 5 + 4), 2 x 4 on 7 (4 + 3: both tiles at the latency bound).
      {8, 56, 0, 16, 2, 1, 4},
      {8, 112, 0, 16, 2, 1, 4},
      {16, 28, 0, 16, 2, 1, 4},
      {32, 14, 0, 16, 2, 1, 5},
      {64, 7, 0, 16, 2, 1, 4},
      // Three channel blocks (24 channels: RGB stems, MobileNetV2's projections): all three x 3
      // columns (9 accumulators + 3 weights + 3 broadcasts), each broadcast feeding 3 FMAs; one
      // block x 12 columns needed a broadcast per FMA (ShuffleNetV2's 3 -> 24 stem: 0.59 -> 0.45 ms).
      {3, 56, 0, 16, 3, 1, 3},
      // Other odd block counts: one block of one vector, up to 14 columns (16 - 2: its weight
      // vector is an FMA memory operand), 14 dividing 56; 13 in one tile.
      {5, 56, 0, 16, 1, 1, 14},
      {1, 13, 0, 16, 1, 1, 13},
      // 3x3 on 512 channels, 7x7: 288 KiB for two blocks: one block, 2 rows x 7 columns.
      {64, 7, k3x3_512, 16, 1, 2, 7},
      // AVX-512, 32 zmm: 4 x 6 (24 accumulators + 4 weights + 6 broadcasts; 2 x 13 spilled).
      {4, 56, 0, 32, 4, 1, 6},
      {4, 28, 0, 32, 4, 1, 6},
      {64, 14, 0, 32, 4, 1, 6},
      {64, 7, 0, 32, 4, 1, 5},
      {32, 7, 2 * k3x3_512, 32, 1, 4, 7},
      // Two-vector blocks (16 channels on AVX2): one block, registers - 4 accumulators at most
      // when the panel is big (1 x 1 x 7 = 14 spilled): 2 x 3 on 14x14 (3x3 on 256 channels,
      // 288 KiB for two blocks), 1 x 4 on 7x7; small panels: 1 x 4 on 28, 1 x 5 on 14.
      {16, 14, 256 * 9 * 16 * 4, 16, 1, 2, 3, 2},
      {32, 7, 2 * k3x3_512, 16, 1, 1, 4, 2},
      {8, 28, 128 * 9 * 16 * 4, 16, 1, 1, 4, 2},
      {16, 14, 0, 16, 1, 1, 5, 2},
      // AVX-512 with two-vector blocks (32 channels): at most 28 accumulators on a big panel.
      {16, 7, 4 * k3x3_512, 32, 1, 2, 7, 2},
  };
  for (const Case& c : cases) {
    ConvTileShape shape;
    shape.oc_blocks = c.oc_blocks;
    shape.out_height = shape.out_width = c.size;
    shape.weight_block_bytes = c.block_bytes;
    shape.vectors_per_block = c.vectors;
    const ConvTile t = conv2d_register_tile(shape, c.regs);
    const std::string what = std::to_string(c.oc_blocks) + " blocks, " + std::to_string(c.size) + "x" +
                             std::to_string(c.size) + ", " + std::to_string(c.regs) + " registers, " +
                             std::to_string(c.vectors) + " vectors per block";
    EXPECT_EQ(t.oc_tile, c.oc_tile) << what;
    EXPECT_EQ(t.tile_oh, c.tile_oh) << what;
    EXPECT_EQ(t.tile_ow, c.tile_ow) << what;
    const int64_t acc = t.oc_tile * t.tile_oh * t.tile_ow * c.vectors;
    const bool big_panel = 2 * c.block_bytes > (256 << 10);
    const bool one_vector = t.oc_tile == 1 && c.vectors == 1;
    EXPECT_LE(acc + (big_panel || one_vector ? 2 * c.vectors : t.oc_tile * c.vectors + 3), c.regs) << what;
    EXPECT_EQ(c.oc_blocks % t.oc_tile, 0) << what;
  }
}

TEST(TopiApi, InjectiveTemplateVectorizesWithTail) {
  const tir::PrimFunc f = build_op_kernel("add", {tt({13, 7}), tt({7})}, {}, codegen::host_target());
  const std::string text = tir::to_string(f);
  const int lanes = codegen::host_target().vector_lanes(32);
  EXPECT_NE(text.find("ramp("), std::string::npos) << text;
  EXPECT_NE(text.find(", 1, " + std::to_string(lanes) + ")]"), std::string::npos) << text;  // full-width vector store
  EXPECT_EQ(f->name, "topi_add");
}

// conv2d -> relu as one kernel: relu's compute on conv2d's output tensor, scheduled by conv2d's
// template (the unpacking stage, no longer an output, is inlined into relu).
TEST(TopiApi, ComputesComposeIntoOneKernel) {
  const codegen::Target& host = codegen::host_target();
  const LayoutHints hints = layout_hints(host);
  tir::Tensor x = tir::placeholder({1, 8, 13, 13}, DType::kF32, "x");
  tir::Tensor w = tir::placeholder({16, 8, 3, 3}, DType::kF32, "w");
  const Attrs conv_attrs = Attrs().set("pads", Ints{1, 1, 1, 1});
  ComputeResult group = compute_op("conv2d", {x, w}, conv_attrs, hints);
  const ComputeResult relu = compute_op("relu", group.outputs, {}, hints);
  group.outputs = relu.outputs;
  tir::Schedule s(group.outputs);
  apply_schedule(s, group, default_knobs(group, host));
  const tir::PrimFunc f = tir::lower(s, {x, w, group.outputs[0]}, "conv_relu");
  codegen::LLVMModule module(host, "fused");
  module.add_prim_func(f);
  codegen::JitModule jit(std::move(module));

  std::mt19937 rng(3);
  const ir::OpDef& conv = ir::OpRegistry::global().get("conv2d");
  const ir::OpDef& relu_def = ir::OpRegistry::global().get("relu");
  const Attrs full = ir::OpRegistry::global().validate_attrs(conv, conv_attrs);
  std::vector<ir::NDArray> in = {random_array(tt({1, 8, 13, 13}), Dist::uniform(), rng),
                                 random_array(tt({16, 8, 3, 3}), Dist::uniform(), rng)};
  const auto conv_types = conv.infer_type({tt({1, 8, 13, 13}), tt({16, 8, 3, 3})}, full);
  const ir::NDArray mid = conv.reference(in, full, conv_types)[0];
  const ir::NDArray want = relu_def.reference({mid}, {}, conv_types)[0];
  ir::NDArray got = ir::NDArray::empty(DType::kF32, {1, 16, 13, 13});
  std::vector<std::vector<int64_t>> shapes(3);
  jit.run("conv_relu", {dl_view(in[0], shapes[0]), dl_view(in[1], shapes[1]), dl_view(got, shapes[2])});
  int bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_as_double(i), e = want.get_as_double(i);
    if (std::fabs(g - e) > 1e-4 + 1e-4 * std::fabs(e) && bad++ < 5) {
      ADD_FAILURE() << "index " << i << ": actual " << g << ", expected " << e;
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace kiln::topi::testing
