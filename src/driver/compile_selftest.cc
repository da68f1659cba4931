// compile_self_test() (include/kiln/driver/compile.h): the whole compile path on a tiny graph,
// loaded and run through libkiln_runtime, for `kiln doctor`.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>

#include "kiln/driver/compile.h"
#include "kiln/ref/executor.h"
#include "kiln/runtime/c_api.h"

namespace kiln::driver {
namespace {

namespace fs = std::filesystem;

ir::NDArray filled(const ir::Shape& shape, double scale, double phase) {
  ir::NDArray a = ir::NDArray::empty(ir::DType::kF32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, scale * std::sin(0.61 * i + phase));
  return a;
}

// Runs the artifact at `path` on `x` through the C API; "" or the failure.
std::string run_and_compare(const std::string& path, const ir::NDArray& x, const ir::NDArray& want) {
  KilnModule* module = nullptr;
  if (kiln_module_load(path.c_str(), &module) != 0) return std::string("loading failed: ") + kiln_get_last_error();
  KilnExecutor* exec = nullptr;
  std::string error;
  if (kiln_executor_create(module, &exec) != 0) {
    error = std::string("creating an executor failed: ") + kiln_get_last_error();
  } else {
    std::vector<int64_t> shape = x.type().shape;
    DLTensor t{};
    t.data = const_cast<void*>(x.raw_data());
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = to_dl_dtype(ir::DType::kF32);
    t.shape = shape.data();
    DLTensor out{};
    std::vector<float> got(static_cast<size_t>(want.numel()));
    std::vector<int64_t> out_shape = want.type().shape;
    out.data = got.data();
    out.device = {kDLCPU, 0};
    out.ndim = static_cast<int32_t>(out_shape.size());
    out.dtype = t.dtype;
    out.shape = out_shape.data();
    if (kiln_executor_set_input(exec, 0, &t) != 0 || kiln_executor_run(exec) != 0 ||
        kiln_executor_get_output(exec, 0, &out) != 0) {
      error = std::string("running failed: ") + kiln_get_last_error();
    } else {
      for (int64_t i = 0; i < want.numel() && error.empty(); ++i) {
        const double w = want.get_as_double(i);
        if (!(std::abs(got[i] - w) <= 1e-5 + 1e-4 * std::abs(w))) {
          char line[160];
          std::snprintf(line, sizeof line, "wrong result at index %lld: %.7g, reference %.7g",
                        static_cast<long long>(i), static_cast<double>(got[i]), w);
          error = line;
        }
      }
    }
    kiln_executor_free(exec);
  }
  kiln_module_free(module);
  return error;
}

}  // namespace

CompileSelfTest compile_self_test() {
  CompileSelfTest result;
  fs::path dir;
  try {
    dir = fs::temp_directory_path() / ("kiln-compile-selftest-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const auto start = std::chrono::steady_clock::now();
    ir::NodePtr x = ir::make_input("x", {ir::DType::kF32, {1, 4, 6, 6}});
    ir::Value w = ir::make_constant("w", filled({8, 4, 3, 3}, 0.2, 0.3))->output();
    ir::Value b = ir::make_constant("b", filled({8}, 0.1, 1.1))->output();
    ir::Value c = ir::make_call("conv2d", {x->output(), w, b},
                                ir::Attrs().set("pads", std::vector<int64_t>{1, 1, 1, 1}))->output();
    ir::Value r = ir::make_call("relu", {c}, {})->output();
    ir::Value g = ir::make_call("global_avg_pool", {r}, {})->output();
    const ir::Graph graph({x}, {g}, {"y"});
    const std::string path = (dir / "selftest.so").string();
    CompileReport report = compile_graph(graph, path, {});
    const ir::NDArray input = filled({1, 4, 6, 6}, 1.0, 0.0);
    const ir::NDArray want = ref::run_graph(graph, std::vector<ir::NDArray>{input})[0];
    const std::string error = run_and_compare(path, input, want);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (error.empty()) {
      result.ok = true;
      char line[200];
      std::snprintf(line, sizeof line, "compiled (%zu kernels), loaded and ran a conv+relu+pool graph in %.0f ms",
                    report.kernel_calls.size(), ms);
      result.detail = line;
    } else {
      result.detail = "the compiled test graph failed: " + error;
    }
  } catch (const std::exception& e) {
    result.detail = std::string("compiling the test graph failed: ") + e.what();
  }
  std::error_code ec;
  if (!dir.empty()) fs::remove_all(dir, ec);
  return result;
}

}  // namespace kiln::driver
