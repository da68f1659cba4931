// NDArray: a host tensor (dtype, shape, C-contiguous data) whose storage is shared by reference.
// Constants in the graph IR, the reference executor's values and .npy files all use it, so weights
// are held once and never copied behind the user's back. Data is 64-byte aligned when Kiln
// allocates it; an NDArray can also view external memory (e.g. a mapped weights file) that stays
// alive through a keep-alive handle.
#ifndef KILN_IR_NDARRAY_H_
#define KILN_IR_NDARRAY_H_

#include <cstdint>
#include <memory>
#include <span>

#include "kiln/ir/tensor_type.h"

namespace kiln::ir {

class NDArray {
 public:
  NDArray() = default;  // a null array: defined() is false

  // Allocates zero-filled, 64-byte aligned storage.
  static NDArray empty(DType dtype, Shape shape);
  // Views `data` (at least type.nbytes() bytes) without copying; `keep_alive` owns the memory.
  static NDArray view(TensorType type, const void* data, std::shared_ptr<const void> keep_alive);
  // A scalar (shape {}) holding `value` converted to `dtype`.
  static NDArray scalar(DType dtype, double value);

  bool defined() const { return storage_ != nullptr; }
  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  // The shape as plain sizes (an NDArray's shape is always static), e.g. for a DLTensor.
  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t numel() const { return type_.numel(); }
  size_t nbytes() const { return type_.nbytes(); }

  const void* raw_data() const { return data_; }
  // Mutable access; only meaningful while this NDArray is the sole user of its storage (a freshly
  // allocated result). Views of external memory are read-only and KILN_ICHECK-fail here.
  void* mutable_raw_data();

  template <typename T>
  std::span<const T> data() const {
    return {static_cast<const T*>(data_), static_cast<size_t>(numel())};
  }
  template <typename T>
  std::span<T> mutable_data() {
    return {static_cast<T*>(mutable_raw_data()), static_cast<size_t>(numel())};
  }

  // Element `i` (flat index) converted to double, for any dtype (f16/bf16 decoded).
  double get_as_double(int64_t i) const;
  // Sets element `i` from a double, converting (rounding to nearest even for f16/bf16; for
  // integers truncation toward zero, saturating out-of-range values and nan -> 0; != 0 for bool).
  void set_from_double(int64_t i, double value);

  // A copy with its own storage.
  NDArray copy() const;
  // Same storage, another shape with the same number of elements.
  NDArray reshaped(Shape shape) const;
  // True when both have the same type and bytes.
  bool bitwise_equal(const NDArray& other) const;
  // FNV-1a 64-bit checksum of the bytes (used by the text form's constant summaries).
  uint64_t checksum() const;

 private:
  TensorType type_;
  std::vector<int64_t> sizes_;  // type_.shape's sizes
  std::shared_ptr<const void> storage_;
  const void* data_ = nullptr;
  bool writable_ = false;
};

// IEEE half and bfloat16 conversions (round to nearest even).
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_bf16(float f);

}  // namespace kiln::ir

#endif  // KILN_IR_NDARRAY_H_
