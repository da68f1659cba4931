// C++ errors -> Python exceptions of kiln/errors.py. A kiln::UserError keeps its kind, subject,
// reason and hint (str() of the exception is what the CLI prints: the message, then `hint: ...`);
// an InternalError (a bug in Kiln, with file:line) and a runtime C-API failure keep their message.
#include <exception>
#include <string>

#include "binding.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/support/error.h"

namespace kiln::python {
namespace {

const char* class_for(UserErrorKind kind) {
  switch (kind) {
    case UserErrorKind::kInvalidArgument: return "InvalidArgumentError";
    case UserErrorKind::kNotFound: return "NotFoundError";
    case UserErrorKind::kParse: return "ModelParseError";
    case UserErrorKind::kUnsupported: return "UnsupportedError";
    case UserErrorKind::kIncompatible: return "IncompatibleError";
    case UserErrorKind::kIO: return "KilnIOError";
  }
  return "KilnError";
}

// Sets the Python error to kiln.errors.<cls>(message, **fields).
void set_error(const char* cls, const std::string& message, const py::dict& fields) {
  py::object type = py::module_::import("kiln.errors").attr(cls);
  py::object value = type(message, **fields);
  PyErr_SetObject(type.ptr(), value.ptr());
}

}  // namespace

void register_error_translator(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const UserError& e) {
      py::dict f;
      f["kind"] = to_string(e.kind());
      f["subject"] = e.subject();
      f["reason"] = e.reason();
      f["hint"] = e.hint();
      set_error(class_for(e.kind()), e.what(), f);
    } catch (const InternalError& e) {
      set_error("InternalError", e.what(), py::dict());
    } catch (const runtime::RuntimeError& e) {
      set_error("RunError", e.what(), py::dict());
    } catch (const Error& e) {
      set_error("KilnError", e.what(), py::dict());
    }
  });
}

}  // namespace kiln::python
