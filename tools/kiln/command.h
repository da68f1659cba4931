// How the CLI's subcommands plug into main.cc: each subcommand file (tools/kiln/<name>_command.cc)
// defines one register_<name>() that adds its CLI11 subcommand and sets its callback; main.cc
// calls every register_*() once. To add a subcommand: declare its register function below, add
// one call in main.cc, add the file (it is globbed).
// A callback sets its process exit code in `ctx.exit_code`; it reports user errors by throwing
// kiln::UserError (main prints `error: ...` + `hint: ...` and exits 2) and never exits itself.
#ifndef KILN_TOOLS_KILN_COMMAND_H_
#define KILN_TOOLS_KILN_COMMAND_H_

#include <CLI/CLI.hpp>

namespace kiln::cli {

struct CommandContext {
  int exit_code = 0;
};

void register_doctor(CLI::App& app, CommandContext& ctx);
void register_tune_worker(CLI::App& app, CommandContext& ctx);
void register_ir(CLI::App& app, CommandContext& ctx);
void register_run(CLI::App& app, CommandContext& ctx);
void register_inspect(CLI::App& app, CommandContext& ctx);
void register_compile(CLI::App& app, CommandContext& ctx);
void register_quantize(CLI::App& app, CommandContext& ctx);
void register_tune(CLI::App& app, CommandContext& ctx);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_COMMAND_H_
