// Injective operators through the one injective schedule: generated kernels vs the reference
// (exact: these ops only move data).
#include "kiln/tir/printer.h"
#include "topi_test_util.h"

namespace kiln::topi::testing {
namespace {

using ir::Attrs;
using ir::DType;
using Ints = std::vector<int64_t>;

constexpr Tolerance kExact{0, 0};

TEST(TopiInjective, Reshape) {
  check_op({"reshape", {tt({13, 7})}, Attrs().set("shape", Ints{7, 13}), {}, kExact});
  check_op({"reshape", {tt({2, 3, 5, 7})}, Attrs().set("shape", Ints{6, 35}), {}, kExact});
  check_op({"reshape", {tt({1000}, DType::kI64)}, Attrs().set("shape", Ints{10, 4, 25}), {}, kExact});
}

TEST(TopiInjective, Transpose) {
  check_op({"transpose", {tt({13, 7})}, Attrs().set("perm", Ints{1, 0}), {}, kExact});
  check_op({"transpose", {tt({2, 3, 5, 7})}, Attrs().set("perm", Ints{0, 2, 3, 1}), {}, kExact});
  check_op({"transpose", {tt({3, 13, 7}, DType::kI8)}, Attrs().set("perm", Ints{2, 0, 1}), {}, kExact});
}

// An innermost axis shorter than a vector (ShuffleNet's channel shuffle on 7x7 planes): the
// trailing axes fused into rows of at least two vectors (49 = 6 x 8 + 1 on AVX2), the leading
// axes above them, so the planes move as contiguous ramps; the flat loop over every element that
// this replaces computed each lane's source with vector divisions and gathered it.
TEST(TopiInjective, SmallPlanesMoveAsContiguousRows) {
  const Attrs shuffle = Attrs().set("perm", Ints{0, 2, 1, 3, 4});
  check_op({"transpose", {tt({1, 2, 58, 7, 7})}, shuffle, {}, kExact});
  check_op({"transpose", {tt({2, 3, 5, 3, 5})}, Attrs().set("perm", Ints{0, 2, 1, 3, 4}), {}, kExact});
  check_op({"reshape", {tt({3, 29, 2, 5, 3})}, Attrs().set("shape", Ints{3, 58, 15}), {}, kExact});
  const codegen::Target& host = codegen::host_target();
  const std::string text = tir::to_string(build_op_kernel("transpose", {tt({1, 2, 58, 7, 7})}, shuffle, host));
  const std::string lanes = std::to_string(host.vector_lanes(32));
  EXPECT_NE(text.find(", 1, " + lanes + ")]"), std::string::npos) << text;  // full-width ramps
  EXPECT_EQ(text.find("floordiv(ramp"), std::string::npos) << text;          // no per-lane division
  EXPECT_EQ(text.find("floormod(ramp"), std::string::npos) << text;
}

TEST(TopiInjective, ConcatSplit) {
  check_op({"concat", {tt({13, 7}), tt({13, 1}), tt({13, 5})}, Attrs().set("axis", int64_t{1}), {}, kExact});
  check_op({"concat", {tt({7, 3}), tt({13, 3})}, Attrs().set("axis", int64_t{0}), {}, kExact});
  check_op({"concat", {tt({2, 4, 5}, DType::kBool), tt({2, 3, 5}, DType::kBool)}, Attrs().set("axis", int64_t{1}),
            {Dist::boolean(), Dist::boolean()}, kExact});
  check_op({"split", {tt({13, 20})}, Attrs().set("axis", int64_t{1}).set("sizes", Ints{7, 13}), {}, kExact});
  check_op({"split", {tt({1000})}, Attrs().set("axis", int64_t{0}).set("sizes", Ints{1, 999}), {}, kExact});
}

TEST(TopiInjective, StridedSlice) {
  check_op({"strided_slice", {tt({13, 20})},
            Attrs().set("begins", Ints{1, -15}).set("ends", Ints{12, 1000}).set("axes", Ints{0, 1}).set("steps", Ints{3, 2}),
            {}, kExact});
  check_op({"strided_slice", {tt({1000})}, Attrs().set("begins", Ints{-1}).set("ends", Ints{-1000}).set("steps", Ints{-7}),
            {}, kExact});
  check_op({"strided_slice", {tt({2, 13, 7})}, Attrs().set("begins", Ints{2}).set("ends", Ints{9}).set("axes", Ints{1}),
            {}, kExact});
}

TEST(TopiInjective, Gather) {
  check_op({"gather", {tt({13, 7}), tt({5}, DType::kI64)}, Attrs().set("axis", int64_t{0}),
            {Dist::uniform(), Dist::index(-13, 13)}, kExact});
  check_op({"gather", {tt({3, 13, 7}), tt({2, 4}, DType::kI32)}, Attrs().set("axis", int64_t{2}),
            {Dist::uniform(), Dist::index(-7, 7)}, kExact});
  check_op({"gather", {tt({1000, 3}), tt({13}, DType::kI32)}, Attrs().set("axis", int64_t{0}),
            {Dist::uniform(), Dist::index(0, 1000)}, kExact});
}

TEST(TopiInjective, Expand) {
  check_op({"expand", {tt({13, 1})}, Attrs().set("shape", Ints{2, 13, 7}), {}, kExact});
  check_op({"expand", {tt({1})}, Attrs().set("shape", Ints{1000}), {}, kExact});
}

TEST(TopiInjective, Pad) {
  const Ints pads = {1, 2, 3, 4};
  for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
    check_op({"pad", {tt({7, 13})}, Attrs().set("pads", pads).set("mode", std::string(mode)).set("value", 1.5), {},
              kExact});
  }
  // Negative pads crop; pads longer than the axis keep mirroring/wrapping.
  check_op({"pad", {tt({2, 7, 5})}, Attrs().set("pads", Ints{0, -1, 2, 0, 3, -2}), {}, kExact});
  check_op({"pad", {tt({3, 4})}, Attrs().set("pads", Ints{5, 0, 0, 9}).set("mode", std::string("reflect")), {}, kExact});
  check_op({"pad", {tt({3, 4})}, Attrs().set("pads", Ints{0, 9, 7, 0}).set("mode", std::string("wrap")), {}, kExact});
  check_op({"pad", {tt({1, 4}, DType::kI32)}, Attrs().set("pads", Ints{2, 1, 3, 1}).set("mode", std::string("reflect")),
            {}, kExact});
}

// resize computes its coordinates and weights in f64 like the reference and rounds once.
TEST(TopiInjective, Resize) {
  using Floats = std::vector<double>;
  const Tolerance tol{1e-6, 1e-6};
  auto attrs = [](const Ints& sizes, const char* mode, const char* ctm) {
    return Attrs().set("sizes", sizes).set("mode", std::string(mode)).set("coordinate_transformation_mode", std::string(ctm));
  };
  for (const char* ctm : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"}) {
    for (const char* mode : {"nearest", "linear", "cubic"}) {
      check_op({"resize", {tt({1, 2, 7, 5})}, attrs({1, 2, 13, 11}, mode, ctm), {}, tol});  // up
      check_op({"resize", {tt({1, 2, 13, 7})}, attrs({1, 2, 5, 3}, mode, ctm), {}, tol});   // down
    }
  }
  for (const char* nearest : {"round_prefer_ceil", "floor", "ceil"}) {
    check_op({"resize", {tt({1, 1, 7, 7}, DType::kI32)},
              attrs({1, 1, 13, 3}, "nearest", "asymmetric").set("nearest_mode", std::string(nearest)), {}, {0, 0}});
  }
  check_op({"resize", {tt({1, 1, 7, 7})}, attrs({1, 1, 13, 13}, "cubic", "half_pixel").set("exclude_outside", int64_t{1}), {}, tol});
  check_op({"resize", {tt({1, 1, 7, 7})}, attrs({1, 1, 14, 21}, "linear", "asymmetric").set("scales", Floats{1, 1, 2, 3}), {}, tol});
  check_op({"resize", {tt({1, 1, 7, 9})},
            attrs({1, 1, 5, 5}, "linear", "tf_crop_and_resize").set("roi", Floats{0, 0, 0.2, -0.1, 1, 1, 0.9, 1.2})
                .set("extrapolation_value", 3.5),
            {}, tol});
  check_op({"resize", {tt({1000})}, attrs({13}, "linear", "half_pixel"), {}, tol});
}

}  // namespace
}  // namespace kiln::topi::testing
