// The pieces of the kiln._kiln extension (pybind11), one per file, registered by module.cc.
// The binding has no logic of its own beyond conversions: compiling is libkiln's driver, running
// is libkiln_runtime's C API (through kiln_runtime.hpp); errors become kiln.errors exceptions.
#ifndef KILN_PYTHON_BINDING_H_
#define KILN_PYTHON_BINDING_H_

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "kiln/ir/tensor_type.h"

namespace kiln::python {

namespace py = pybind11;

// errors.cc: translates kiln::UserError / InternalError / runtime::RuntimeError into the
// exception classes of kiln/errors.py (same message and hint as the CLI).
void register_error_translator(py::module_& m);
// The binding's own argument errors are kiln::UserError too (subject, reason, hint), so they reach
// Python as the same classes.

// dtypes.cc: numpy dtype <-> DLPack dtype <-> Kiln dtype. `what` names the tensor in errors.
DLDataType dl_dtype_of(const py::dtype& dtype, const std::string& what);
py::dtype numpy_dtype_of(const DLDataType& dtype, const std::string& what);
ir::DType ir_dtype_of(const DLDataType& dtype, const std::string& what);
// "float32", "int64", "bool", ... (numpy's names; "bfloat16" for the one numpy lacks).
std::string dtype_name(const DLDataType& dtype);

// compile_binding.cc: _compile(...) -> report dict.
void bind_compile(py::module_& m);
// quantize_binding.cc: _quantize(...) -> report dict (int8, docs/int8.md).
void bind_quantize(py::module_& m);
// runtime_binding.cc: the Module class (load, inputs/outputs, run, profile) and aligned_empty.
void bind_runtime(py::module_& m);
// info_binding.cc: versions, doctor, threads.
void bind_info(py::module_& m);

}  // namespace kiln::python

#endif  // KILN_PYTHON_BINDING_H_
