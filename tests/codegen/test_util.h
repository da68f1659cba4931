// Helpers for the code generator's tests: owned f32 buffers viewed as DLTensors, and running a
// shell command for its output.
#ifndef KILN_TESTS_CODEGEN_TEST_UTIL_H_
#define KILN_TESTS_CODEGEN_TEST_UTIL_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace kiln::codegen::testing {

// A 64-byte-aligned buffer of T with a DLTensor view (the convention's alignment promise).
template <typename T>
class Buffer {
 public:
  Buffer(std::vector<int64_t> shape, DLDataType dtype) : shape_(std::move(shape)) {
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    size_ = static_cast<size_t>(n);
    const size_t bytes = ((size_ * sizeof(T) + 63) / 64 + 1) * 64;
    data_ = static_cast<T*>(std::aligned_alloc(64, bytes));
    for (size_t i = 0; i < size_; ++i) data_[i] = T(0);
    tensor_.data = data_;
    tensor_.device = {kDLCPU, 0};
    tensor_.ndim = static_cast<int32_t>(shape_.size());
    tensor_.dtype = dtype;
    tensor_.shape = shape_.data();
    tensor_.strides = nullptr;
    tensor_.byte_offset = 0;
  }
  ~Buffer() { std::free(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  T* data() { return data_; }
  const DLTensor& tensor() const { return tensor_; }

 private:
  std::vector<int64_t> shape_;
  size_t size_ = 0;
  T* data_ = nullptr;
  DLTensor tensor_{};
};

inline DLDataType f32_type() { return DLDataType{kDLFloat, 32, 1}; }
inline DLDataType i32_type() { return DLDataType{kDLInt, 32, 1}; }

// Runs `command` through the shell; returns its stdout (stderr merged) and sets *status.
inline std::string run_command(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  *status = pclose(pipe);
  return out;
}

}  // namespace kiln::codegen::testing

#endif  // KILN_TESTS_CODEGEN_TEST_UTIL_H_
