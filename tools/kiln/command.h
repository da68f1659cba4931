// How the CLI's subcommands plug into main.cc: each subcommand file defines one register_*
// function that adds its CLI11 subcommand and sets its callback. A callback returns the process
// exit code through `exit_code`; user errors are thrown as kiln::UserError and printed by main.
#ifndef KILN_TOOLS_KILN_COMMAND_H_
#define KILN_TOOLS_KILN_COMMAND_H_

#include <CLI/CLI.hpp>

namespace kiln::cli {

struct CommandContext {
  int exit_code = 0;
};

void register_doctor(CLI::App& app, CommandContext& ctx);
void register_ir(CLI::App& app, CommandContext& ctx);
void register_run(CLI::App& app, CommandContext& ctx);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_COMMAND_H_
