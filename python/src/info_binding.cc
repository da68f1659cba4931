// Versions, `kiln doctor` as data, the runtime's thread count, and what the ONNX importer supports.
#include <sstream>
#include <vector>

#include <pybind11/stl.h>
#include <string>

#include "binding.h"
#include "kiln/driver/doctor.h"
#include "kiln/frontend/onnx.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/version.h"

namespace kiln::python {

void bind_info(py::module_& m) {
  m.attr("__version__") = KILN_VERSION_STRING;
  m.def("compiler_version", [] { return std::string(kiln::compiler_version()); });
  m.def("runtime_version", [] { return std::string(kiln_runtime_version()); });
  m.def("runtime_abi_version", [] { return kiln_runtime_abi_version(); });
  m.def("python_abi", [] { return std::string(PYBIND11_INTERNALS_ID); });
  m.def(
      "doctor",
      [](const std::string& version) {
        driver::DoctorFacts facts;
        std::vector<driver::DoctorProblem> problems;
        std::ostringstream text;
        {
          py::gil_scoped_release release;
          facts = driver::gather_doctor_facts(version);
          problems = driver::judge_doctor_facts(facts);
          driver::print_doctor_report(facts, problems, text);
        }
        py::list rows;
        for (const auto& p : problems) {
          py::dict row;
          row["what"] = p.what;
          row["fix"] = p.fix;
          rows.append(row);
        }
        py::dict out;
        out["ok"] = problems.empty();
        out["problems"] = rows;
        out["text"] = text.str();
        return out;
      },
      py::arg("version"));
  m.def("set_num_threads", [](int n) { runtime::set_num_threads(n); }, py::arg("n"));
  m.def("get_num_threads", [] { return runtime::num_threads(); });
  m.def("onnx_supported_ops", &frontend::onnx_supported_ops);
  m.def("onnx_opset_range", [] { return py::make_tuple(frontend::kOnnxMinOpset, frontend::kOnnxMaxOpset); });
  m.def("onnx_op_types", &frontend::onnx_op_types, py::arg("path"));
}

}  // namespace kiln::python
