// Header-only C++ wrapper over Kiln's runtime C API (c_api.h): RAII tensors and exceptions.
//
// Every C call that fails becomes a kiln::runtime::RuntimeError whose what() is the C API's
// kiln_get_last_error() message. Nothing here adds to the ABI: the wrapper compiles into the
// program that includes it and calls only the exported kiln_* functions, so it links against
// libkiln_runtime.so alone.
//
//   kiln::runtime::Tensor t = kiln::runtime::Tensor::empty({2, 3}, kiln::runtime::dtype_f32());
//   float* p = t.data<float>();
//   kiln::runtime::parallel_for(n, [&](int64_t begin, int64_t end) { ... });
#ifndef KILN_RUNTIME_KILN_RUNTIME_HPP_
#define KILN_RUNTIME_KILN_RUNTIME_HPP_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/runtime/c_api.h"

namespace kiln::runtime {

// A failed runtime call; what() is the C API's last-error message.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws RuntimeError with the calling thread's last-error message when status != 0.
inline void check(int status) {
  if (status != 0) throw RuntimeError(kiln_get_last_error());
}

inline DLDataType dtype_f32() { return DLDataType{kDLFloat, 32, 1}; }
inline DLDataType dtype_f64() { return DLDataType{kDLFloat, 64, 1}; }
inline DLDataType dtype_i32() { return DLDataType{kDLInt, 32, 1}; }
inline DLDataType dtype_i64() { return DLDataType{kDLInt, 64, 1}; }
inline DLDataType dtype_u8() { return DLDataType{kDLUInt, 8, 1}; }

// True when the loaded libkiln_runtime has the ABI this header was written for.
inline bool abi_matches() { return kiln_runtime_abi_version() == KILN_RUNTIME_ABI_VERSION; }

// An owned tensor from kiln_tensor_alloc(): 64-byte aligned, zero-filled, C-contiguous, on CPU.
// Move-only; the destructor frees it.
class Tensor {
 public:
  Tensor() = default;
  // Takes ownership of a tensor from kiln_tensor_alloc().
  explicit Tensor(DLTensor* owned) : tensor_(owned) {}
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& other) noexcept : tensor_(std::exchange(other.tensor_, nullptr)) {}
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) reset(std::exchange(other.tensor_, nullptr));
    return *this;
  }
  ~Tensor() { reset(); }

  static Tensor empty(std::span<const int64_t> shape, DLDataType dtype) {
    DLTensor* t = nullptr;
    check(kiln_tensor_alloc(shape.data(), static_cast<int32_t>(shape.size()), dtype, &t));
    return Tensor(t);
  }
  static Tensor empty(std::initializer_list<int64_t> shape, DLDataType dtype) {
    return empty(std::span<const int64_t>(shape.begin(), shape.size()), dtype);
  }

  bool defined() const { return tensor_ != nullptr; }
  DLTensor* get() const { return tensor_; }
  int32_t ndim() const { return defined_or_throw()->ndim; }
  DLDataType dtype() const { return defined_or_throw()->dtype; }
  std::vector<int64_t> shape() const {
    const DLTensor* t = defined_or_throw();
    return std::vector<int64_t>(t->shape, t->shape + t->ndim);
  }
  size_t nbytes() const {
    size_t n = 0;
    check(kiln_tensor_nbytes(defined_or_throw(), &n));
    return n;
  }
  // Number of elements (1 for a 0-d tensor, 0 when any dimension is 0).
  int64_t numel() const {
    const DLTensor* t = defined_or_throw();
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
    return n;
  }
  void* raw_data() const { return defined_or_throw()->data; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }

  // Gives up ownership; the caller must kiln_tensor_free() the result.
  DLTensor* release() { return std::exchange(tensor_, nullptr); }

  // Moves the tensor into a DLManagedTensor for zero-copy exchange; this Tensor becomes empty.
  // The consumer calls managed->deleter(managed) when done.
  DLManagedTensor* to_dlpack() && {
    DLManagedTensor* managed = nullptr;
    check(kiln_tensor_to_dlpack(defined_or_throw(), &managed));
    tensor_ = nullptr;  // owned by `managed` now
    return managed;
  }

 private:
  const DLTensor* defined_or_throw() const {
    if (tensor_ == nullptr) throw RuntimeError("kiln::runtime::Tensor: use of an empty tensor");
    return tensor_;
  }
  DLTensor* defined_or_throw() {
    if (tensor_ == nullptr) throw RuntimeError("kiln::runtime::Tensor: use of an empty tensor");
    return tensor_;
  }
  void reset(DLTensor* t = nullptr) {
    if (tensor_ != nullptr) kiln_tensor_free(tensor_);
    tensor_ = t;
  }

  DLTensor* tensor_ = nullptr;
};

// Runs fn(begin, end) over [0, n) on the runtime's thread pool. An exception thrown by fn is
// caught on its thread and rethrown here as RuntimeError carrying its message.
template <typename F>
void parallel_for(int64_t n, F&& fn) {
  auto trampoline = [](int64_t begin, int64_t end, void* closure) -> int32_t {
    try {
      (*static_cast<std::remove_reference_t<F>*>(closure))(begin, end);
      return 0;
    } catch (const std::exception& e) {
      kiln_set_last_error(e.what());
    } catch (...) {
      kiln_set_last_error("parallel_for body threw a non-standard exception");
    }
    return -1;
  };
  check(kiln_parallel_for(trampoline, const_cast<void*>(static_cast<const void*>(&fn)), n));
}

inline void set_num_threads(int32_t n) { check(kiln_set_num_threads(n)); }
inline int32_t num_threads() { return kiln_get_num_threads(); }

// A loaded artifact (kiln_module_load). Copyable handle: copies share the module.
class Module {
 public:
  Module() = default;
  static Module load(const std::string& path) {
    KilnModule* m = nullptr;
    check(kiln_module_load(path.c_str(), &m));
    Module out;
    out.module_ = std::shared_ptr<KilnModule>(m, kiln_module_free);
    return out;
  }
  KilnModule* get() const { return module_.get(); }
  int32_t num_inputs() const {
    int32_t n = 0;
    check(kiln_module_num_inputs(module_.get(), &n));
    return n;
  }
  int32_t num_outputs() const {
    int32_t n = 0;
    check(kiln_module_num_outputs(module_.get(), &n));
    return n;
  }
  KilnTensorInfo input_info(int32_t i) const {
    KilnTensorInfo info{};
    check(kiln_module_input_info(module_.get(), i, &info));
    return info;
  }
  KilnTensorInfo output_info(int32_t i) const {
    KilnTensorInfo info{};
    check(kiln_module_output_info(module_.get(), i, &info));
    return info;
  }
  int32_t input_index(const std::string& name) const {
    int32_t i = 0;
    check(kiln_module_find_input(module_.get(), name.c_str(), &i));
    return i;
  }
  int32_t output_index(const std::string& name) const {
    int32_t i = 0;
    check(kiln_module_find_output(module_.get(), name.c_str(), &i));
    return i;
  }

 private:
  std::shared_ptr<KilnModule> module_;
};

// Runs a module (kiln_executor_*). Move-only; one thread at a time.
class Executor {
 public:
  explicit Executor(const Module& module) {
    check(kiln_executor_create(module.get(), &executor_));
  }
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  Executor(Executor&& o) noexcept : executor_(std::exchange(o.executor_, nullptr)) {}
  Executor& operator=(Executor&& o) noexcept {
    if (this != &o) {
      kiln_executor_free(executor_);
      executor_ = std::exchange(o.executor_, nullptr);
    }
    return *this;
  }
  ~Executor() { kiln_executor_free(executor_); }

  KilnExecutor* get() const { return executor_; }
  void set_input(int32_t index, const DLTensor& value) { check(kiln_executor_set_input(executor_, index, &value)); }
  void set_input(const std::string& name, const DLTensor& value) {
    check(kiln_executor_set_input_by_name(executor_, name.c_str(), &value));
  }
  void bind_input(int32_t index, const DLTensor& value) { check(kiln_executor_bind_input(executor_, index, &value)); }
  void run() { check(kiln_executor_run(executor_)); }
  void get_output(int32_t index, DLTensor& out) { check(kiln_executor_get_output(executor_, index, &out)); }
  const DLTensor& output(int32_t index) {
    const DLTensor* view = nullptr;
    check(kiln_executor_output_view(executor_, index, &view));
    return *view;
  }
  void set_profiling(bool enabled) { check(kiln_executor_set_profiling(executor_, enabled ? 1 : 0)); }
  KilnKernelProfile kernel_profile(int32_t kernel) const {
    KilnKernelProfile p{};
    check(kiln_executor_kernel_profile(executor_, kernel, &p));
    return p;
  }
  // peak_gflops: the machine's peak for the threads used, for the % of peak column; with
  // bandwidth_gbps (its memory bandwidth) also the roofline check; int8_peak_gops: the int8 peak
  // for the int8 kernels' GOP/s (0: unknown).
  std::string profile_report(double peak_gflops = 0, double bandwidth_gbps = 0, double int8_peak_gops = 0) const {
    char* text = nullptr;
    check(kiln_executor_profile_report_with_int8_peak(executor_, peak_gflops, bandwidth_gbps, int8_peak_gops, &text));
    std::string s(text);
    kiln_free_text(text);
    return s;
  }
  int32_t num_kernels() const {
    int32_t n = 0;
    check(kiln_executor_num_kernels(executor_, &n));
    return n;
  }
  void set_tracing(bool enabled) { check(kiln_executor_set_tracing(executor_, enabled ? 1 : 0)); }
  // The recorded runs as Chrome trace-event JSON (kiln_executor_trace_json).
  std::string trace_json(const std::string& process_name = "kiln") const {
    char* text = nullptr;
    check(kiln_executor_trace_json(executor_, process_name.c_str(), &text));
    std::string s(text);
    kiln_free_text(text);
    return s;
  }

 private:
  KilnExecutor* executor_ = nullptr;
};

// kiln_artifact_describe: the artifact's metadata, read from the file without running it.
inline std::string describe_artifact(const std::string& path) {
  char* text = nullptr;
  check(kiln_artifact_describe(path.c_str(), &text));
  std::string s(text);
  kiln_free_text(text);
  return s;
}

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_KILN_RUNTIME_HPP_
