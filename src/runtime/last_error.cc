// Thread-local last-error message of the C API.
#include "last_error.h"

#include "kiln/runtime/c_api.h"

namespace kiln::runtime {
namespace {
thread_local std::string g_last_error;
}  // namespace

void set_last_error(std::string message) { g_last_error = std::move(message); }

void assign_last_error(std::string_view message) { g_last_error.assign(message); }

bool has_last_error() { return !g_last_error.empty(); }

}  // namespace kiln::runtime

extern "C" const char* kiln_get_last_error(void) { return kiln::runtime::g_last_error.c_str(); }

extern "C" void kiln_set_last_error(const char* message) {
  kiln::runtime::set_last_error(message ? message : "");
}
