// Fused groups as one kernel (build_group_kernel): heavy op + elementwise consumers, injective
// chains, an injective producer into a reduction. Compared with the members' reference
// implementations chained on the same inputs.
#include "kiln/support/error.h"
#include "kiln/tir/printer.h"
#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;
using Ints = std::vector<int64_t>;

// Returns the kernel's loop IR as text (for checks of its structure).
std::string check_group(const std::vector<GroupMember>& members, const std::vector<ir::TensorType>& in_types,
                        const std::vector<ValueRef>& outs, Tolerance tol) {
  std::mt19937 rng(5);
  std::vector<ir::NDArray> inputs;
  for (const auto& t : in_types) inputs.push_back(random_array(t, Dist::uniform(), rng));
  // Reference: each member's reference on the chained values.
  const ir::OpRegistry& reg = ir::OpRegistry::global();
  std::vector<std::vector<ir::NDArray>> values;
  for (const GroupMember& m : members) {
    std::vector<ir::NDArray> in;
    std::vector<ir::TensorType> types;
    for (const ValueRef& r : m.inputs) {
      in.push_back(r.kind == ValueRef::Kind::kGroupInput ? inputs[r.index] : values[r.index][r.output]);
      types.push_back(in.back().type());
    }
    const ir::OpDef& def = reg.get(m.op);
    const Attrs a = reg.validate_attrs(def, m.attrs);
    values.push_back(def.reference(in, a, def.infer_type(types, a)));
  }
  const tir::PrimFunc f = build_group_kernel(members, in_types, outs, codegen::host_target());
  codegen::LLVMModule module(codegen::host_target(), "fused");
  module.add_prim_func(f);
  codegen::JitModule jit(std::move(module));
  std::vector<ir::NDArray> got;
  for (const ValueRef& r : outs) {
    const ir::NDArray& w = values[r.index][r.output];
    got.push_back(ir::NDArray::empty(w.dtype(), w.shape()));
  }
  std::vector<std::vector<int64_t>> shapes(inputs.size() + got.size());
  std::vector<DLTensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) args.push_back(dl_view(inputs[i], shapes[i]));
  for (size_t i = 0; i < got.size(); ++i) args.push_back(dl_view(got[i], shapes[inputs.size() + i]));
  jit.run(f->name, args);
  for (size_t o = 0; o < outs.size(); ++o) {
    const ir::NDArray& want = values[outs[o].index][outs[o].output];
    int bad = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double g = got[o].get_as_double(i), e = want.get_as_double(i);
      if (std::fabs(g - e) > tol.atol + tol.rtol * std::fabs(e) && bad++ < 5) {
        ADD_FAILURE() << f->name << " output " << o << " index " << i << ": actual " << g << ", expected " << e;
      }
    }
    EXPECT_EQ(bad, 0) << f->name;
  }
  return tir::to_string(f);
}

TEST(TopiFused, Conv2dBiasRelu) {
  check_group({{"conv2d", {ValueRef::input(0), ValueRef::input(1)}, Attrs().set("pads", Ints{1, 1, 1, 1})},
               {"add", {ValueRef::member(0), ValueRef::input(2)}, {}},
               {"relu", {ValueRef::member(1)}, {}}},
              {tt({1, 8, 13, 13}), tt({16, 8, 3, 3}), tt({16, 1, 1})}, {ValueRef::member(2)}, {1e-4, 1e-4});
}

TEST(TopiFused, MatmulBiasSigmoidTwoOutputs) {
  check_group({{"matmul", {ValueRef::input(0), ValueRef::input(1)}, {}},
               {"add", {ValueRef::member(0), ValueRef::input(2)}, {}},
               {"sigmoid", {ValueRef::member(1)}, {}}},
              {tt({13, 24}), tt({24, 37}), tt({37})}, {ValueRef::member(2), ValueRef::member(1)}, {1e-4, 1e-4});
}

// The FFN shape of a transformer: product, bias, then the GELU diamond x * 0.5 * (1 + erf(x / c))
// (x used twice) as the epilogue of the register tile; with B pre-packed and packed in the kernel,
// and with M not a multiple of the row tile.
TEST(TopiFused, MatmulBiasGeluEpilogue) {
  for (const char* op : {"matmul_packed", "matmul"}) {
    const bool packed = std::string(op) == "matmul_packed";
    check_group({{op, {ValueRef::input(0), ValueRef::input(1)}, packed ? Attrs().set("n", int64_t{37}) : Attrs()},
                 {"add", {ValueRef::member(0), ValueRef::input(2)}, {}},
                 {"div", {ValueRef::member(1), ValueRef::input(3)}, {}},
                 {"erf", {ValueRef::member(2)}, {}},
                 {"add", {ValueRef::member(3), ValueRef::input(4)}, {}},
                 {"mul", {ValueRef::member(1), ValueRef::member(4)}, {}},
                 {"mul", {ValueRef::member(5), ValueRef::input(4)}, {}}},
                {tt({2, 13, 24}), packed ? tt({3, 24, 16}) : tt({24, 37}), tt({37}), tt({}), tt({})},
                {ValueRef::member(6)}, {1e-4, 1e-4});
  }
}

TEST(TopiFused, InjectiveChainAndProducerIntoReduction) {
  check_group({{"transpose", {ValueRef::input(0)}, Attrs().set("perm", Ints{1, 0})},
               {"reshape", {ValueRef::member(0)}, Attrs().set("shape", Ints{7, 2, 13})},
               {"relu", {ValueRef::member(1)}, {}}},
              {tt({26, 7})}, {ValueRef::member(2)}, {0, 0});
  check_group({{"reshape", {ValueRef::input(0)}, Attrs().set("shape", Ints{13, 77})},
               {"mul", {ValueRef::member(0), ValueRef::input(1)}, {}},
               {"softmax", {ValueRef::member(1)}, Attrs().set("axis", int64_t{1})}},
              {tt({13, 7, 11}), tt({77})}, {ValueRef::member(2)}, {1e-4, 1e-5});
}

// Blocked convolutions (conv2d_nchwc, as AlterOpLayout emits them) with their epilogues at odd
// sizes: the bias, a residual add and a clip/relu are applied to the register tile as it is
// written back, so the anchor is never stored (no "allocate conv2d_nchwc[" buffer).
Attrs conv_attrs(int64_t stride, int64_t pad) {
  return Attrs().set("strides", Ints{stride, stride}).set("pads", Ints{pad, pad, pad, pad});
}

TEST(TopiFused, ConvNchwcBiasResidualClipInRegisterTile) {
  // C = 12 in blocks of 4, M = 24 in 3 blocks of 8 (an odd block count: one block per tile),
  // 13 x 11 output (tails in width), 3x3 pad 1.
  const std::string ir = check_group(
      {{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(1, 1)},
       {"add", {ValueRef::member(0), ValueRef::input(3)}, {}},
       {"clip", {ValueRef::member(1)}, Attrs().set("min", -0.5).set("max", 0.75)}},
      {tt({1, 3, 13, 11, 4}), tt({3, 3, 3, 3, 4, 8}), tt({24}), tt({1, 3, 13, 11, 8})}, {ValueRef::member(2)},
      {1e-4, 1e-4});
  EXPECT_EQ(ir.find("allocate conv2d_nchwc["), std::string::npos) << ir;
  EXPECT_NE(ir.find("allocate pack_x["), std::string::npos) << ir;  // padding needs the copy
}

TEST(TopiFused, ConvNchwcUnpaddedReadsBlockedInputInPlace) {
  // 1x1 stride 1 without padding: no pack_x copy; M = 32 (4 blocks: two per tile), width 13.
  const std::string ir = check_group(
      {{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(1, 0)},
       {"add", {ValueRef::member(0), ValueRef::input(3)}, {}},
       {"relu", {ValueRef::member(1)}, {}}},
      {tt({1, 5, 7, 13, 8}), tt({4, 5, 1, 1, 8, 8}), tt({32}), tt({1, 4, 7, 13, 8})}, {ValueRef::member(2)},
      {1e-4, 1e-4});
  EXPECT_EQ(ir.find("pack_x"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("allocate conv2d_nchwc["), std::string::npos) << ir;
}

TEST(TopiFused, ConvNchwcPacksAnInputComputedByFusedProducers) {
  // The same 1x1 conv reading a channel slice of a wider NCHW value, re-blocked (strided_slice +
  // layout_transform fused before it, as a ShuffleNet branch has them): the producers run once
  // per element in the packing stage, not on every read of the reduction.
  const std::string ir = check_group(
      {{"strided_slice", {ValueRef::input(0)},
        Attrs().set("begins", Ints{40}).set("ends", Ints{80}).set("axes", Ints{1})},
       {"layout_transform", {ValueRef::member(0)}, Attrs().set("src_layout", "NCHW").set("dst_layout", "NCHW8c")},
       {"conv2d_nchwc", {ValueRef::member(1), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(1, 0)},
       {"relu", {ValueRef::member(2)}, {}}},
      {tt({1, 80, 7, 13}), tt({4, 5, 1, 1, 8, 8}), tt({32})}, {ValueRef::member(3)}, {1e-4, 1e-4});
  EXPECT_NE(ir.find("allocate pack_x["), std::string::npos) << ir;
}

TEST(TopiFused, ConvNchwcStridedAndStem) {
  // Strided 1x1 (subsampled input copy), 9 x 9 input -> 5 x 5.
  check_group({{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(2, 0)},
               {"relu", {ValueRef::member(0)}, {}}},
              {tt({1, 2, 9, 9, 8}), tt({2, 2, 1, 1, 8, 8}), tt({16})}, {ValueRef::member(1)}, {1e-4, 1e-4});
  // A stem-like 7x7 stride 2 pad 3 on 3 channels (input block 3), 17 x 17 -> 9 x 9.
  check_group({{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(2, 3)},
               {"relu", {ValueRef::member(0)}, {}}},
              {tt({1, 1, 17, 17, 3}), tt({2, 1, 7, 7, 3, 8}), tt({16})}, {ValueRef::member(1)}, {1e-4, 1e-4});
}

TEST(TopiFused, ConvNchwcTallTileWithRowTails) {
  // 3x3 on 512 channels: a weight panel over 256 KiB per two blocks, so the tile spans several
  // rows of one block (tile_oh > 1, TopiApi.DefaultKnobsFollowTheTarget); 9 rows leave a tail.
  check_group({{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(1, 1)},
               {"add", {ValueRef::member(0), ValueRef::input(3)}, {}},
               {"relu", {ValueRef::member(1)}, {}}},
              {tt({1, 64, 9, 7, 8}), tt({2, 64, 3, 3, 8, 8}), tt({16}), tt({1, 2, 9, 7, 8})}, {ValueRef::member(2)},
              {1e-3, 1e-4});
}

TEST(TopiFused, ConvNchwcTwoVectorBlocksBigPanelStrided) {
  // AlterOpLayout's two-vector channel blocks (b = 2 x the target's f32 lanes) on 256 input
  // channels: a 3x3 weight panel over 256 KiB per two blocks, so one block x several rows x
  // columns with at most registers - 4 accumulators (2 x 3 on AVX2). Stride 2, pad 1: 27x27 ->
  // 14x14 (full tiles and a column tail), 11x9 -> 6x5 (tails in rows and columns).
  const int64_t b = 2 * codegen::host_target().vector_lanes(32), cb = 256 / b;
  for (const auto& [h, w] : {std::pair<int64_t, int64_t>{27, 27}, {11, 9}}) {
    const int64_t oh = (h - 1) / 2 + 1, ow = (w - 1) / 2 + 1;
    check_group({{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(2, 1)},
                 {"add", {ValueRef::member(0), ValueRef::input(3)}, {}},
                 {"relu", {ValueRef::member(1)}, {}}},
                {tt({1, cb, h, w, b}), tt({2, cb, 3, 3, b, b}), tt({2 * b}), tt({1, 2, oh, ow, b})},
                {ValueRef::member(2)}, {1e-3, 1e-4});
  }
  // Stride 1 on an odd 7 x 5 input.
  check_group({{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(1, 1)},
               {"relu", {ValueRef::member(0)}, {}}},
              {tt({1, cb, 7, 5, b}), tt({1, cb, 3, 3, b, b}), tt({b})}, {ValueRef::member(1)}, {1e-3, 1e-4});
}

TEST(TopiFused, ConvNchwcFlatPixels) {
  // 1x1 on 7x7 with two-vector blocks: flat pixel tiles on AVX2 (TopiNchwc.FlatPixelsFollowTheTileModel).
  // Bias + residual add + relu applied to the tile (the flat anchor and its unflattened view
  // inlined, never stored); then two outputs (the conv and its relu) and a transpose consumer:
  // the flat anchor is tiled itself and its view read by a second pass.
  const int64_t b = 2 * codegen::host_target().vector_lanes(32);
  const std::string ir = check_group(
      {{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(1, 0)},
       {"add", {ValueRef::member(0), ValueRef::input(3)}, {}},
       {"relu", {ValueRef::member(1)}, {}}},
      {tt({1, 64 / b, 7, 7, b}), tt({128 / b, 64 / b, 1, 1, b, b}), tt({128}), tt({1, 128 / b, 7, 7, b})},
      {ValueRef::member(2)}, {1e-4, 1e-4});
  EXPECT_EQ(ir.find("allocate conv2d_nchwc["), std::string::npos) << ir;
  check_group({{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1)}, conv_attrs(1, 0)},
               {"relu", {ValueRef::member(0)}, {}}},
              {tt({1, 64 / b, 7, 7, b}), tt({64 / b, 64 / b, 1, 1, b, b})}, {ValueRef::member(1), ValueRef::member(0)},
              {1e-4, 1e-4});
  check_group({{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(1, 0)},
               {"transpose", {ValueRef::member(0)}, Attrs().set("perm", Ints{0, 1, 3, 2, 4})},
               {"relu", {ValueRef::member(1)}, {}}},
              {tt({1, 64 / b, 7, 7, b}), tt({64 / b, 64 / b, 1, 1, b, b}), tt({64})}, {ValueRef::member(2)},
              {1e-4, 1e-4});
}

TEST(TopiFused, ConvNchwcEpilogueThatIsNotElementwiseOrASecondOutput) {
  // Two outputs (the conv and its relu): the anchor is stored (an output), the relu is a second
  // pass reading it.
  const std::string two = check_group(
      {{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1)}, conv_attrs(1, 1)},
       {"relu", {ValueRef::member(0)}, {}}},
      {tt({1, 2, 9, 9, 8}), tt({2, 2, 3, 3, 8, 8})}, {ValueRef::member(1), ValueRef::member(0)}, {1e-4, 1e-4});
  EXPECT_NE(two.find("select(conv2d_nchwc[ramp("), std::string::npos) << two;
  // A transpose of height and width (same shape, not elementwise): the conv is computed whole
  // first, then read transposed.
  const std::string tr = check_group(
      {{"conv2d_nchwc", {ValueRef::input(0), ValueRef::input(1), ValueRef::input(2)}, conv_attrs(1, 1)},
       {"transpose", {ValueRef::member(0)}, Attrs().set("perm", Ints{0, 1, 3, 2, 4})},
       {"relu", {ValueRef::member(1)}, {}}},
      {tt({1, 2, 9, 9, 8}), tt({2, 2, 3, 3, 8, 8}), tt({16})}, {ValueRef::member(2)}, {1e-4, 1e-4});
  EXPECT_NE(tr.find("allocate conv2d_nchwc["), std::string::npos) << tr;
}

TEST(TopiFused, Errors) {
  const codegen::Target& host = codegen::host_target();
  try {
    build_group_kernel({{"relu", {ValueRef::member(1)}, {}}, {"relu", {ValueRef::input(0)}, {}}}, {tt({4})},
                       {ValueRef::member(1)}, host);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), UserErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not an earlier member"), std::string::npos) << e.what();
  }
  try {
    build_group_kernel({{"relu", {ValueRef::input(0)}, {}}}, {tt({4})}, {ValueRef::member(0, 1)}, host);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("output 1 of member 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::topi::testing
