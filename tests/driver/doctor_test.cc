// `kiln doctor`'s logic in libkiln: the pure judge over injected facts (each problem and its
// fix), the report's layout, the job-count rule, and the facts gathered on this machine.
#include "kiln/driver/doctor.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "kiln/runtime/c_api.h"
#include "kiln/version.h"

namespace kiln::driver {
namespace {

// Facts of a healthy installation, for tests to break one at a time.
DoctorFacts healthy_facts() {
  DoctorFacts f;
  f.cli_version = f.compiler_version = f.runtime_version = "0.1.0";
  f.compiler_abi = 1;
  f.expected_runtime_abi = f.runtime_abi = 1;
  f.compiler_library_path = "/opt/kiln/lib/libkiln.so.1";
  f.runtime_library_path = "/opt/kiln/lib/libkiln_runtime.so.1";
  f.llvm_version = "19.1.7";
  f.llvm_static = true;
  f.cpu_name = "znver5";
  f.default_triple = "x86_64-pc-linux-gnu";
  f.cpu_features = {"avx", "avx2", "avx512bw", "avx512f", "fma", "sse4.2"};
  f.cc = {"cc", "default", "/usr/bin/cc", "cc (Debian 12.2.0-14) 12.2.0", "/usr/bin/ld",
          "GNU ld 2.40", true, ""};
  f.cores = 16;
  f.available_memory_mb = 8192;
  f.memory_per_job_mb = 2048;
  f.recommended_jobs = 4;
  return f;
}

std::string report(const DoctorFacts& f) {
  std::ostringstream out;
  print_doctor_report(f, judge_doctor_facts(f), out);
  return out.str();
}

TEST(DoctorJudgeTest, HealthyFactsHaveNoProblem) {
  const DoctorFacts f = healthy_facts();
  EXPECT_TRUE(judge_doctor_facts(f).empty());
  const std::string text = report(f);
  EXPECT_NE(text.find("ok: no problems found"), std::string::npos) << text;
  EXPECT_EQ(text.find("problem:"), std::string::npos) << text;
}

TEST(DoctorJudgeTest, RuntimeAbiMismatchIsAProblemWithTheFix) {
  DoctorFacts f = healthy_facts();
  f.runtime_abi = 99;
  f.ld_library_path = "/tmp/old-kiln";
  const auto problems = judge_doctor_facts(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].what,
            "runtime ABI mismatch: libkiln_runtime at /opt/kiln/lib/libkiln_runtime.so.1 has "
            "runtime ABI 99, but libkiln 0.1.0 at /opt/kiln/lib/libkiln.so.1 was built for "
            "runtime ABI 1");
  EXPECT_NE(problems[0].fix.find("use the libkiln_runtime built together with this libkiln"),
            std::string::npos);
  EXPECT_NE(problems[0].fix.find("LD_LIBRARY_PATH is set ('/tmp/old-kiln')"), std::string::npos)
      << problems[0].fix;
  const std::string text = report(f);
  EXPECT_NE(text.find("\nproblem: runtime ABI mismatch: "), std::string::npos) << text;
  EXPECT_EQ(text.find("ok:"), std::string::npos) << text;
}

TEST(DoctorJudgeTest, VersionMismatchesAreProblems) {
  DoctorFacts f = healthy_facts();
  f.runtime_version = "0.0.9";
  auto problems = judge_doctor_facts(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].what,
            "version mismatch: libkiln_runtime at /opt/kiln/lib/libkiln_runtime.so.1 is Kiln "
            "0.0.9, libkiln at /opt/kiln/lib/libkiln.so.1 is Kiln 0.1.0");
  EXPECT_EQ(problems[0].fix.find("LD_LIBRARY_PATH"), std::string::npos) << "unset, not mentioned";

  f = healthy_facts();
  f.cli_version = "0.2.0";
  problems = judge_doctor_facts(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].what.find("this kiln executable is Kiln 0.2.0 but it loaded libkiln 0.1.0"),
            std::string::npos);
}

TEST(DoctorJudgeTest, MissingCompilerIsAProblem) {
  DoctorFacts f = healthy_facts();
  f.cc = {"cc", "default", "", "", "", "", false, "not found"};
  auto problems = judge_doctor_facts(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].what,
            "C compiler 'cc' (the default; KILN_CC chooses another) not found on PATH");
  EXPECT_NE(problems[0].fix.find("apt-get install gcc"), std::string::npos);
  EXPECT_NE(report(f).find("C compiler          cc (default) -> NOT FOUND"), std::string::npos)
      << report(f);

  f.cc = {"/opt/cc", "KILN_CC", "", "", "", "", false, "not found"};
  problems = judge_doctor_facts(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].what, "C compiler '/opt/cc' (from $KILN_CC) not found");
}

TEST(DoctorJudgeTest, CompilerThatCannotLinkIsAProblem) {
  DoctorFacts f = healthy_facts();
  f.cc.links_shared = false;
  f.cc.link_error = "'cc -shared -fPIC' exited with 1: ld: cannot find crti.o";
  const auto problems = judge_doctor_facts(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].what,
            "C compiler 'cc' (the default; KILN_CC chooses another) at /usr/bin/cc cannot build "
            "and load a trivial shared object: 'cc -shared -fPIC' exited with 1: ld: cannot find "
            "crti.o");
}

TEST(DoctorJudgeTest, SeveralProblemsGiveOneLineEach) {
  DoctorFacts f = healthy_facts();
  f.runtime_abi = 2;
  f.runtime_version = "0.3.0";
  f.cc = {"cc", "default", "", "", "", "", false, "not found"};
  EXPECT_EQ(judge_doctor_facts(f).size(), 3u);
  const std::string text = report(f);
  size_t lines = 0;
  for (size_t pos = text.find("problem: "); pos != std::string::npos;
       pos = text.find("problem: ", pos + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 3u) << text;
}

TEST(DoctorReportTest, ListsRelevantFeaturesPresentAndAbsent) {
  const std::string text = report(healthy_facts());
  EXPECT_NE(text.find("CPU features        sse4.2 avx avx2 fma avx512f avx512bw\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("absent            f16c avx512dq avx512vl avx512vnni"), std::string::npos)
      << text;
  EXPECT_NE(text.find("host CPU            znver5"), std::string::npos) << text;
  EXPECT_NE(text.find("LLVM                19.1.7, linked statically into libkiln"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("build jobs          4  = max(1, min(16 cores, 8192 MB available / 2048 "
                      "MB per job))"),
            std::string::npos)
      << text;
}

// The FMA probe's row: best and median window; a note (not a problem) when the median falls more
// than 10 % below the best (the core shared with other work now), none when they are close.
TEST(DoctorReportTest, FmaThroughputRowAndTheBusyNote) {
  DoctorFacts f = healthy_facts();
  f.fma_best_gflops = 95.3;
  f.fma_median_gflops = 94.1;
  f.fma_windows = 20;
  f.fma_detail = "znver3, 256-bit FMA, 12 chains";
  std::string text = report(f);
  EXPECT_NE(text.find("  FMA throughput      best 95.3, median 94.1 GFLOP/s per core over 20 x 10 ms (znver3, "
                      "256-bit FMA, 12 chains)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("busy"), std::string::npos) << text;
  EXPECT_EQ(fma_throughput_note(95.3, 86.0), "");  // 9.8 % below: steady enough
  f.fma_median_gflops = 71.5;
  text = report(f);
  EXPECT_NE(text.find("    now               busy: the median window is 25 % below the best, so this core's "
                      "arithmetic is shared with other work right now"),
            std::string::npos)
      << text;
  EXPECT_TRUE(judge_doctor_facts(f).empty());
  EXPECT_NE(text.find("ok: no problems found"), std::string::npos) << text;
  f.fma_best_gflops = f.fma_median_gflops = 0;
  f.fma_detail = "the JIT failed";
  EXPECT_NE(report(f).find("  FMA throughput      not measured: the JIT failed\n"), std::string::npos) << report(f);
}

TEST(DoctorJobsTest, RuleIsMinOfCoresAndMemoryAtLeastOne) {
  EXPECT_EQ(recommended_build_jobs(16, 8192, 2048), 4);   // memory-bound
  EXPECT_EQ(recommended_build_jobs(2, 24000, 2048), 2);   // core-bound
  EXPECT_EQ(recommended_build_jobs(8, 1000, 2048), 1);    // never below 1
  EXPECT_EQ(recommended_build_jobs(4, 4095, 2048), 1);    // integer division, like the script
  EXPECT_EQ(recommended_build_jobs(4, 4096, 2048), 2);
}

TEST(DoctorFactsTest, GatheredFactsDescribeThisBuild) {
  const DoctorFacts f = gather_doctor_facts(compiler_version());
  EXPECT_EQ(f.compiler_version, compiler_version());
  EXPECT_EQ(f.runtime_abi, KILN_RUNTIME_ABI_VERSION);
  EXPECT_EQ(f.expected_runtime_abi, KILN_RUNTIME_ABI_VERSION);
  // The libraries this test process loaded are the build tree's.
  EXPECT_EQ(f.runtime_library_path, std::string(KILN_BINARY_DIR) + "/lib/libkiln_runtime.so.1");
  EXPECT_EQ(f.compiler_library_path, std::string(KILN_BINARY_DIR) + "/lib/libkiln.so.1");
  EXPECT_EQ(f.llvm_version.substr(0, 3), "19.");
  EXPECT_FALSE(f.cpu_name.empty());
  EXPECT_NE(f.default_triple.find("linux"), std::string::npos) << f.default_triple;
  EXPECT_GE(f.recommended_jobs, 1);
  EXPECT_LE(f.recommended_jobs, f.cores);
  // The probe ran: a median window no faster than the best, both positive.
  EXPECT_GT(f.fma_median_gflops, 0) << f.fma_detail;
  EXPECT_LE(f.fma_median_gflops, f.fma_best_gflops);
  EXPECT_NE(f.fma_detail.find("-bit FMA"), std::string::npos) << f.fma_detail;
  if (std::getenv("KILN_CC") == nullptr) {
    EXPECT_EQ(f.cc.command, "cc");
    EXPECT_TRUE(f.cc.links_shared) << f.cc.link_error;
    EXPECT_FALSE(f.cc.version.empty());
    EXPECT_FALSE(f.cc.linker.empty());
  }
  EXPECT_TRUE(judge_doctor_facts(f).empty()) << report(f);
}

TEST(DoctorFactsTest, CCompilerComesFromKilnCcOrDefaultsToCc) {
  const char* saved = std::getenv("KILN_CC");
  const std::string saved_value = saved ? saved : "";
  std::string source;
  setenv("KILN_CC", "/opt/x/bin/gcc-13", 1);
  EXPECT_EQ(c_compiler_command(&source), "/opt/x/bin/gcc-13");
  EXPECT_EQ(source, "KILN_CC");
  setenv("KILN_CC", "", 1);  // empty counts as unset
  EXPECT_EQ(c_compiler_command(&source), "cc");
  EXPECT_EQ(source, "default");
  unsetenv("KILN_CC");
  EXPECT_EQ(c_compiler_command(), "cc");
  if (saved) setenv("KILN_CC", saved_value.c_str(), 1);
}

TEST(DoctorFactsTest, ProbeReportsMissingAndBrokenCompilers) {
  CCompilerFacts missing = probe_c_compiler("/nonexistent/kiln-cc", "KILN_CC");
  EXPECT_TRUE(missing.path.empty());
  EXPECT_FALSE(missing.links_shared);
  CCompilerFacts missing_on_path = probe_c_compiler("kiln-no-such-compiler", "KILN_CC");
  EXPECT_TRUE(missing_on_path.path.empty());
  // /bin/false exists but builds nothing.
  CCompilerFacts broken = probe_c_compiler("/bin/false", "KILN_CC");
  EXPECT_EQ(broken.path, "/bin/false");
  EXPECT_FALSE(broken.links_shared);
  EXPECT_NE(broken.link_error.find("exited with 1"), std::string::npos) << broken.link_error;
}

TEST(DoctorFactsTest, JobCountAgreesWithTheScript) {
  // scripts/job-count.sh and libkiln implement the same rule; with the same inputs (this
  // machine, read moments apart) they agree unless memory moved across a 2 GiB boundary.
  const DoctorFacts f = gather_doctor_facts(compiler_version());
  FILE* p = popen("bash " KILN_SOURCE_DIR "/scripts/job-count.sh", "r");
  ASSERT_NE(p, nullptr);
  int script_jobs = 0;
  ASSERT_EQ(fscanf(p, "%d", &script_jobs), 1);
  ASSERT_EQ(pclose(p), 0);
  const int low = recommended_build_jobs(f.cores, f.available_memory_mb - 256, f.memory_per_job_mb);
  const int high = recommended_build_jobs(f.cores, f.available_memory_mb + 256, f.memory_per_job_mb);
  EXPECT_GE(script_jobs, low);
  EXPECT_LE(script_jobs, high);
}

}  // namespace
}  // namespace kiln::driver
