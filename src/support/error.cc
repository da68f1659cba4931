#include "kiln/support/error.h"

namespace kiln {
namespace {

std::string format_user_error(const std::string& subject, const std::string& reason) {
  return subject.empty() ? reason : subject + ": " + reason;
}

}  // namespace

const char* to_string(UserErrorKind kind) {
  switch (kind) {
    case UserErrorKind::kInvalidArgument: return "invalid argument";
    case UserErrorKind::kNotFound: return "not found";
    case UserErrorKind::kParse: return "parse error";
    case UserErrorKind::kUnsupported: return "unsupported";
    case UserErrorKind::kIncompatible: return "incompatible";
    case UserErrorKind::kIO: return "I/O error";
  }
  return "unknown";
}

UserError::UserError(UserErrorKind kind, std::string subject, std::string reason, std::string hint)
    : Error(format_user_error(subject, reason)),
      kind_(kind),
      subject_(std::move(subject)),
      reason_(std::move(reason)),
      hint_(std::move(hint)) {}

InternalError::InternalError(const char* file, int line, const std::string& message)
    : Error("internal error at " + std::string(file) + ":" + std::to_string(line) + ": " + message +
            " (this is a bug in Kiln; please report it with the command that triggered it)") {}

namespace detail {

CheckFailure::CheckFailure(const char* file, int line, const char* condition)
    : file_(file), line_(line) {
  if (condition != nullptr) stream_ << "check failed: " << condition << ": ";
}

CheckFailure::~CheckFailure() noexcept(false) { throw InternalError(file_, line_, stream_.str()); }

}  // namespace detail
}  // namespace kiln
