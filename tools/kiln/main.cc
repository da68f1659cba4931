// `kiln`: the command-line front end of the compiler and runtime. Subcommands live one per file
// (see command.h). Every failure ends in `error: ...` on stderr and a non-zero exit code.
#include <cstdio>
#include <exception>
#include <string>

#include "command.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/version.h"

int main(int argc, char** argv) {
  CLI::App app{"Kiln: a deep-learning compiler and runtime for CPUs", "kiln"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION_STRING);
  app.require_subcommand(1);
  std::string log_spec;
  app.add_option("--log", log_spec, "Log filter, e.g. 'debug' or 'codegen=debug' (like KILN_LOG)")
      ->each([](const std::string& spec) { kiln::set_log_spec(spec); });

  kiln::cli::CommandContext ctx;
  kiln::cli::register_doctor(app, ctx);
  kiln::cli::register_ir(app, ctx);
  kiln::cli::register_run(app, ctx);

  try {
    app.parse(argc, argv);
    return ctx.exit_code;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kiln::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    if (!e.hint().empty()) std::fprintf(stderr, "hint: %s\n", e.hint().c_str());
    return 2;
  } catch (const kiln::InternalError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}
