// Tensor allocation of the C API: C-contiguous CPU tensors whose data is 64-byte aligned.
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "kiln/runtime/c_api.h"
#include "last_error.h"

namespace kiln::runtime {
namespace {

// One allocation holds the DLTensor header and its shape; the data is a separate aligned block.
struct TensorBlock {
  DLTensor tensor;
  int64_t shape[1];  // ndim entries follow (flexible tail)
};

size_t element_bytes(DLDataType dtype) {
  // DLPack codes this runtime allocates: int, uint, float, bfloat, complex and bool (code 6).
  constexpr uint8_t kBoolCode = 6;
  if (dtype.code != kDLInt && dtype.code != kDLUInt && dtype.code != kDLFloat &&
      dtype.code != kDLBfloat && dtype.code != kDLComplex && dtype.code != kBoolCode) {
    throw std::invalid_argument("dtype code=" + std::to_string(dtype.code) +
                                " is not supported (int, uint, float, bfloat, complex or bool)");
  }
  if (dtype.lanes != 1) {
    throw std::invalid_argument("dtype lanes=" + std::to_string(dtype.lanes) +
                                " is not supported (only scalar dtypes, lanes=1)");
  }
  if (dtype.bits == 0 || dtype.bits % 8 != 0) {
    throw std::invalid_argument("dtype bits=" + std::to_string(dtype.bits) +
                                " is not supported (must be a positive multiple of 8)");
  }
  return dtype.bits / 8;
}

std::string shape_text(const int64_t* shape, int32_t ndim) {
  std::string s = "[";
  for (int32_t i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// n * d, or an error when the byte size of the tensor would not fit in memory at all. (A zero
// dimension makes the whole tensor empty, but every dimension is still checked for sign.)
size_t checked_mul(size_t n, size_t d, const int64_t* shape, int32_t ndim) {
  constexpr size_t kLimit = static_cast<size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / 2;
  if (d != 0 && n > kLimit / d) {
    throw std::invalid_argument("tensor of shape " + shape_text(shape, ndim) +
                                " is too large: its byte size overflows");
  }
  return n * d;
}

size_t checked_nbytes(const int64_t* shape, int32_t ndim, DLDataType dtype) {
  size_t n = element_bytes(dtype);
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      throw std::invalid_argument("dimension " + std::to_string(i) + " is negative (" +
                                  std::to_string(shape[i]) + ")");
    }
    n = checked_mul(n, static_cast<size_t>(shape[i]), shape, ndim);
  }
  return n;
}

}  // namespace
}  // namespace kiln::runtime

using kiln::runtime::guarded_call;

extern "C" int kiln_tensor_alloc(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                 DLTensor** out) {
  return guarded_call("kiln_tensor_alloc", [&] {
    if (out == nullptr) throw std::invalid_argument("out is NULL");
    *out = nullptr;
    if (ndim < 0) throw std::invalid_argument("ndim is negative (" + std::to_string(ndim) + ")");
    if (ndim > 0 && shape == nullptr) throw std::invalid_argument("shape is NULL but ndim > 0");
    const size_t nbytes = kiln::runtime::checked_nbytes(shape, ndim, dtype);
    // The buffer is zeroed (every page touched): more than the machine's memory would end in the
    // OOM killer, not in an error, so it is refused first.
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && nbytes / static_cast<size_t>(page) > static_cast<size_t>(pages)) {
      throw std::length_error("the tensor needs " + std::to_string(nbytes) + " bytes, more than this machine's memory (" +
                              std::to_string(static_cast<size_t>(pages) * static_cast<size_t>(page)) + " bytes)");
    }
    // aligned_alloc needs a non-zero multiple of the alignment; nbytes is far below SIZE_MAX
    // (checked_nbytes bounds it), so rounding up cannot wrap.
    const size_t padded = nbytes == 0 ? KILN_TENSOR_ALIGNMENT
                                      : (nbytes + KILN_TENSOR_ALIGNMENT - 1) /
                                            KILN_TENSOR_ALIGNMENT * KILN_TENSOR_ALIGNMENT;
    void* data = std::aligned_alloc(KILN_TENSOR_ALIGNMENT, padded);
    if (data == nullptr) throw std::bad_alloc();
    std::memset(data, 0, padded);
    const size_t header = sizeof(kiln::runtime::TensorBlock) + sizeof(int64_t) * (ndim > 0 ? ndim - 1 : 0);
    auto* block = static_cast<kiln::runtime::TensorBlock*>(std::malloc(header));
    if (block == nullptr) {
      std::free(data);
      throw std::bad_alloc();
    }
    for (int32_t i = 0; i < ndim; ++i) block->shape[i] = shape[i];
    block->tensor.data = data;
    block->tensor.device = DLDevice{kDLCPU, 0};
    block->tensor.ndim = ndim;
    block->tensor.dtype = dtype;
    block->tensor.shape = block->shape;
    block->tensor.strides = nullptr;  // C-contiguous
    block->tensor.byte_offset = 0;
    *out = &block->tensor;
    return 0;
  });
}

extern "C" int kiln_tensor_free(DLTensor* tensor) {
  if (tensor == nullptr) return 0;
  std::free(tensor->data);
  std::free(reinterpret_cast<kiln::runtime::TensorBlock*>(tensor));
  return 0;
}

extern "C" int kiln_tensor_nbytes(const DLTensor* tensor, size_t* out) {
  return guarded_call("kiln_tensor_nbytes", [&] {
    if (tensor == nullptr || out == nullptr) throw std::invalid_argument("tensor or out is NULL");
    *out = kiln::runtime::checked_nbytes(tensor->shape, tensor->ndim, tensor->dtype);
    return 0;
  });
}

extern "C" int kiln_tensor_to_dlpack(DLTensor* tensor, DLManagedTensor** out) {
  return guarded_call("kiln_tensor_to_dlpack", [&] {
    if (tensor == nullptr || out == nullptr) throw std::invalid_argument("tensor or out is NULL");
    auto* managed = static_cast<DLManagedTensor*>(std::malloc(sizeof(DLManagedTensor)));
    if (managed == nullptr) throw std::bad_alloc();
    managed->dl_tensor = *tensor;  // shares data and shape with the kiln tensor block
    managed->manager_ctx = tensor;
    managed->deleter = [](DLManagedTensor* self) {
      kiln_tensor_free(static_cast<DLTensor*>(self->manager_ctx));
      std::free(self);
    };
    *out = managed;
    return 0;
  });
}
