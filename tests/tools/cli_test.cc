// The `kiln` executable as a user runs it: --help, --version, usage errors (unknown subcommand,
// bad option), a UserError's `error:`/`hint:` lines with exit 2, and `kiln doctor`'s exit codes.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `env_prefix kiln args` through the shell.
Result run_kiln(const std::string& args, const std::string& env_prefix = "") {
  Result r;
  const std::string cmd = env_prefix + " '" KILN_CLI_PATH "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CliTest, HelpListsSubcommandsAndExitsZero) {
  const Result r = run_kiln("--help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Usage: kiln")) << r.output;
  EXPECT_TRUE(contains(r.output, "doctor")) << r.output;
  EXPECT_TRUE(contains(r.output, "--log")) << r.output;
}

TEST(CliTest, VersionPrintsTheVersion) {
  const Result r = run_kiln("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.output.rfind("kiln 0.", 0) == 0) << r.output;
}

TEST(CliTest, UnknownSubcommandIsAUsageError) {
  const Result r = run_kiln("compile-everything");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "error: unknown subcommand 'compile-everything'\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "(subcommands: doctor")) << r.output;
  EXPECT_TRUE(contains(r.output, "hint: run 'kiln --help'")) << r.output;
}

TEST(CliTest, MissingSubcommandIsAUsageError) {
  const Result r = run_kiln("");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "error: A subcommand is required")) << r.output;
}

TEST(CliTest, UnknownOptionIsAUsageError) {
  Result r = run_kiln("--frobnicate doctor");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "error: The following argument was not expected: --frobnicate"))
      << r.output;
  r = run_kiln("doctor --frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--frobnicate")) << r.output;
  EXPECT_FALSE(contains(r.output, "Kiln doctor")) << "doctor must not run on a usage error";
}

TEST(CliTest, UserErrorPrintsErrorAndHintWithExitTwo) {
  // A malformed --log spec is a kiln::UserError raised inside the library (set_log_spec).
  const Result r = run_kiln("--log codegen=loud doctor");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "error: --log: unknown log level 'loud' in 'codegen=loud'\n"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "hint: use error, warning, info, debug or trace")) << r.output;
  EXPECT_FALSE(contains(r.output, "Kiln doctor")) << r.output;
}

TEST(CliTest, DoctorPassesOnThisBuild) {
  const Result r = run_kiln("doctor", "env -u KILN_CC -u LD_LIBRARY_PATH");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "ok: no problems found")) << r.output;
  EXPECT_TRUE(contains(r.output, "loaded from       " KILN_BINARY_DIR "/lib/libkiln_runtime.so.1"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "LLVM                19.")) << r.output;
}

TEST(CliTest, DoctorFailsWithOneProblemLineForAMissingCompiler) {
  const Result r = run_kiln("doctor", "env KILN_CC=/nonexistent/kiln-cc");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "\nproblem: C compiler '/nonexistent/kiln-cc' (from $KILN_CC) "
                                 "not found; fix: "))
      << r.output;
  EXPECT_FALSE(contains(r.output, "ok:")) << r.output;
}

TEST(CliTest, DoctorFailsForACompilerThatCannotLink) {
  const Result r = run_kiln("doctor", "env KILN_CC=/bin/false");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "problem: C compiler '/bin/false' (from $KILN_CC) at /bin/false "
                                 "cannot build and load a trivial shared object"))
      << r.output;
}

}  // namespace
