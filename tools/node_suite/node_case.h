// Runs one ONNX test case in the layout of ONNX's node tests (DIR/model.onnx,
// DIR/test_data_set_N/{input,output}_K.pb) through the importer and the reference executor (or a
// GraphRunner, e.g. compiled_runner.h's) and compares every output: same dtype and shape,
// |actual - expected| <= atol + rtol * |expected| (NaN equals NaN; integers and bools exactly).
// Graph inputs that Kiln needs at compile time are bound to the test's values (CaseResult says
// which). Shared by the importer tests, the node-test conformance tests and kiln_node_suite.
#ifndef KILN_TOOLS_NODE_SUITE_NODE_CASE_H_
#define KILN_TOOLS_NODE_SUITE_NODE_CASE_H_

#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/frontend/onnx.h"
#include "kiln/ref/executor.h"
#include "kiln/support/error.h"

namespace kiln::testing {

struct CaseResult {
  bool passed = false;
  std::string message;  // why it failed
  // Graph inputs bound to test_data_set_0's values because the importer needs them at compile time
  // (a shape, axes, pads or scales fed as a graph input), in the order they were bound.
  std::vector<std::string> bound_inputs;
};

// Compares `actual` with `expected`; on a mismatch describes the first bad element.
inline bool arrays_close(const ir::NDArray& actual, const ir::NDArray& expected, double rtol, double atol,
                         std::string* why) {
  if (actual.type() != expected.type()) {
    *why = "type " + actual.type().to_string() + ", expected " + expected.type().to_string();
    return false;
  }
  const bool exact = !ir::is_float(expected.dtype());
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double a = actual.get_as_double(i);
    const double e = expected.get_as_double(i);
    bool ok;
    if (std::isnan(e) || std::isnan(a)) {
      ok = std::isnan(e) && std::isnan(a);
    } else if (std::isinf(e) || std::isinf(a)) {
      ok = a == e;
    } else if (exact) {
      ok = a == e;
    } else {
      ok = std::abs(a - e) <= atol + rtol * std::abs(e);
    }
    if (!ok) {
      std::ostringstream os;
      os.precision(9);
      os << "element " << i << ": actual " << a << ", expected " << e << " (rtol " << rtol << ", atol " << atol << ")";
      *why = os.str();
      return false;
    }
  }
  return true;
}

inline std::vector<std::string> numbered_files(const std::filesystem::path& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (int k = 0;; ++k) {
    auto p = dir / (prefix + "_" + std::to_string(k) + ".pb");
    if (!std::filesystem::exists(p)) break;
    out.push_back(p.string());
  }
  return out;
}

// How a case's graph is executed: the reference executor by default; the compile driver's tests
// pass a runner that compiles the graph to an artifact and runs it through libkiln_runtime.
using GraphRunner = std::function<std::vector<ir::NDArray>(const ir::Graph&, const std::vector<ir::NDArray>&)>;

inline CaseResult run_onnx_case(const std::string& dir, double rtol, double atol,
                                const frontend::OnnxImportOptions& options = {}, const GraphRunner& runner = {}) {
  CaseResult result;
  try {
    const std::string model = (std::filesystem::path(dir) / "model.onnx").string();
    const std::vector<std::string> input_names = frontend::onnx_input_names(model);
    auto first_set = std::filesystem::path(dir) / "test_data_set_0";
    std::vector<std::string> first_inputs = numbered_files(first_set, "input");
    // Inputs Kiln needs at compile time (a shape, axes, pads, bounds fed as graph inputs) are bound
    // to test_data_set_0's values, one at a time as the importer asks for them.
    frontend::OnnxImportOptions opts = options;
    ir::Graph graph;
    for (int attempt = 0;; ++attempt) {
      try {
        graph = frontend::import_onnx(model, opts);
        break;
      } catch (const UserError& e) {
        const std::string reason = e.reason();
        auto mark = reason.find("') is computed at run time");
        auto open = reason.rfind(", '", mark);
        if (mark == std::string::npos || open == std::string::npos || attempt > 8) throw;
        std::vector<std::string> names{reason.substr(open + 3, mark - open - 3)};
        // A value computed from graph inputs names them: "... is computed at run time (from graph inputs 'a', 'b')".
        const auto from = reason.find(" (from graph input", mark);
        for (auto q = reason.find('\'', from); from != std::string::npos && q != std::string::npos &&
                                                 q < reason.find(')', from);
             q = reason.find('\'', reason.find('\'', q + 1) + 1)) {
          names.push_back(reason.substr(q + 1, reason.find('\'', q + 1) - q - 1));
        }
        bool bound = false;
        for (const std::string& name : names) {
          size_t k = 0;
          while (k < input_names.size() && input_names[k] != name) ++k;
          if (k >= input_names.size() || k >= first_inputs.size() || opts.constant_inputs.count(name)) continue;
          opts.constant_inputs[name] = frontend::read_onnx_tensor(first_inputs[k]);
          result.bound_inputs.push_back(name);
          bound = true;
        }
        if (!bound) throw;
      }
    }
    int sets = 0;
    for (int s = 0;; ++s) {
      auto set_dir = std::filesystem::path(dir) / ("test_data_set_" + std::to_string(s));
      if (!std::filesystem::exists(set_dir)) break;
      ++sets;
      std::vector<ir::NDArray> inputs, expected;
      auto files = numbered_files(set_dir, "input");
      for (size_t k = 0; k < files.size(); ++k) {
        if (k < input_names.size() && opts.constant_inputs.count(input_names[k])) continue;
        inputs.push_back(frontend::read_onnx_tensor(files[k]));
      }
      for (const auto& f : numbered_files(set_dir, "output")) expected.push_back(frontend::read_onnx_tensor(f));
      auto outputs = runner ? runner(graph, inputs) : ref::run_graph(graph, inputs);
      if (outputs.size() != expected.size()) {
        result.message = "graph has " + std::to_string(outputs.size()) + " outputs, the test expects " +
                         std::to_string(expected.size());
        return result;
      }
      for (size_t k = 0; k < outputs.size(); ++k) {
        std::string why;
        if (!arrays_close(outputs[k], expected[k], rtol, atol, &why)) {
          result.message = set_dir.filename().string() + " output " + std::to_string(k) + " ('" +
                           graph.output_names()[k] + "'): " + why;
          return result;
        }
      }
    }
    if (sets == 0) {
      result.message = "no test_data_set_0";
      return result;
    }
    result.passed = true;
  } catch (const Error& e) {
    result.message = std::string(dynamic_cast<const UserError*>(&e) ? "user error: " : "internal error: ") + e.what();
  }
  return result;
}

}  // namespace kiln::testing

#endif  // KILN_TOOLS_NODE_SUITE_NODE_CASE_H_
