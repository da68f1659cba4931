// Running a shell command from the driver (linking artifacts, probing compilers): quoting and
// capturing. Internal to libkiln (src/driver); nothing here is part of the public API.
#ifndef KILN_SRC_DRIVER_SHELL_COMMAND_H_
#define KILN_SRC_DRIVER_SHELL_COMMAND_H_

#include <string>

namespace kiln::driver {

// `s` in single quotes, safe to paste into a /bin/sh command line.
std::string shell_quote(const std::string& s);

// Runs `command_line` with stderr merged into stdout; returns the exit status (-1 when it could
// not run or did not exit normally) and stores the output.
int run_capture(const std::string& command_line, std::string* output);

}  // namespace kiln::driver

#endif  // KILN_SRC_DRIVER_SHELL_COMMAND_H_
