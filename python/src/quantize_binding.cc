// _quantize(model_path, output_path, *, calibration, method, percentile, skip, dynamic,
// reduce_range, input_shapes, report_samples) -> report dict.
// Post-training int8 quantization: calls driver::quantize_model (what `kiln quantize` runs) with
// the GIL released and returns its QuantizeReport as plain data. python/kiln/compiler.py turns
// numpy calibration arrays into .npy files first, so this binding only converts options.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "binding.h"
#include "kiln/driver/quantize.h"

namespace kiln::python {
namespace {

py::dict layer_error_to_dict(const driver::LayerError& e) {
  py::dict row;
  row["node"] = e.node;
  row["op_type"] = e.op_type;
  row["tensor"] = e.tensor;
  row["rel_l2"] = e.rel_l2;
  row["added"] = e.added;
  row["cosine"] = e.cosine;
  row["flagged"] = e.flagged;
  return row;
}

py::list layer_errors(const std::vector<driver::LayerError>& rows) {
  py::list out;
  for (const driver::LayerError& e : rows) out.append(layer_error_to_dict(e));
  return out;
}

py::dict quantize(const std::string& model_path, const std::string& output_path,
                  const std::vector<std::pair<std::string, std::string>>& calibration, const std::string& method,
                  double percentile, const std::vector<std::string>& skip, bool dynamic, bool reduce_range,
                  const std::map<std::string, std::vector<int64_t>>& input_shapes, int report_samples) {
  driver::QuantizeOptions options;
  options.model_path = model_path;
  options.output_path = output_path;
  for (const auto& [input, path] : calibration) options.calibration.push_back({input, path});
  options.method = driver::parse_calibration_method(method);
  options.percentile = percentile;
  options.skip = skip;
  options.dynamic = dynamic;
  options.reduce_range = reduce_range;
  for (const auto& [input, dims] : input_shapes) options.input_shapes[input] = ir::Shape(dims.begin(), dims.end());
  options.report_samples = report_samples;
  driver::QuantizeReport report;
  {
    py::gil_scoped_release release;
    report = driver::quantize_model(options);
  }
  py::dict out;
  out["path"] = report.output_path;
  out["samples"] = report.samples;
  out["report_samples"] = report.report_samples;
  out["quantized_nodes"] = report.quantized_nodes;
  out["dynamic_nodes"] = report.dynamic_nodes;
  out["activations"] = report.activations;
  out["notes"] = py::cast(report.notes);
  out["layers"] = layer_errors(report.layers);
  out["outputs"] = layer_errors(report.outputs);
  out["calibration_seconds"] = report.calibration_seconds;
  out["total_seconds"] = report.total_seconds;
  out["summary"] = report.summary();
  return out;
}

}  // namespace

void bind_quantize(py::module_& m) {
  m.def("_quantize", &quantize, py::arg("model_path"), py::arg("output_path"), py::kw_only(),
        py::arg("calibration") = std::vector<std::pair<std::string, std::string>>{}, py::arg("method") = "minmax",
        py::arg("percentile") = 99.99, py::arg("skip") = std::vector<std::string>{}, py::arg("dynamic") = false,
        py::arg("reduce_range") = false, py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{},
        py::arg("report_samples") = 4,
        "Quantizes an f32 ONNX model into a QDQ ONNX model (driver::quantize_model, as `kiln quantize`); "
        "returns the report as a dict. Use kiln.quantize().");
}

}  // namespace kiln::python
