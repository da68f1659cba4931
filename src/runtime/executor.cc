// GraphExecutor (see executor.h).
#include "executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include <sys/syscall.h>
#include <unistd.h>

#include "profile_report.h"
#include "thread_pool.h"

namespace kiln::runtime {
namespace {

using artifact::TensorKind;

void* aligned_buffer(uint64_t nbytes) {
  const uint64_t padded = nbytes == 0 ? KILN_TENSOR_ALIGNMENT
                                      : (nbytes + KILN_TENSOR_ALIGNMENT - 1) / KILN_TENSOR_ALIGNMENT *
                                            KILN_TENSOR_ALIGNMENT;
  void* p = std::aligned_alloc(KILN_TENSOR_ALIGNMENT, padded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, padded);
  return p;
}

double micros(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// The OS thread id (what top and perf show), for the trace's thread rows.
uint64_t current_thread_id() { return static_cast<uint64_t>(::syscall(SYS_gettid)); }

bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

std::string value_text(const DLTensor& v) {
  std::vector<int64_t> shape(v.shape, v.shape + (v.ndim > 0 ? v.ndim : 0));
  return artifact::dtype_text(v.dtype) + artifact::shape_text(shape);
}

bool is_compact(const DLTensor& v) {
  if (v.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = v.ndim - 1; i >= 0; --i) {
    if (v.shape[i] != 1 && v.strides[i] != expected) return false;
    expected *= v.shape[i];
  }
  return true;
}

uint64_t spec_nbytes(const artifact::TensorSpec& s) {
  uint64_t n = artifact::element_bytes(s.dtype);
  for (int64_t d : s.shape) n *= static_cast<uint64_t>(d);
  return n;
}

}  // namespace

Executor::Executor(std::shared_ptr<const LoadedModule> module) : module_(std::move(module)) {
  const auto& plan = module_->plan();
  try {
    std::vector<unsigned char*> storages;
    for (uint64_t size : plan.storage_sizes) {
      owned_.push_back(aligned_buffer(size));
      storages.push_back(static_cast<unsigned char*>(owned_.back()));
    }
    for (const auto& t : plan.tensors) {
      void* p = nullptr;
      switch (t.kind) {
        case TensorKind::kInput:
        case TensorKind::kOutput:
          owned_.push_back(aligned_buffer(t.nbytes));
          p = owned_.back();
          break;
        case TensorKind::kConstant:
          p = const_cast<unsigned char*>(module_->weights()) + t.offset;  // kernels only read it
          break;
        case TensorKind::kIntermediate:
          p = storages[t.storage_id] + t.offset;
          break;
      }
      default_data_.push_back(p);
    }
  } catch (...) {
    for (void* p : owned_) std::free(p);
    throw;
  }
  data_ = default_data_;
  auto make = [&](int32_t id) {
    const auto& t = plan.tensors[id];
    DLTensor d{};
    d.data = data_[id];
    d.device = DLDevice{kDLCPU, 0};
    d.ndim = static_cast<int32_t>(t.shape.size());
    d.dtype = t.dtype;
    d.shape = const_cast<int64_t*>(t.shape.data());
    d.strides = nullptr;
    d.byte_offset = 0;
    return d;
  };
  for (const auto& call : plan.kernels) {
    std::vector<DLTensor> args;
    for (int32_t id : call.args) args.push_back(make(id));
    args_.push_back(std::move(args));
  }
  for (int32_t id : plan.outputs) output_views_.push_back(make(id));
  profile_.resize(plan.kernels.size());
}

Executor::~Executor() {
  for (void* p : owned_) std::free(p);
}

void Executor::check_value(const char* what, int32_t index, const artifact::TensorSpec& spec,
                           const DLTensor& value) const {
  const std::string subject = std::string(what) + " " + std::to_string(index) + " ('" + spec.name + "')";
  if (value.device.device_type != kDLCPU) throw std::invalid_argument(subject + ": the tensor is not on the CPU");
  const std::string expected = artifact::dtype_text(spec.dtype) + artifact::shape_text(spec.shape);
  bool ok = same_dtype(value.dtype, spec.dtype) && value.ndim == static_cast<int32_t>(spec.shape.size()) &&
            (value.ndim == 0 || value.shape != nullptr);
  for (int32_t i = 0; ok && i < value.ndim; ++i) ok = value.shape[i] == spec.shape[i];
  if (!ok) {
    throw std::invalid_argument(subject + ": expected " + expected + ", got " +
                                (value.ndim >= 0 && (value.ndim == 0 || value.shape) ? value_text(value) : "a malformed tensor"));
  }
  if (!is_compact(value)) throw std::invalid_argument(subject + ": the tensor is not C-contiguous");
  if (value.data == nullptr && spec_nbytes(spec) != 0) throw std::invalid_argument(subject + ": data is NULL");
}

void Executor::set_input(int32_t index, const DLTensor& value) {
  const auto& plan = module_->plan();
  if (index < 0 || index >= static_cast<int32_t>(plan.inputs.size())) {
    throw std::out_of_range("input index " + std::to_string(index) + " out of range (the model has " +
                            std::to_string(plan.inputs.size()) + " inputs)");
  }
  check_value("input", index, module_->meta().inputs[index], value);
  const int32_t id = plan.inputs[index];
  data_[id] = default_data_[id];
  if (plan.tensors[id].nbytes != 0) {
    std::memcpy(data_[id], static_cast<const char*>(value.data) + value.byte_offset, plan.tensors[id].nbytes);
  }
}

void Executor::bind_input(int32_t index, const DLTensor& value) {
  const auto& plan = module_->plan();
  if (index < 0 || index >= static_cast<int32_t>(plan.inputs.size())) {
    throw std::out_of_range("input index " + std::to_string(index) + " out of range (the model has " +
                            std::to_string(plan.inputs.size()) + " inputs)");
  }
  check_value("input", index, module_->meta().inputs[index], value);
  char* p = static_cast<char*>(value.data) + value.byte_offset;
  if (reinterpret_cast<uintptr_t>(p) % KILN_TENSOR_ALIGNMENT != 0) {
    throw std::invalid_argument("input " + std::to_string(index) + " ('" + module_->meta().inputs[index].name +
                                "'): zero-copy binding needs 64-byte aligned data; use set_input to copy");
  }
  data_[plan.inputs[index]] = p;
}

void Executor::run() {
  const auto& plan = module_->plan();
  ThreadPoolRun pool_run;  // workers spin between this run's parallel loops, sleep after it
  if (profiling_) ++profiled_runs_;
  const bool timed = profiling_ || tracing_;
  const uint64_t thread = tracing_ ? current_thread_id() : 0;
  const auto run_start = tracing_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const auto& call = plan.kernels[k];
    std::vector<DLTensor>& args = args_[k];
    for (size_t j = 0; j < args.size(); ++j) args[j].data = data_[call.args[j]];
    int32_t rc;
    if (timed) {
      const auto start = std::chrono::steady_clock::now();
      rc = module_->kernel(k)(args.data(), static_cast<int32_t>(args.size()));
      const auto end = std::chrono::steady_clock::now();
      if (profiling_) {
        profile_[k].calls += 1;
        profile_[k].total_seconds += std::chrono::duration<double>(end - start).count();
      }
      if (tracing_) {
        trace_.push_back(TraceEvent{static_cast<int32_t>(k), traced_runs_, micros(start - trace_origin_),
                                    micros(end - start), thread});
      }
    } else {
      rc = module_->kernel(k)(args.data(), static_cast<int32_t>(args.size()));
    }
    if (rc != 0) {
      throw std::runtime_error("kernel '" + call.symbol + "' (step " + std::to_string(k + 1) + " of " +
                               std::to_string(plan.kernels.size()) + ") failed: " + kiln_get_last_error());
    }
  }
  if (tracing_) {
    const auto run_end = std::chrono::steady_clock::now();
    trace_.push_back(TraceEvent{-1, traced_runs_++, micros(run_start - trace_origin_), micros(run_end - run_start), thread});
  }
}

const DLTensor* Executor::output_view(int32_t index) const {
  const auto& plan = module_->plan();
  if (index < 0 || index >= static_cast<int32_t>(plan.outputs.size())) {
    throw std::out_of_range("output index " + std::to_string(index) + " out of range (the model has " +
                            std::to_string(plan.outputs.size()) + " outputs)");
  }
  DLTensor& v = const_cast<DLTensor&>(output_views_[index]);
  v.data = data_[plan.outputs[index]];
  return &v;
}

void Executor::get_output(int32_t index, DLTensor* out) const {
  const DLTensor* view = output_view(index);
  if (out == nullptr) throw std::invalid_argument("out is NULL");
  check_value("output", index, module_->meta().outputs[index], *out);
  const uint64_t n = module_->plan().tensors[module_->plan().outputs[index]].nbytes;
  if (n != 0) std::memcpy(static_cast<char*>(out->data) + out->byte_offset, view->data, n);
}

int32_t Executor::input_index(const std::string& name) const {
  const auto& in = module_->meta().inputs;
  std::string names;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].name == name) return static_cast<int32_t>(i);
    names += (names.empty() ? "" : ", ") + in[i].name;
  }
  throw std::invalid_argument("the model has no input named '" + name + "' (its inputs: " + names + ")");
}

int32_t Executor::output_index(const std::string& name) const {
  const auto& out = module_->meta().outputs;
  std::string names;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].name == name) return static_cast<int32_t>(i);
    names += (names.empty() ? "" : ", ") + out[i].name;
  }
  throw std::invalid_argument("the model has no output named '" + name + "' (its outputs: " + names + ")");
}

void Executor::set_profiling(bool enabled) {
  profiling_ = enabled;
  profiled_runs_ = 0;
  for (auto& p : profile_) p = KernelProfile{};
}

void Executor::set_tracing(bool enabled) {
  tracing_ = enabled;
  traced_runs_ = 0;
  trace_.clear();
  trace_origin_ = std::chrono::steady_clock::now();
}

std::string Executor::trace_json(std::string_view process_name) const {
  return format_trace_json(module_->plan(), trace_, process_name);
}

std::string Executor::profile_report(double peak_gflops, double bandwidth_gbps, double int8_peak_gops) const {
  return format_profile_report(module_->plan(), profile_, profiled_runs_,
                               MachineCeilings{peak_gflops, bandwidth_gbps, int8_peak_gops});
}

}  // namespace kiln::runtime
