// `kiln tune-worker --redis HOST:PORT [--prefix P] [--name N] [--once]`: the same worker as the
// kiln-tune-worker binary (kiln/tune/tune_worker.h, shared code), for hosts that have the full
// kiln. Devices without libkiln run kiln-tune-worker instead.
#include <string>
#include <vector>

#include "command.h"
#include "kiln/tune/tune_worker.h"

namespace kiln::cli {

void register_tune_worker(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("tune-worker",
                                 "Measure tuning candidates from a Redis broker: --redis HOST:PORT [--prefix P] "
                                 "[--name N] [--once] (docs/tuning.md)");
  cmd->prefix_command();  // every argument goes to the worker's own parser
  cmd->set_help_flag();
  cmd->callback([cmd, &ctx] { ctx.exit_code = tune::tune_worker_main(cmd->remaining()); });
}

}  // namespace kiln::cli
