// `kiln`: the command-line front end of the compiler and runtime. Subcommands live one per file
// (see command.h) and are registered below. Every failure ends in `error: ...` on stderr and a
// non-zero exit code:
//   2  usage error (unknown subcommand or option, bad value) or kiln::UserError (+ `hint: ...`)
//   3  internal error (a bug in Kiln)
//   otherwise the subcommand's own exit code (e.g. `kiln doctor` returns 1 when it finds problems)
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "command.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace {

constexpr int kUsageExit = 2;
constexpr int kInternalExit = 3;

std::string subcommand_names(CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return names;
}

// The first argument that should have named a subcommand but names none, or "".
std::string unknown_subcommand(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--log") {
      ++i;  // skip its value
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == arg) return "";
    }
    return arg;
  }
  return "";
}

int usage_error(CLI::App& app, const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fprintf(stderr, "usage: kiln [--log SPEC] SUBCOMMAND [OPTIONS]   (subcommands: %s)\n",
               subcommand_names(app).c_str());
  std::fprintf(stderr, "hint: run 'kiln --help' or 'kiln SUBCOMMAND --help' for details\n");
  return kUsageExit;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kiln: a deep-learning compiler and runtime for CPUs", "kiln"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION_STRING);
  app.require_subcommand(1);
  std::string log_spec;
  app.add_option("--log", log_spec,
                 "Log filter, same syntax as $KILN_LOG: 'debug', 'codegen=debug,ir=info'")
      ->each([](const std::string& spec) {
        try {
          kiln::set_log_spec(spec);
        } catch (const kiln::UserError& e) {
          throw kiln::UserError(e.kind(), "--log", e.reason(), e.hint());
        }
      });

  kiln::cli::CommandContext ctx;
  kiln::cli::register_doctor(app, ctx);
  kiln::cli::register_tune_worker(app, ctx);
  kiln::cli::register_ir(app, ctx);
  kiln::cli::register_run(app, ctx);
  kiln::cli::register_inspect(app, ctx);
  kiln::cli::register_compile(app, ctx);
  kiln::cli::register_quantize(app, ctx);
  kiln::cli::register_tune(app, ctx);

  try {
    app.parse(argc, argv);
    return ctx.exit_code;
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    const std::string unknown = unknown_subcommand(app, argc, argv);
    if (!unknown.empty()) return usage_error(app, "unknown subcommand '" + unknown + "'");
    return usage_error(app, e.what());
  } catch (const kiln::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    if (!e.hint().empty()) std::fprintf(stderr, "hint: %s\n", e.hint().c_str());
    return kUsageExit;
  } catch (const std::exception& e) {
    // kiln::InternalError says "internal error at file:line: ... (this is a bug in Kiln ...)".
    std::fprintf(stderr, "error: %s\n", e.what());
    return kInternalExit;
  }
}
