// `kiln doctor`: prints what this installation is made of, then judges it.
#include <cstdio>

#include "command.h"
#include "kiln/codegen/host_info.h"
#include "kiln/runtime/c_api.h"
#include "kiln/version.h"

namespace kiln::cli {

void register_doctor(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("doctor", "Check this installation and machine, and report problems");
  cmd->callback([&ctx] {
    const auto& host = codegen::host_info();
    std::printf("kiln           %s\n", KILN_VERSION_STRING);
    std::printf("libkiln        %s (abi %d)\n", compiler_version(), compiler_abi_version());
    std::printf("libkiln_runtime %s (abi %d)\n", kiln_runtime_version(), kiln_runtime_abi_version());
    std::printf("llvm           %s (%s)\n", host.llvm_version.c_str(), host.llvm_static ? "static" : "shared");
    std::printf("host cpu       %s\n", host.cpu_name.c_str());
    std::printf("triple         %s\n", host.default_triple.c_str());
    ctx.exit_code = 0;
  });
}

}  // namespace kiln::cli
