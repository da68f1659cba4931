// .npy reading and writing, checked against numpy itself (npy_check.py run with /usr/bin/python3):
// numpy writes every dtype in little/big-endian and C/Fortran order and format versions 1-3 and
// Kiln reads them; Kiln writes every dtype and numpy.load checks them. Plus every parse error.
#include "kiln/ir/npy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "npy_pattern.h"
#include "ops/op_test_util.h"

namespace kiln::ir {
namespace {

using testing::throws_user_error;

const Shape kShape = {2, 3, 4};

using testing::pattern;
using testing::pattern_array;

bool have_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

std::string temp_dir(const std::string& name) {
  const std::string dir = std::string(KILN_BINARY_DIR) + "/test_data/npy_" + name;
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  return dir;
}

std::string script() { return std::string(KILN_SOURCE_DIR) + "/tests/ir/npy_check.py"; }

const DType kAll[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                      DType::kU8,  DType::kI16, DType::kI32, DType::kI64,  DType::kBool,
                      DType::kU16, DType::kU32, DType::kU64};

TEST(Npy, ReadsWhatNumpyWrites) {
  if (!have_numpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const std::string dir = temp_dir("from_numpy");
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script() + " write " + dir).c_str()), 0);
  for (DType d : kAll) {
    if (d == DType::kBF16) continue;  // numpy has no bfloat16
    const std::string n = dtype_name(d);
    const NDArray want = pattern_array(d);
    std::vector<std::string> variants = {"", "_fortran"};
    if (dtype_size(d) > 1) variants.push_back("_be");
    for (const auto& v : variants) {
      const std::string path = dir + "/np_" + n + v + ".npy";
      SCOPED_TRACE(path);
      const NDArray got = read_npy(path);
      EXPECT_TRUE(got.bitwise_equal(want)) << got.type().to_string() << " vs " << want.type().to_string();
    }
  }
  for (const char* v : {"v2", "v3"}) {
    EXPECT_TRUE(read_npy(dir + "/np_f32_" + v + ".npy").bitwise_equal(pattern_array(DType::kF32))) << v;
  }
  const NDArray scalar = read_npy(dir + "/np_scalar.npy");
  EXPECT_EQ(scalar.type().to_string(), "f64[]");
  EXPECT_EQ(scalar.get_as_double(0), 2.5);
  EXPECT_EQ(read_npy(dir + "/np_empty.npy").type().to_string(), "i32[3, 0, 2]");
  EXPECT_TRUE(throws_user_error([&] { read_npy(dir + "/np_complex.npy"); }, UserErrorKind::kUnsupported, "'<c8'"));
  EXPECT_TRUE(throws_user_error([&] { read_npy(dir + "/np_c16.npy"); }, UserErrorKind::kUnsupported, "'<c16'"));
  EXPECT_TRUE(throws_user_error([&] { read_npy(dir + "/np_structured.npy"); }, UserErrorKind::kUnsupported,
                                "structured"));
}

TEST(Npy, NumpyReadsWhatKilnWrites) {
  if (!have_numpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  const std::string dir = temp_dir("from_kiln");
  for (DType d : kAll) write_npy(dir + "/kiln_" + dtype_name(d) + ".npy", pattern_array(d));
  write_npy(dir + "/kiln_scalar.npy", NDArray::scalar(DType::kF64, -1.5));
  write_npy(dir + "/kiln_vector.npy", testing::make(DType::kI64, {5}, {0, 1, 2, 3, 4}));
  write_npy(dir + "/kiln_empty.npy", NDArray::empty(DType::kF32, {0, 4}));
  EXPECT_EQ(std::system(("/usr/bin/python3 " + script() + " check " + dir).c_str()), 0);
}

TEST(Npy, RoundTripsEveryDType) {
  for (DType d : kAll) {
    for (const Shape& s : {Shape{}, Shape{7}, Shape{13, 7}, Shape{2, 0, 3}, kShape}) {
      const NDArray a = pattern_array(d, s);
      const NDArray b = parse_npy(encode_npy(a), "memory");
      EXPECT_TRUE(b.bitwise_equal(a)) << a.type().to_string();
    }
  }
}

TEST(Npy, HeaderIsAlignedToSixtyFourBytes) {
  const std::string bytes = encode_npy(pattern_array(DType::kF32));
  const size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
}

std::string npy_with_header(const std::string& header, size_t data_bytes, char major = 1) {
  std::string out("\x93NUMPY", 6);
  out += major;
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  if (major != 1) out += std::string(2, '\0');
  out += header;
  out += std::string(data_bytes, '\0');
  return out;
}

TEST(Npy, MalformedFilesAreParseErrors) {
  using K = UserErrorKind;
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  EXPECT_NO_THROW(parse_npy(npy_with_header(ok_header, 24), "ok.npy"));
  EXPECT_TRUE(throws_user_error([] { parse_npy("PK\x03\x04 zip", "a.npy"); }, K::kParse, "a.npy"));
  EXPECT_TRUE(throws_user_error([] { parse_npy("", "empty.npy"); }, K::kParse, "magic"));
  EXPECT_TRUE(throws_user_error([&] { parse_npy(npy_with_header(ok_header, 24, 4), "v4.npy"); }, K::kUnsupported,
                                "version 4.0"));
  EXPECT_TRUE(throws_user_error([&] { parse_npy(npy_with_header(ok_header, 24).substr(0, 9), "t.npy"); }, K::kParse,
                                "truncated before the header length"));
  EXPECT_TRUE(throws_user_error([&] { parse_npy(npy_with_header(ok_header, 24).substr(0, 30), "t.npy"); }, K::kParse,
                                "truncated in the header"));
  EXPECT_TRUE(throws_user_error([&] { parse_npy(npy_with_header(ok_header, 23), "t.npy"); }, K::kParse,
                                "truncated data: f32[2, 3] needs 24 bytes"));
  EXPECT_TRUE(throws_user_error([] { parse_npy(npy_with_header("{'descr': '<f4', 'shape': (2,), }", 8), "k.npy"); },
                                K::kParse, "lacks one of"));
  EXPECT_TRUE(throws_user_error(
      [] { parse_npy(npy_with_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8), "b.npy"); },
      K::kParse, "fortran_order"));
  EXPECT_TRUE(throws_user_error(
      [] { parse_npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 8), "s.npy"); },
      K::kParse, "bad shape"));
  EXPECT_TRUE(throws_user_error(
      [] { parse_npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8), "u.npy"); },
      K::kParse, "unknown header key 'x'"));
  EXPECT_TRUE(throws_user_error([] { parse_npy(npy_with_header("['descr']", 8), "d.npy"); }, K::kParse, "expected '{'"));
  EXPECT_TRUE(throws_user_error(
      [] { parse_npy(npy_with_header("{'descr': 'f', 'fortran_order': False, 'shape': (2,), }", 8), "c.npy"); },
      K::kParse, "too short"));
  EXPECT_TRUE(throws_user_error([] { parse_npy(npy_with_header("{'descr: '<f4'}", 8), "q.npy"); }, K::kParse, "header"));
}

TEST(Npy, FileErrors) {
  EXPECT_TRUE(throws_user_error([] { read_npy("/nonexistent/dir/x.npy"); }, UserErrorKind::kNotFound,
                                "/nonexistent/dir/x.npy"));
  EXPECT_TRUE(throws_user_error([] { write_npy("/nonexistent/dir/x.npy", NDArray::scalar(DType::kF32, 1)); },
                                UserErrorKind::kIO, "cannot create"));
}

}  // namespace
}  // namespace kiln::ir
