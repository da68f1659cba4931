// C API of modules and executors (c_api.h), over LoadedModule and Executor.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "cpu_features.h"
#include "executor.h"
#include "kiln/runtime/c_api.h"
#include "last_error.h"
#include "module.h"

struct KilnModule {
  std::shared_ptr<const kiln::runtime::LoadedModule> module;
};

struct KilnExecutor {
  std::unique_ptr<kiln::runtime::Executor> executor;
};

namespace {

using kiln::runtime::guarded_call;

template <typename T>
T& deref(T* p, const char* what) {
  if (p == nullptr) throw std::invalid_argument(std::string(what) + " is NULL");
  return *p;
}

char* copy_text(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

void fill_info(const kiln::artifact::TensorSpec& s, KilnTensorInfo* out) {
  out->name = s.name.c_str();
  out->dtype = s.dtype;
  out->ndim = static_cast<int32_t>(s.shape.size());
  out->shape = s.shape.data();
}

const kiln::artifact::TensorSpec& spec_at(const std::vector<kiln::artifact::TensorSpec>& v, int32_t index,
                                          const char* what) {
  if (index < 0 || index >= static_cast<int32_t>(v.size())) {
    throw std::out_of_range(std::string(what) + " index " + std::to_string(index) + " out of range (the model has " +
                            std::to_string(v.size()) + " " + what + "s)");
  }
  return v[index];
}

int32_t find_spec(const std::vector<kiln::artifact::TensorSpec>& v, const char* name, const char* what) {
  if (name == nullptr) throw std::invalid_argument("name is NULL");
  std::string names;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].name == name) return static_cast<int32_t>(i);
    names += (names.empty() ? "" : ", ") + v[i].name;
  }
  throw std::invalid_argument(std::string("the model has no ") + what + " named '" + name + "' (its " + what +
                              "s: " + names + ")");
}

}  // namespace

extern "C" int kiln_module_load(const char* path, KilnModule** out) {
  return guarded_call("kiln_module_load", [&] {
    deref(out, "out") = nullptr;
    if (path == nullptr) throw std::invalid_argument("path is NULL");
    auto m = kiln::runtime::load_module(path);
    *out = new KilnModule{std::move(m)};
    return 0;
  });
}

extern "C" int kiln_module_free(KilnModule* module) {
  delete module;
  return 0;
}

extern "C" int kiln_module_num_inputs(const KilnModule* module, int32_t* out) {
  return guarded_call("kiln_module_num_inputs", [&] {
    deref(out, "out") = static_cast<int32_t>(deref(module, "module").module->meta().inputs.size());
    return 0;
  });
}

extern "C" int kiln_module_num_outputs(const KilnModule* module, int32_t* out) {
  return guarded_call("kiln_module_num_outputs", [&] {
    deref(out, "out") = static_cast<int32_t>(deref(module, "module").module->meta().outputs.size());
    return 0;
  });
}

extern "C" int kiln_module_input_info(const KilnModule* module, int32_t index, KilnTensorInfo* out) {
  return guarded_call("kiln_module_input_info", [&] {
    fill_info(spec_at(deref(module, "module").module->meta().inputs, index, "input"), &deref(out, "out"));
    return 0;
  });
}

extern "C" int kiln_module_output_info(const KilnModule* module, int32_t index, KilnTensorInfo* out) {
  return guarded_call("kiln_module_output_info", [&] {
    fill_info(spec_at(deref(module, "module").module->meta().outputs, index, "output"), &deref(out, "out"));
    return 0;
  });
}

extern "C" int kiln_module_find_input(const KilnModule* module, const char* name, int32_t* out) {
  return guarded_call("kiln_module_find_input", [&] {
    deref(out, "out") = find_spec(deref(module, "module").module->meta().inputs, name, "input");
    return 0;
  });
}

extern "C" int kiln_module_find_output(const KilnModule* module, const char* name, int32_t* out) {
  return guarded_call("kiln_module_find_output", [&] {
    deref(out, "out") = find_spec(deref(module, "module").module->meta().outputs, name, "output");
    return 0;
  });
}

extern "C" int kiln_artifact_describe(const char* path, char** out_text) {
  return guarded_call("kiln_artifact_describe", [&] {
    deref(out_text, "out_text") = nullptr;
    if (path == nullptr) throw std::invalid_argument("path is NULL");
    *out_text = copy_text(kiln::runtime::describe_artifact(path));
    return 0;
  });
}

extern "C" void kiln_free_text(char* text) { std::free(text); }

extern "C" int kiln_runtime_cpu_features(char** out_text) {
  return guarded_call("kiln_runtime_cpu_features", [&] {
    deref(out_text, "out_text") = nullptr;
    std::string text;
    for (const auto& f : kiln::runtime::host_cpu_features()) text += (text.empty() ? "" : ",") + f;
    *out_text = copy_text(text);
    return 0;
  });
}

extern "C" int kiln_executor_create(KilnModule* module, KilnExecutor** out) {
  return guarded_call("kiln_executor_create", [&] {
    deref(out, "out") = nullptr;
    auto e = std::make_unique<kiln::runtime::Executor>(deref(module, "module").module);
    *out = new KilnExecutor{std::move(e)};
    return 0;
  });
}

extern "C" int kiln_executor_free(KilnExecutor* executor) {
  delete executor;
  return 0;
}

extern "C" int kiln_executor_set_input(KilnExecutor* executor, int32_t index, const DLTensor* value) {
  return guarded_call("kiln_executor_set_input", [&] {
    deref(executor, "executor").executor->set_input(index, deref(value, "value"));
    return 0;
  });
}

extern "C" int kiln_executor_set_input_by_name(KilnExecutor* executor, const char* name, const DLTensor* value) {
  return guarded_call("kiln_executor_set_input_by_name", [&] {
    auto& e = *deref(executor, "executor").executor;
    e.set_input(find_spec(e.module().meta().inputs, name, "input"), deref(value, "value"));
    return 0;
  });
}

extern "C" int kiln_executor_bind_input(KilnExecutor* executor, int32_t index, const DLTensor* value) {
  return guarded_call("kiln_executor_bind_input", [&] {
    deref(executor, "executor").executor->bind_input(index, deref(value, "value"));
    return 0;
  });
}

extern "C" int kiln_executor_run(KilnExecutor* executor) {
  return guarded_call("kiln_executor_run", [&] {
    deref(executor, "executor").executor->run();
    return 0;
  });
}

extern "C" int kiln_executor_get_output(KilnExecutor* executor, int32_t index, DLTensor* out) {
  return guarded_call("kiln_executor_get_output", [&] {
    deref(executor, "executor").executor->get_output(index, out);
    return 0;
  });
}

extern "C" int kiln_executor_output_view(KilnExecutor* executor, int32_t index, const DLTensor** out) {
  return guarded_call("kiln_executor_output_view", [&] {
    deref(out, "out") = deref(executor, "executor").executor->output_view(index);
    return 0;
  });
}

extern "C" int kiln_executor_set_profiling(KilnExecutor* executor, int32_t enabled) {
  return guarded_call("kiln_executor_set_profiling", [&] {
    deref(executor, "executor").executor->set_profiling(enabled != 0);
    return 0;
  });
}

extern "C" int kiln_executor_num_kernels(const KilnExecutor* executor, int32_t* out) {
  return guarded_call("kiln_executor_num_kernels", [&] {
    deref(out, "out") =
        static_cast<int32_t>(deref(executor, "executor").executor->module().plan().kernels.size());
    return 0;
  });
}

extern "C" int kiln_executor_kernel_profile(const KilnExecutor* executor, int32_t kernel, KilnKernelProfile* out) {
  return guarded_call("kiln_executor_kernel_profile", [&] {
    const auto& e = *deref(executor, "executor").executor;
    const auto& kernels = e.module().plan().kernels;
    if (kernel < 0 || kernel >= static_cast<int32_t>(kernels.size())) {
      throw std::out_of_range("kernel index " + std::to_string(kernel) + " out of range (" +
                              std::to_string(kernels.size()) + " kernels)");
    }
    KilnKernelProfile& p = deref(out, "out");
    p.symbol = kernels[kernel].symbol.c_str();
    p.fused_ops = kernels[kernel].fused_ops.c_str();
    p.calls = e.profile()[kernel].calls;
    p.total_seconds = e.profile()[kernel].total_seconds;
    return 0;
  });
}

extern "C" int kiln_executor_profile_report(const KilnExecutor* executor, char** out_text) {
  return guarded_call("kiln_executor_profile_report", [&] {
    deref(out_text, "out_text") = copy_text(deref(executor, "executor").executor->profile_report());
    return 0;
  });
}

extern "C" int kiln_executor_profile_report_with_peak(const KilnExecutor* executor, double peak_gflops,
                                                      char** out_text) {
  return guarded_call("kiln_executor_profile_report_with_peak", [&] {
    if (!(peak_gflops >= 0)) throw std::invalid_argument("peak_gflops must be >= 0");
    deref(out_text, "out_text") = copy_text(deref(executor, "executor").executor->profile_report(peak_gflops));
    return 0;
  });
}

extern "C" int kiln_executor_profile_report_with_roofline(const KilnExecutor* executor, double peak_gflops,
                                                          double bandwidth_gbps, char** out_text) {
  return kiln_executor_profile_report_with_int8_peak(executor, peak_gflops, bandwidth_gbps, 0, out_text);
}

extern "C" int kiln_executor_profile_report_with_int8_peak(const KilnExecutor* executor, double peak_gflops,
                                                           double bandwidth_gbps, double int8_peak_gops, char** out_text) {
  return guarded_call("kiln_executor_profile_report_with_int8_peak", [&] {
    if (!(peak_gflops >= 0)) throw std::invalid_argument("peak_gflops must be >= 0");
    if (!(bandwidth_gbps >= 0)) throw std::invalid_argument("bandwidth_gbps must be >= 0");
    if (!(int8_peak_gops >= 0)) throw std::invalid_argument("int8_peak_gops must be >= 0");
    deref(out_text, "out_text") =
        copy_text(deref(executor, "executor").executor->profile_report(peak_gflops, bandwidth_gbps, int8_peak_gops));
    return 0;
  });
}

extern "C" int kiln_executor_set_tracing(KilnExecutor* executor, int32_t enabled) {
  return guarded_call("kiln_executor_set_tracing", [&] {
    deref(executor, "executor").executor->set_tracing(enabled != 0);
    return 0;
  });
}

extern "C" int kiln_executor_trace_json(const KilnExecutor* executor, const char* process_name, char** out_text) {
  return guarded_call("kiln_executor_trace_json", [&] {
    deref(out_text, "out_text") =
        copy_text(deref(executor, "executor").executor->trace_json(process_name ? process_name : "kiln"));
    return 0;
  });
}
