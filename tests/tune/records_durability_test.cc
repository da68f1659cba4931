// A records database survives its writer being killed (SIGKILL) at any point: every record whose
// add() returned is there after reopening (read-write to resume, or read-only to compile), and the
// file keeps working. The writer is a forked child adding records in a loop and reporting each
// committed index on a pipe; the parent kills it mid-stream, three times in a row on one file.
// Two processes writing one file at once (two tuners, or a tuner and a merge reading) lose nothing.
// The file is in WAL mode while a writer has it open and one self-contained file once closed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "kiln/tune/records.h"
#include "records_test_util.h"
#include "tune/sqlite_db.h"

namespace kiln::tune {
namespace {

using testing::make_record;
using RecordsDurability = testing::RecordsTest;

const std::string kDevice = "x86_64-unknown-linux-gnu znver3 avx,avx2";

// Forks a child that appends records with tile_oc = first, first+1, ... to `path` forever, writing
// each index to a pipe once add() returned. Kills it after `count` confirmations; returns the last
// confirmed index.
int64_t add_until_killed(const std::string& path, int64_t first, int64_t count) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    try {
      auto db = RecordDatabase::open(path, RecordDatabase::Mode::kCreate);
      for (int64_t i = first;; ++i) {
        db.add(make_record("task" + std::to_string(i % 5), kDevice, i, 1e-3 * static_cast<double>(i % 97 + 1)));
        if (write(fds[1], &i, sizeof(i)) != sizeof(i)) _exit(2);
      }
    } catch (...) {
      _exit(3);
    }
  }
  close(fds[1]);
  int64_t last = first - 1;
  int64_t value = 0;
  while (last < first + count - 1 && read(fds[0], &value, sizeof(value)) == sizeof(value)) last = value;
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer died early, status " << status;
  // Confirmations sent between our last read and the kill.
  while (read(fds[0], &value, sizeof(value)) == sizeof(value)) last = value;
  close(fds[0]);
  return last;
}

void expect_prefix(const std::vector<TuningRecord>& all, int64_t last_committed) {
  ASSERT_GE(static_cast<int64_t>(all.size()), last_committed + 1) << "a committed record was lost";
  // At most the one add() in flight when the child died may be there without its confirmation.
  EXPECT_LE(static_cast<int64_t>(all.size()), last_committed + 2);
  for (int64_t i = 0; i <= last_committed; ++i) EXPECT_EQ(all[i].knobs.at("tile_oc"), i) << "record " << i;
}

TEST_F(RecordsDurability, KilledWriterLosesNoCommittedRecord) {
  const std::string db_path = path("killed.db");
  int64_t next = 0;
  for (int round = 0; round < 3; ++round) {
    int64_t last = add_until_killed(db_path, next, 40 + 17 * round);
    ASSERT_GE(last, next) << "the writer committed nothing";
    {  // a compile reads it read-only while the killed writer's WAL is still there
      auto db = RecordDatabase::open(db_path, RecordDatabase::Mode::kReadOnly);
      expect_prefix(db.all(), last);
    }
    auto db = RecordDatabase::open(db_path, RecordDatabase::Mode::kCreate);  // `kiln tune --resume`
    std::vector<TuningRecord> all = db.all();
    expect_prefix(all, last);
    next = static_cast<int64_t>(all.size());  // resume after whatever made it (the in-flight one too)
  }
  auto db = RecordDatabase::open(db_path, RecordDatabase::Mode::kCreate);
  db.add(make_record("after", kDevice, 1, 0.1));
  EXPECT_EQ(static_cast<int64_t>(db.all().size()), next + 1);
  EXPECT_TRUE(db.best("task1", kDevice).has_value());
}

TEST_F(RecordsDurability, WalWhileOpenOneFileWhenClosed) {
  const std::string db_path = path("modes.db");
  {
    auto db = RecordDatabase::open(db_path, RecordDatabase::Mode::kCreate);
    db.add(make_record("t", kDevice, 1, 0.1));
    SqliteDb peek = SqliteDb::open(db_path, true, false);
    EXPECT_EQ(peek.query_text("PRAGMA journal_mode"), "wal");
    EXPECT_TRUE(std::filesystem::exists(db_path + "-wal"));
  }
  EXPECT_FALSE(std::filesystem::exists(db_path + "-wal"));
  SqliteDb peek = SqliteDb::open(db_path, true, false);
  EXPECT_EQ(peek.query_text("PRAGMA journal_mode"), "delete");
  EXPECT_EQ(peek.query_text("SELECT value FROM kiln_meta WHERE key = 'schema_version'"), "2");
  EXPECT_EQ(peek.query_int64("PRAGMA application_id"), 0x4B494C4E);
}

TEST_F(RecordsDurability, ConcurrentWritersLoseNothing) {
  const std::string db_path = path("shared.db");
  constexpr int kWriters = 3, kEach = 60;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    if (pid == 0) {
      try {
        auto db = RecordDatabase::open(db_path, RecordDatabase::Mode::kCreate);
        for (int i = 0; i < kEach; ++i)
          db.add(make_record("writer" + std::to_string(w), kDevice, i, 1e-3 * (i + 1), true, i == 0, i != 0));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        _exit(3);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed, status " << status;
  }
  auto db = RecordDatabase::open(db_path, RecordDatabase::Mode::kReadOnly);
  EXPECT_EQ(db.all().size(), static_cast<size_t>(kWriters * kEach));
  for (int w = 0; w < kWriters; ++w) {
    std::vector<TuningRecord> mine = db.records("writer" + std::to_string(w), kDevice);
    ASSERT_EQ(mine.size(), static_cast<size_t>(kEach));
    for (int i = 0; i < kEach; ++i) EXPECT_EQ(mine[i].knobs.at("tile_oc"), i);  // each writer's order kept
  }
  // The last writer to close switched the file back to one self-contained file.
  EXPECT_FALSE(std::filesystem::exists(db_path + "-wal"));
}

}  // namespace
}  // namespace kiln::tune
