// Thread-local last-error storage and the guard that turns C++ exceptions into C status codes at
// the C API boundary (after TVM's API_BEGIN/API_END).
#ifndef KILN_SRC_RUNTIME_LAST_ERROR_H_
#define KILN_SRC_RUNTIME_LAST_ERROR_H_

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln::runtime {

// Sets this thread's last-error message.
void set_last_error(std::string message);
// The same without a temporary: reuses the message's storage (no allocation once it is large
// enough), for the thread pool's per-chunk bookkeeping.
void assign_last_error(std::string_view message);
bool has_last_error();

// Runs `body` (which returns 0 or throws) and converts any exception into -1 plus a last-error
// message that starts with `api` (the C function's name).
template <typename F>
int guarded_call(const char* api, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    set_last_error(std::string(api) + ": out of memory");
  } catch (const std::exception& e) {
    set_last_error(std::string(api) + ": " + e.what());
  } catch (...) {
    set_last_error(std::string(api) + ": unknown C++ exception");
  }
  return -1;
}

}  // namespace kiln::runtime

#endif  // KILN_SRC_RUNTIME_LAST_ERROR_H_
