// Kiln's two error channels (after Halide's Error.h):
//   - UserError: the user's input or request is wrong (a malformed model, a bad option, a missing
//     file). It names the thing, the reason, and when there is one, the fix. The CLI prints it as
//     `error: <what>: <why>` plus `hint: <fix>` and exits non-zero.
//   - InternalError: a broken invariant, i.e. a bug in Kiln. Raised by KILN_ICHECK with file:line.
// Both derive from kiln::Error so a boundary (CLI, C API, Python) can catch everything once.
#ifndef KILN_SUPPORT_ERROR_H_
#define KILN_SUPPORT_ERROR_H_

#include <sstream>
#include <stdexcept>
#include <string>

namespace kiln {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What kind of user error: lets callers and tests tell failures apart without parsing messages.
enum class UserErrorKind {
  kInvalidArgument,  // a bad option or argument value
  kNotFound,         // a missing file, input name, operator ...
  kParse,            // malformed input file
  kUnsupported,      // valid input that Kiln does not handle (yet)
  kIncompatible,     // a version, ABI or CPU-feature mismatch
  kIO,               // reading or writing failed
};

const char* to_string(UserErrorKind kind);

class UserError : public Error {
 public:
  // what_subject: the thing at fault ("model.onnx", "--input-shape", "node 'conv1' (Conv)").
  // reason: why it is wrong. hint: how to fix it (may be empty).
  UserError(UserErrorKind kind, std::string subject, std::string reason, std::string hint = "");

  UserErrorKind kind() const { return kind_; }
  const std::string& subject() const { return subject_; }
  const std::string& reason() const { return reason_; }
  const std::string& hint() const { return hint_; }

 private:
  UserErrorKind kind_;
  std::string subject_;
  std::string reason_;
  std::string hint_;
};

class InternalError : public Error {
 public:
  InternalError(const char* file, int line, const std::string& message);
};

namespace detail {

// Collects a streamed message and throws InternalError when destroyed (at the end of the full
// expression of a failed KILN_ICHECK).
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  CheckFailure(const CheckFailure&) = delete;
  [[noreturn]] ~CheckFailure() noexcept(false);
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  const char* file_;
  int line_;
  std::ostringstream stream_;
};

}  // namespace detail
}  // namespace kiln

// Internal invariant: `KILN_ICHECK(x >= 0) << "x=" << x;` throws InternalError with file:line.
#define KILN_ICHECK(cond) \
  if (cond) {             \
  } else                  \
    ::kiln::detail::CheckFailure(__FILE__, __LINE__, #cond)

// Unconditional internal failure: `KILN_IFAIL() << "unhandled kind " << k;`
#define KILN_IFAIL() ::kiln::detail::CheckFailure(__FILE__, __LINE__, nullptr)

#endif  // KILN_SUPPORT_ERROR_H_
