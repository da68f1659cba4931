// Injective operators through the one injective schedule: generated kernels vs the reference
// (exact: these ops only move data).
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

}  // namespace
}  // namespace kiln::topi::testing
