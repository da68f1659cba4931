// _compile(out_path, *, path|data, name, target, opt_level, input_shapes, bind, records) -> report dict.
// Imports the ONNX model (a file, or serialized bytes), compiles it with the driver
// (driver::compile_graph, as `kiln compile` does) into `out_path`, and returns the CompileReport
// as plain data. The GIL is released for the import and the compile.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <pybind11/stl.h>

#include "binding.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/ndarray.h"
#include "kiln/support/error.h"

namespace kiln::python {
namespace {

// A numpy array (C-contiguous: python/kiln/_inputs.py made it so) copied into an NDArray.
ir::NDArray ndarray_from_numpy(const py::array& a, const std::string& what) {
  const DLDataType dl = dl_dtype_of(a.dtype(), what);
  ir::Shape shape(a.shape(), a.shape() + a.ndim());
  ir::NDArray out = ir::NDArray::empty(ir_dtype_of(dl, what), shape);
  if (a.nbytes() > 0) std::memcpy(out.mutable_raw_data(), a.data(), static_cast<size_t>(a.nbytes()));
  return out;
}

py::dict report_to_dict(const driver::CompileReport& r) {
  py::dict out;
  out["path"] = r.output_path;
  out["target"] = r.target;
  py::list passes;
  for (const pass::PassRecord& p : r.pipeline.records) {
    py::dict row;
    row["name"] = p.name;
    row["seconds"] = p.seconds;
    row["changed"] = p.changed;
    row["calls_before"] = p.calls_before;
    row["calls_after"] = p.calls_after;
    row["stats"] = py::cast(p.stats);
    passes.append(row);
  }
  out["passes"] = passes;
  py::list kernels;
  for (const driver::KernelCall& k : r.kernel_calls) {
    py::dict row;
    row["symbol"] = k.symbol;
    row["fused_ops"] = k.fused_ops;
    row["split"] = k.split;
    kernels.append(row);
  }
  out["kernels"] = kernels;
  out["distinct_kernels"] = r.distinct_kernels;
  out["codegen_threads"] = r.codegen_threads;
  out["codegen_modules"] = r.codegen_modules;
  out["cached_modules"] = r.cached_modules;  // of them, from the kernel cache
  out["split_groups"] = py::cast(r.split_groups);
  py::dict memory;
  memory["weights_bytes"] = r.artifact.weights_bytes;
  memory["planned_bytes"] = r.artifact.planned_bytes;
  memory["naive_bytes"] = r.artifact.naive_bytes;
  out["memory"] = memory;
  py::dict phases;  // insertion-ordered: the order the phases ran
  for (const auto& [name, seconds] : r.phase_seconds) phases[py::str(name)] = seconds;
  out["phases"] = phases;
  py::dict tuned;  // with records: what they tuned (docs/tuning.md)
  tuned["records"] = r.records_path;
  tuned["kernels"] = r.tuned_kernels;
  tuned["layer_choices"] = r.tuned_layer_choices;
  tuned["layer_choice_points"] = r.layer_choices;
  tuned["kernel_records_off"] = r.kernel_records_off;  // kiln tune's whole-model check turned them down
  tuned["notes"] = py::cast(std::vector<std::string>{r.records_note, r.stale_note});
  out["tuned"] = tuned;
  out["summary"] = r.summary();
  return out;
}

py::dict compile_model(const std::string& out_path, const std::optional<std::string>& path,
                       const std::optional<py::bytes>& data, const std::string& name, const std::string& target,
                       int opt_level, const std::map<std::string, std::vector<int64_t>>& input_shapes,
                       const std::map<std::string, py::array>& bind, const std::string& records) {
  driver::CompileOptions options;
  options.records = records;  // "" = none (docs/tuning.md)
  options.target = target;
  options.opt_level = opt_level;
  options.artifact.producer = name;
  for (const auto& [input, dims] : input_shapes) options.input_shapes[input] = ir::Shape(dims.begin(), dims.end());
  for (const auto& [input, array] : bind) {
    options.constant_inputs[input] = ndarray_from_numpy(array, "bind['" + input + "']");
  }
  frontend::OnnxImportOptions io;
  io.input_shapes = options.input_shapes;
  io.constant_inputs = options.constant_inputs;
  std::string bytes;
  if (data) bytes = std::string(*data);
  driver::CompileReport report;
  {
    py::gil_scoped_release release;
    const auto start = std::chrono::steady_clock::now();
    ir::Graph graph = path ? frontend::import_onnx(*path, io)
                           : frontend::import_onnx_bytes(bytes, std::filesystem::current_path().string(), io, name);
    const double import_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report = driver::compile_graph(graph, out_path, options);
    report.phase_seconds.insert(report.phase_seconds.begin(), {"import (ONNX)", import_s});
  }
  return report_to_dict(report);
}

}  // namespace

void bind_compile(py::module_& m) {
  m.def("_compile", &compile_model, py::arg("out_path"), py::kw_only(), py::arg("path") = py::none(),
        py::arg("data") = py::none(), py::arg("name") = "", py::arg("target") = "llvm", py::arg("opt_level") = 3,
        py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{},
        py::arg("bind") = std::map<std::string, py::array>{}, py::arg("records") = "",
        "Compiles an ONNX model (file `path` or serialized `data`) into the artifact `out_path`; "
        "returns the compile report as a dict. Use kiln.compile().");
}

}  // namespace kiln::python
