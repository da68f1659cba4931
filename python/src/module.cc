// kiln._kiln: the extension module behind `import kiln` (python/kiln/__init__.py wraps it).
// Refuses to load against a libkiln_runtime of another ABI than the one it was built with.
#include <pybind11/pybind11.h>

#include <string>

#include "binding.h"
#include "kiln/runtime/c_api.h"

PYBIND11_MODULE(_kiln, m) {
  namespace py = pybind11;
  if (kiln_runtime_abi_version() != KILN_RUNTIME_ABI_VERSION) {
    throw py::import_error("kiln: the loaded libkiln_runtime has runtime ABI " +
                           std::to_string(kiln_runtime_abi_version()) + ", this module was built for " +
                           std::to_string(KILN_RUNTIME_ABI_VERSION) +
                           " (hint: reinstall kiln so the module and its libraries come from one build)");
  }
  m.doc() = "Kiln's compiler and runtime (pybind11 binding; use the `kiln` package)";
  kiln::python::register_error_translator(m);
  kiln::python::bind_info(m);
  kiln::python::bind_compile(m);
  kiln::python::bind_quantize(m);
  kiln::python::bind_runtime(m);
}
