// .npz writing (kiln/ir/npz.h), checked by numpy itself (npy_check.py npz, run with
// /usr/bin/python3): zipfile verifies every member's CRC-32, numpy.load reads the members in order
// with their dtypes, shapes and values. Plus the archive's own invariants and its errors.
#include "kiln/ir/npz.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "kiln/ir/npy.h"
#include "npy_pattern.h"
#include "ops/op_test_util.h"

namespace kiln::ir {
namespace {

using testing::throws_user_error;

using testing::pattern_array;

uint32_t le32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}

NamedArrays every_dtype() {
  NamedArrays arrays;
  for (DType d : {DType::kF32, DType::kF64, DType::kF16, DType::kI8, DType::kU8, DType::kI16, DType::kI32,
                  DType::kI64, DType::kBool, DType::kU16, DType::kU32, DType::kU64}) {
    arrays.emplace_back(dtype_name(d), pattern_array(d));
  }
  arrays.emplace_back("empty", NDArray::empty(DType::kF32, Shape{0, 4}));
  arrays.emplace_back("scalar", NDArray::scalar(DType::kF64, -1.5));
  return arrays;
}

TEST(Npz, NumpyLoadsWhatKilnWrites) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  }
  const std::string dir = std::string(KILN_BINARY_DIR) + "/test_data/npz";
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_npz(dir + "/kiln.npz", every_dtype());
  EXPECT_EQ(std::system(("/usr/bin/python3 " + std::string(KILN_SOURCE_DIR) + "/tests/ir/npy_check.py npz " + dir).c_str()),
            0);
}

TEST(Npz, StoredMembersAndADirectoryThatAddsUp) {
  const NamedArrays arrays = every_dtype();
  const std::string zip = encode_npz(arrays);
  EXPECT_EQ(le32(zip, 0), 0x04034B50u);  // a local file header first
  // The end record: 22 bytes, no comment; its counts and directory offset.
  const size_t end = zip.size() - 22;
  ASSERT_EQ(le32(zip, end), 0x06054B50u);
  EXPECT_EQ(le32(zip, end + 8) & 0xFFFF, arrays.size());
  const uint32_t dir_size = le32(zip, end + 12), dir_offset = le32(zip, end + 16);
  EXPECT_EQ(dir_offset + dir_size, end);
  EXPECT_EQ(le32(zip, dir_offset), 0x02014B50u);
  // Stored, not compressed: the archive holds each .npy's bytes whole.
  const std::string first = encode_npy(arrays[0].second);
  EXPECT_NE(zip.find(first), std::string::npos);
  EXPECT_EQ(encode_npz(arrays), zip) << "fixed dates: the same arrays give the same bytes";
}

TEST(Npz, RefusesTwoArraysWithOneName) {
  NamedArrays arrays;
  arrays.emplace_back("y", NDArray::scalar(DType::kF32, 1));
  arrays.emplace_back("y", NDArray::scalar(DType::kF32, 2));
  EXPECT_TRUE(throws_user_error([&] { encode_npz(arrays); }, UserErrorKind::kInvalidArgument, "appears twice"));
}

TEST(Npz, AnUnwritablePathIsAnIOError) {
  EXPECT_TRUE(throws_user_error([&] { write_npz("/nonexistent-dir/x.npz", every_dtype()); }, UserErrorKind::kIO,
                                "cannot create"));
}

}  // namespace
}  // namespace kiln::ir
