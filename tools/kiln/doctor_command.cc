// `kiln doctor`: prints what this installation is made of, then judges it (src/driver/doctor.cc).
// Exit code 0 when all is well, 1 with one `problem: ...` line per problem otherwise.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "kiln/driver/doctor.h"

namespace kiln::cli {

void register_doctor(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand(
      "doctor",
      "Report versions, LLVM, host CPU features, the C compiler and build job count; exit 1 with "
      "one 'problem:' line per problem");
  auto triples = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--cross-triple", *triples,
                  "Check that artifacts link for this LLVM triple, e.g. aarch64-linux-gnu (repeatable; "
                  "default: the architecture the host is not, reported without judging)");
  cmd->callback([&ctx, triples] {
    ctx.exit_code = driver::run_doctor(KILN_VERSION_STRING, std::cout, *triples);
  });
}

}  // namespace kiln::cli
