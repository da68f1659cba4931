// Runs graphs compiled: compile_graph_runner() returns a node_case.h GraphRunner that compiles the
// graph with the driver (default -O3, the given target) into an artifact in a scratch directory,
// runs it once through libkiln_runtime (the C++ wrapper of the C API, as a deployed program would)
// and returns every output; run_artifact_arrays() is the run step alone. No test framework: an
// output of an element type Kiln does not know is an InternalError. Shared by the compile tests
// (tests/driver/compile_test_util.h, tests/e2e/compile_node_tests_test.cc) and kiln_node_suite.
#ifndef KILN_TOOLS_NODE_SUITE_COMPILED_RUNNER_H_
#define KILN_TOOLS_NODE_SUITE_COMPILED_RUNNER_H_

#include <unistd.h>

#include <atomic>
#include <memory>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/driver/artifact.h"
#include "kiln/driver/compile.h"
#include "kiln/ir/ndarray.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/support/error.h"
#include "node_suite/node_case.h"

namespace kiln::testing {

// The Kiln dtype of a DLPack dtype; false when none matches.
inline bool dtype_from_dl(const DLDataType& dl, ir::DType* out) {
  for (ir::DType d : {ir::DType::kF32, ir::DType::kF64, ir::DType::kF16, ir::DType::kBF16, ir::DType::kI8,
                      ir::DType::kU8, ir::DType::kI16, ir::DType::kI32, ir::DType::kI64, ir::DType::kBool,
                      ir::DType::kU16, ir::DType::kU32, ir::DType::kU64}) {
    const DLDataType k = driver::to_dl_dtype(d);
    if (k.code == dl.code && k.bits == dl.bits && k.lanes == dl.lanes) {
      *out = d;
      return true;
    }
  }
  return false;
}

// Loads the artifact, sets `inputs` by index, runs once, copies every output out.
inline std::vector<ir::NDArray> run_artifact_arrays(const std::string& path, const std::vector<ir::NDArray>& inputs,
                                                    int threads = -1) {
  namespace rt = kiln::runtime;
  if (threads > 0) kiln_set_num_threads(threads);
  rt::Module m = rt::Module::load(path);
  rt::Executor e(m);
  std::vector<std::vector<int64_t>> shapes;
  for (const ir::NDArray& in : inputs) shapes.push_back(in.type().shape);
  for (size_t i = 0; i < inputs.size(); ++i) {
    DLTensor t{};
    t.data = const_cast<void*>(inputs[i].raw_data());
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shapes[i].size());
    t.dtype = driver::to_dl_dtype(inputs[i].dtype());
    t.shape = shapes[i].data();
    e.set_input(static_cast<int32_t>(i), t);
  }
  e.run();
  std::vector<ir::NDArray> outs;
  for (int32_t o = 0; o < m.num_outputs(); ++o) {
    const DLTensor& y = e.output(o);
    ir::Shape shape(y.shape, y.shape + y.ndim);
    ir::DType dtype;
    KILN_ICHECK(dtype_from_dl(y.dtype, &dtype)) << "artifact output " << o << " has DLPack dtype code "
                                                << int(y.dtype.code) << " bits " << int(y.dtype.bits);
    outs.push_back(ir::NDArray::empty(dtype, shape));
    const size_t bytes = static_cast<size_t>(outs.back().numel()) * ir::dtype_size(dtype);
    std::memcpy(outs.back().mutable_raw_data(), static_cast<const char*>(y.data) + y.byte_offset, bytes);
  }
  return outs;
}

// A GraphRunner that compiles into `scratch_dir` (which must exist) for `target` and runs the
// artifact; each call writes and then removes its own file (named by process id and call number,
// so processes sharing the folder never load each other's artifacts).
inline GraphRunner compile_graph_runner(const std::string& scratch_dir, const std::string& target = "llvm") {
  auto counter = std::make_shared<std::atomic<int>>(0);
  return [scratch_dir, target, counter](const ir::Graph& graph, const std::vector<ir::NDArray>& inputs) {
    const std::string path =
        (std::filesystem::path(scratch_dir) / ("case" + std::to_string(getpid()) + "_" + std::to_string((*counter)++) + ".so")).string();
    driver::CompileOptions options;
    options.target = target;
    struct Remove {
      std::string p;
      ~Remove() {
        std::error_code ec;
        std::filesystem::remove(p, ec);
      }
    } remove{path};
    driver::compile_graph(graph, path, options);
    return run_artifact_arrays(path, inputs);
  };
}

}  // namespace kiln::testing

#endif  // KILN_TOOLS_NODE_SUITE_COMPILED_RUNNER_H_
