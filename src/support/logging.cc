#include "kiln/support/logging.h"
#include "kiln/support/progress.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "kiln/support/error.h"

namespace kiln {
namespace {

struct LogFilter {
  LogLevel default_level = LogLevel::kWarning;
  std::map<std::string, LogLevel, std::less<>> per_component;
};

std::mutex g_mutex;

bool parse_level(std::string_view text, LogLevel* out) {
  static const std::pair<std::string_view, LogLevel> kLevels[] = {
      {"error", LogLevel::kError}, {"warning", LogLevel::kWarning}, {"warn", LogLevel::kWarning},
      {"info", LogLevel::kInfo},   {"debug", LogLevel::kDebug},     {"trace", LogLevel::kTrace}};
  for (const auto& [name, level] : kLevels) {
    if (text == name) {
      *out = level;
      return true;
    }
  }
  return false;
}

LogFilter parse_spec(std::string_view spec) {
  LogFilter filter;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    LogLevel level;
    std::string_view level_text = eq == std::string_view::npos ? item : item.substr(eq + 1);
    if (!parse_level(level_text, &level)) {
      throw UserError(UserErrorKind::kInvalidArgument, "KILN_LOG",
                      "unknown log level '" + std::string(level_text) + "' in '" + std::string(item) + "'",
                      "use error, warning, info, debug or trace, e.g. KILN_LOG=codegen=debug");
    }
    if (eq == 0) {
      throw UserError(UserErrorKind::kInvalidArgument, "KILN_LOG",
                      "missing component name before '=' in '" + std::string(item) + "'",
                      "write COMPONENT=LEVEL, e.g. KILN_LOG=codegen=debug");
    }
    if (eq == std::string_view::npos) {
      filter.default_level = level;
    } else {
      filter.per_component[std::string(item.substr(0, eq))] = level;
    }
  }
  return filter;
}

LogFilter& filter() {
  static LogFilter f = [] {
    const char* env = std::getenv("KILN_LOG");
    if (env == nullptr) return LogFilter{};
    try {
      return parse_spec(env);
    } catch (const UserError& e) {
      std::fprintf(stderr, "[kiln] warning: ignoring KILN_LOG: %s\n", e.what());
      return LogFilter{};
    }
  }();
  return f;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kTrace: return "trace";
  }
  return "?";
}

}  // namespace

bool log_enabled(std::string_view component, LogLevel level) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const LogFilter& f = filter();
  auto it = f.per_component.find(component);
  const LogLevel limit = it == f.per_component.end() ? f.default_level : it->second;
  return static_cast<int>(level) <= static_cast<int>(limit);
}

void set_log_spec(std::string_view spec) {
  LogFilter parsed = parse_spec(spec);
  std::lock_guard<std::mutex> lock(g_mutex);
  filter() = std::move(parsed);
}

namespace detail {

LogMessage::LogMessage(std::string_view component, LogLevel level)
    : component_(component), level_(level) {}

LogMessage::~LogMessage() {
  const std::string text = stream_.str();
  std::lock_guard<std::mutex> lock(g_mutex);
  Progress::erase_for_output();  // a progress line on stderr goes; it comes back at its next update
  std::fprintf(stderr, "[kiln %s %s] %s\n", component_.c_str(), level_name(level_), text.c_str());
}

}  // namespace detail
}  // namespace kiln
