// `kiln tune` as a user runs it (tools/kiln/tune_command.cc), on the built-in tiny-cnn:
//   - interrupt and resume: a run with --trials 12 is killed with SIGKILL once the database holds
//     a few records; `--resume` then completes it: 12 records in all, no knob set of a task
//     measured twice, every record of the killed run kept;
//   - `kiln compile --records` reports "tuned: K of T kernels, C of D layer choices (records FILE)";
//   - `kiln tune --merge a.db b.db -o c.db` writes every record once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "kiln/tune/records.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

std::string run_capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  *status = p != nullptr ? pclose(p) : -1;
  return out;
}

size_t count_records(const std::string& db) {
  if (!fs::exists(db)) return 0;
  try {
    return tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kReadOnly).all().size();
  } catch (const std::exception&) {
    return 0;  // being created
  }
}

TEST(TuneCli, KilledRunResumesWithoutRemeasuring) {
  const fs::path dir = fs::temp_directory_path() / ("kiln-tune-cli-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string db = (dir / "tiny.db").string();
  const std::string cli = KILN_CLI_PATH;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::freopen("/dev/null", "w", stderr);
    std::freopen("/dev/null", "w", stdout);
    execl(cli.c_str(), cli.c_str(), "tune", "--example", "tiny-cnn", "--records", db.c_str(), "--trials", "12",
          "--repeats", "2", "--no-layer-choices", "--no-model-check", static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  size_t before = 0;
  int status = 0;
  bool exited = false;
  while (std::chrono::steady_clock::now() < deadline) {
    before = count_records(db);
    if (before >= 4) break;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(exited) << "kiln tune exited early with status " << status;
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  before = count_records(db);
  ASSERT_GE(before, 4u);
  ASSERT_LT(before, 12u) << "the run finished before it could be interrupted";
  std::vector<tune::TuningRecord> first = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kReadOnly).all();

  const std::string again = cli + " tune --example tiny-cnn --records " + db + " --trials 12 --repeats 2 --no-layer-choices --no-model-check";
  std::string out = run_capture(again, &status);
  EXPECT_NE(status, 0) << "a used records file without --resume must be refused\n" << out;
  EXPECT_NE(out.find("--resume"), std::string::npos) << out;
  out = run_capture(again + " --resume", &status);
  ASSERT_EQ(status, 0) << out;

  const std::vector<tune::TuningRecord> all = tune::RecordDatabase::open(db, tune::RecordDatabase::Mode::kReadOnly).all();
  EXPECT_EQ(all.size(), 12u) << out;
  std::set<std::pair<std::string, std::map<std::string, int64_t>>> seen;
  for (const tune::TuningRecord& r : all) EXPECT_TRUE(seen.insert({r.task, r.knobs}).second) << r.task_label;
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(all[i].task, first[i].task);
    EXPECT_EQ(all[i].knobs, first[i].knobs);
  }

  out = run_capture(cli + " compile --example tiny-cnn -o " + (dir / "tiny.so").string() + " --records " + db, &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("tuned: "), std::string::npos) << out;
  EXPECT_NE(out.find("layer choices (records " + db + ")"), std::string::npos) << out;

  out = run_capture(cli + " tune --merge " + db + " " + db + " -o " + (dir / "merged.db").string(), &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(count_records((dir / "merged.db").string()), 12u) << out;

  // The last step, the whole-model check of the kernel records (tune/model_check.h): nothing new
  // to tune, so only the check runs; it adds its two whole-model records, or none when every
  // kernel's best record is its default schedule's.
  out = run_capture(cli + " tune --example tiny-cnn --records " + db + " --trials 12 --repeats 2 --no-layer-choices --resume",
                    &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("model check: "), std::string::npos) << out;
  const size_t checked = count_records(db);
  EXPECT_TRUE(checked == 12u || checked == 14u) << checked << "\n" << out;
  EXPECT_EQ(checked == 14u, out.find("kernel records kept") != std::string::npos ||
                                out.find("kernel records not used") != std::string::npos)
      << out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::testing
