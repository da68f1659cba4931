// One logging facility for the compiler, with levels and per-component filtering.
//
// The filter comes from the environment variable KILN_LOG (read once) or set_log_spec():
//   KILN_LOG=debug                    every component at debug and above
//   KILN_LOG=codegen=debug,ir=info    per component; others stay at the default (warning)
//   KILN_LOG=info,codegen=trace       a default level plus overrides
// Messages go to stderr as `[kiln codegen debug] text`.
// Usage: KILN_LOG(codegen, kDebug) << "lowered:\n" << stmt;  (the stream is only built when enabled)
#ifndef KILN_SUPPORT_LOGGING_H_
#define KILN_SUPPORT_LOGGING_H_

#include <sstream>
#include <string>
#include <string_view>

namespace kiln {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

// True when messages of `level` from `component` are printed.
bool log_enabled(std::string_view component, LogLevel level);

// Replaces the filter (same syntax as KILN_LOG). Throws UserError on a malformed spec.
void set_log_spec(std::string_view spec);

namespace detail {

class LogMessage {
 public:
  LogMessage(std::string_view component, LogLevel level);
  LogMessage(const LogMessage&) = delete;
  ~LogMessage();
  template <typename T>
  LogMessage& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::string component_;
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace detail
}  // namespace kiln

#define KILN_LOG(component, level)                                        \
  if (!::kiln::log_enabled(#component, ::kiln::LogLevel::level)) {        \
  } else                                                                  \
    ::kiln::detail::LogMessage(#component, ::kiln::LogLevel::level)

#endif  // KILN_SUPPORT_LOGGING_H_
