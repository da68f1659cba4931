// Tensor allocation through the C API: alignment, zero fill, shapes, DLPack exchange, and every
// error path with its message.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <regex>
#include <string>

#include "kiln/runtime/c_api.h"

namespace {

constexpr DLDataType kF32{kDLFloat, 32, 1};

// Allocates and expects failure; returns the last-error message and checks *out was nulled.
std::string alloc_error(const int64_t* shape, int32_t ndim, DLDataType dtype) {
  DLTensor* t = reinterpret_cast<DLTensor*>(0x1);  // must be overwritten with NULL
  EXPECT_EQ(kiln_tensor_alloc(shape, ndim, dtype, &t), -1);
  EXPECT_EQ(t, nullptr);
  return kiln_get_last_error();
}

TEST(TensorTest, AllocIsAlignedZeroFilledAndDescribed) {
  // Several sizes, including ones that are not multiples of the alignment.
  for (int64_t n : {1, 3, 15, 16, 17, 63, 64, 65, 1000, 4097}) {
    const int64_t shape[2] = {n, 3};
    DLTensor* t = nullptr;
    ASSERT_EQ(kiln_tensor_alloc(shape, 2, kF32, &t), 0) << kiln_get_last_error();
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % KILN_TENSOR_ALIGNMENT, 0u) << "n=" << n;
    EXPECT_EQ(t->ndim, 2);
    EXPECT_EQ(t->shape[0], n);
    EXPECT_EQ(t->shape[1], 3);
    EXPECT_EQ(t->strides, nullptr);
    EXPECT_EQ(t->byte_offset, 0u);
    EXPECT_EQ(t->device.device_type, kDLCPU);
    EXPECT_EQ(t->dtype.code, kDLFloat);
    EXPECT_EQ(t->dtype.bits, 32);
    size_t nbytes = 0;
    ASSERT_EQ(kiln_tensor_nbytes(t, &nbytes), 0);
    EXPECT_EQ(nbytes, static_cast<size_t>(n * 3 * 4));
    const auto* bytes = static_cast<const unsigned char*>(t->data);
    for (size_t i = 0; i < nbytes; ++i) {
      ASSERT_EQ(bytes[i], 0) << "n=" << n << " byte " << i << " is not zero";
    }
    std::memset(t->data, 0xab, nbytes);  // the whole extent is writable (ASan/valgrind would see)
    EXPECT_EQ(kiln_tensor_free(t), 0);
  }
}

TEST(TensorTest, ShapeIsCopied) {
  int64_t shape[3] = {2, 3, 4};
  DLTensor* t = nullptr;
  ASSERT_EQ(kiln_tensor_alloc(shape, 3, kF32, &t), 0);
  shape[0] = 99;
  EXPECT_EQ(t->shape[0], 2);
  EXPECT_NE(t->shape, shape);
  kiln_tensor_free(t);
}

TEST(TensorTest, ZeroDimTensorHoldsOneElement) {
  DLTensor* t = nullptr;
  ASSERT_EQ(kiln_tensor_alloc(nullptr, 0, DLDataType{kDLFloat, 64, 1}, &t), 0)
      << kiln_get_last_error();
  EXPECT_EQ(t->ndim, 0);
  ASSERT_NE(t->data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % KILN_TENSOR_ALIGNMENT, 0u);
  size_t nbytes = 0;
  ASSERT_EQ(kiln_tensor_nbytes(t, &nbytes), 0);
  EXPECT_EQ(nbytes, 8u);
  EXPECT_EQ(*static_cast<double*>(t->data), 0.0);
  kiln_tensor_free(t);
}

TEST(TensorTest, ZeroSizeTensorHasValidAlignedData) {
  const int64_t shape[3] = {4, 0, 5};
  DLTensor* t = nullptr;
  ASSERT_EQ(kiln_tensor_alloc(shape, 3, kF32, &t), 0) << kiln_get_last_error();
  ASSERT_NE(t->data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % KILN_TENSOR_ALIGNMENT, 0u);
  size_t nbytes = 1;
  ASSERT_EQ(kiln_tensor_nbytes(t, &nbytes), 0);
  EXPECT_EQ(nbytes, 0u);
  kiln_tensor_free(t);
}

TEST(TensorTest, EveryScalarDtypeAllocates) {
  const DLDataType dtypes[] = {{kDLInt, 8, 1},   {kDLInt, 64, 1},   {kDLUInt, 8, 1},
                               {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLComplex, 64, 1},
                               {6 /* bool */, 8, 1}};
  for (DLDataType dt : dtypes) {
    const int64_t shape[1] = {10};
    DLTensor* t = nullptr;
    ASSERT_EQ(kiln_tensor_alloc(shape, 1, dt, &t), 0)
        << "code=" << int(dt.code) << " bits=" << int(dt.bits) << ": " << kiln_get_last_error();
    size_t nbytes = 0;
    ASSERT_EQ(kiln_tensor_nbytes(t, &nbytes), 0);
    EXPECT_EQ(nbytes, 10u * dt.bits / 8);
    kiln_tensor_free(t);
  }
}

TEST(TensorTest, FreeNullIsANoOp) { EXPECT_EQ(kiln_tensor_free(nullptr), 0); }

TEST(TensorTest, NegativeDimensionIsRejected) {
  const int64_t shape[2] = {3, -2};
  EXPECT_EQ(alloc_error(shape, 2, kF32), "kiln_tensor_alloc: dimension 1 is negative (-2)");
}

TEST(TensorTest, NegativeNdimIsRejected) {
  const int64_t shape[1] = {3};
  EXPECT_EQ(alloc_error(shape, -1, kF32), "kiln_tensor_alloc: ndim is negative (-1)");
}

TEST(TensorTest, NullShapeWithDimensionsIsRejected) {
  EXPECT_EQ(alloc_error(nullptr, 2, kF32), "kiln_tensor_alloc: shape is NULL but ndim > 0");
}

TEST(TensorTest, NullOutIsRejected) {
  const int64_t shape[1] = {3};
  EXPECT_EQ(kiln_tensor_alloc(shape, 1, kF32, nullptr), -1);
  EXPECT_STREQ(kiln_get_last_error(), "kiln_tensor_alloc: out is NULL");
}

TEST(TensorTest, BadDtypesAreRejected) {
  const int64_t shape[1] = {3};
  EXPECT_EQ(alloc_error(shape, 1, DLDataType{kDLFloat, 32, 4}),
            "kiln_tensor_alloc: dtype lanes=4 is not supported (only scalar dtypes, lanes=1)");
  EXPECT_EQ(alloc_error(shape, 1, DLDataType{kDLInt, 4, 1}),
            "kiln_tensor_alloc: dtype bits=4 is not supported (must be a positive multiple of 8)");
  EXPECT_EQ(alloc_error(shape, 1, DLDataType{kDLFloat, 0, 1}),
            "kiln_tensor_alloc: dtype bits=0 is not supported (must be a positive multiple of 8)");
  EXPECT_EQ(alloc_error(shape, 1, DLDataType{kDLOpaqueHandle, 64, 1}),
            "kiln_tensor_alloc: dtype code=3 is not supported (int, uint, float, bfloat, complex "
            "or bool)");
}

TEST(TensorTest, SizeOverflowIsRejected) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t shape[2] = {big, 2};
  EXPECT_EQ(alloc_error(shape, 2, kF32),
            "kiln_tensor_alloc: tensor of shape [9223372036854775807, 2] is too large: its byte "
            "size overflows");
  // Each dimension fits, the product does not.
  const int64_t shape2[3] = {1 << 21, 1 << 21, 1 << 21};
  EXPECT_NE(alloc_error(shape2, 3, DLDataType{kDLUInt, 8, 1}).find("overflows"), std::string::npos);
}

TEST(TensorTest, MoreThanTheMachinesMemoryIsRefusedBeforeAllocating) {
  // 2^60 bytes passes the overflow check but no machine has it. Refused before aligned_alloc:
  // an overcommitting allocator could hand it out and the zero-fill would meet the OOM killer
  // (found by scripts/fuzz.sh runtime_api: ASan aborts on such a request).
  const int64_t shape[1] = {int64_t{1} << 60};
  const std::string message = alloc_error(shape, 1, DLDataType{kDLUInt, 8, 1});
  EXPECT_NE(message.find("needs 1152921504606846976 bytes, more than this machine's memory"), std::string::npos)
      << message;
  // The fuzzer's crasher: shape [2588028379712, 1] f8 (0x92cffe3000940 bytes).
  const int64_t fuzz_shape[2] = {int64_t{0x92cffe3000940}, 1};
  EXPECT_NE(alloc_error(fuzz_shape, 2, DLDataType{kDLUInt, 8, 1}).find("more than this machine's memory"), std::string::npos);
}

TEST(TensorTest, NbytesNullArgumentsAreRejected) {
  size_t n = 0;
  EXPECT_EQ(kiln_tensor_nbytes(nullptr, &n), -1);
  EXPECT_STREQ(kiln_get_last_error(), "kiln_tensor_nbytes: tensor or out is NULL");
  const int64_t shape[1] = {2};
  DLTensor* t = nullptr;
  ASSERT_EQ(kiln_tensor_alloc(shape, 1, kF32, &t), 0);
  EXPECT_EQ(kiln_tensor_nbytes(t, nullptr), -1);
  EXPECT_STREQ(kiln_get_last_error(), "kiln_tensor_nbytes: tensor or out is NULL");
  kiln_tensor_free(t);
}

TEST(TensorTest, DlpackExchangeSharesDataAndDeleterFrees) {
  const int64_t shape[2] = {5, 7};
  DLTensor* t = nullptr;
  ASSERT_EQ(kiln_tensor_alloc(shape, 2, kF32, &t), 0);
  static_cast<float*>(t->data)[34] = 3.5f;
  DLManagedTensor* managed = nullptr;
  ASSERT_EQ(kiln_tensor_to_dlpack(t, &managed), 0) << kiln_get_last_error();
  ASSERT_NE(managed, nullptr);
  // Zero copy: the consumer sees the same buffer, shape and dtype.
  EXPECT_EQ(managed->dl_tensor.data, t->data);
  EXPECT_EQ(managed->dl_tensor.ndim, 2);
  EXPECT_EQ(managed->dl_tensor.shape[0], 5);
  EXPECT_EQ(managed->dl_tensor.shape[1], 7);
  EXPECT_EQ(managed->dl_tensor.strides, nullptr);
  EXPECT_EQ(static_cast<float*>(managed->dl_tensor.data)[34], 3.5f);
  ASSERT_NE(managed->deleter, nullptr);
  managed->deleter(managed);  // frees tensor and wrapper (leaks or double frees show under ASan)
}

TEST(TensorTest, DlpackNullArgumentsAreRejected) {
  DLManagedTensor* managed = nullptr;
  EXPECT_EQ(kiln_tensor_to_dlpack(nullptr, &managed), -1);
  EXPECT_STREQ(kiln_get_last_error(), "kiln_tensor_to_dlpack: tensor or out is NULL");
}

TEST(VersionTest, AbiMatchesHeader) {
  EXPECT_EQ(kiln_runtime_abi_version(), KILN_RUNTIME_ABI_VERSION);
  ASSERT_NE(kiln_runtime_version(), nullptr);
  // "MAJOR.MINOR.PATCH", as set by CMake's project(VERSION).
  EXPECT_TRUE(std::regex_match(kiln_runtime_version(), std::regex(R"(\d+\.\d+\.\d+)")))
      << kiln_runtime_version();
}

}  // namespace
