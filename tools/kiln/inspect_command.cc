// `kiln inspect ARTIFACT`: prints an artifact's metadata, plan summary and whether it can run on
// this machine, read from the file alone (libkiln_runtime's kiln_artifact_describe): none of the
// artifact's code is loaded or run, so inspecting an artifact built for another CPU or
// architecture is safe.
#include <iostream>

#include "command.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/support/error.h"

namespace kiln::cli {

void register_inspect(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("inspect", "Print an artifact's metadata (versions, target, CPU features, inputs, "
                                            "outputs, kernels, memory) without running any of its code");
  auto path = std::make_shared<std::string>();
  cmd->add_option("artifact", *path, "Artifact (.so) written by kiln compile")->required();
  cmd->callback([path, &ctx] {
    try {
      std::cout << kiln::runtime::describe_artifact(*path);
    } catch (const kiln::runtime::RuntimeError& e) {
      std::string message = e.what();
      for (const std::string& prefix : {std::string("kiln_artifact_describe: "), *path + ": "}) {
        if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
      }
      throw UserError(UserErrorKind::kInvalidArgument, *path, message);
    }
    ctx.exit_code = 0;
  });
}

}  // namespace kiln::cli
