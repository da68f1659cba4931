// Files that are not a Kiln records database, or are damaged, are refused with a UserError that
// names the file and the fix -- never a crash, never silently emptied: random bytes, a truncated
// real database, a garbage page in the middle, an SQLite file with other tables, a Kiln-looking
// file without the records table, a newer schema version (kIncompatible), an empty file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "kiln/tune/records.h"
#include "records_test_util.h"
#include "tune/sqlite_db.h"

namespace kiln::tune {
namespace {

using testing::expect_user_error;
using testing::make_record;

const std::string kDevice = "x86_64-unknown-linux-gnu znver3 avx,avx2";

class RecordsCorrupt : public testing::RecordsTest {
 protected:
  // A real database of `n` records, closed (its WAL checkpointed into the file).
  std::string real_database(const std::string& name, int n) {
    std::string p = path(name);
    auto db = RecordDatabase::open(p, RecordDatabase::Mode::kCreate);
    for (int i = 0; i < n; ++i)
      db.add(make_record("task-with-a-long-signature-" + std::to_string(i % 7), kDevice, i, 1e-3 * (i + 1)));
    return p;
  }
  static std::string bytes_of(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Refused read-only and read-write, the file left byte for byte as it was.
  static void expect_refused(const std::string& p, std::initializer_list<std::string> parts) {
    std::string before = bytes_of(p);
    for (auto mode : {RecordDatabase::Mode::kReadOnly, RecordDatabase::Mode::kCreate})
      expect_user_error([&] { RecordDatabase::open(p, mode); }, UserErrorKind::kParse, parts);
    EXPECT_TRUE(bytes_of(p) == before) << p << " was modified";
  }
};

TEST_F(RecordsCorrupt, RandomBytesAreRefused) {
  std::string p = path("random.db");
  std::mt19937 rng(7);
  std::ofstream out(p, std::ios::binary);
  for (int i = 0; i < 8192; ++i) out.put(static_cast<char>(rng()));
  out.close();
  expect_refused(p, {p, "not an SQLite database", "delete it", "--merge"});
}

TEST_F(RecordsCorrupt, TextFileIsRefused) {
  std::string p = path("notes.db");
  std::ofstream(p) << "this is not a database\n";
  expect_refused(p, {p, "not a Kiln tuning-records database"});
}

TEST_F(RecordsCorrupt, TruncatedDatabaseIsRefused) {
  std::string p = real_database("full.db", 400);
  auto size = std::filesystem::file_size(p);
  ASSERT_GE(size, 8u * 4096u) << "want a database of several pages";
  for (uintmax_t keep : {size / 2, size - 4096, uintmax_t{4096 + 100}, uintmax_t{60}}) {
    std::string t = path("truncated-" + std::to_string(keep) + ".db");
    std::filesystem::copy_file(p, t);
    std::filesystem::resize_file(t, keep);
    SCOPED_TRACE("kept " + std::to_string(keep) + " of " + std::to_string(size) + " bytes");
    expect_refused(t, {t, "delete it"});
  }
}

TEST_F(RecordsCorrupt, GarbagePageIsRefused) {
  std::string p = real_database("paged.db", 400);
  auto size = std::filesystem::file_size(p);
  std::fstream f(p, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
  std::mt19937 rng(3);
  for (int i = 0; i < 4096; ++i) f.put(static_cast<char>(rng()));
  f.close();
  expect_refused(p, {p, "damaged", "delete it"});
}

TEST_F(RecordsCorrupt, SqliteFileWithOtherTablesIsRefused) {
  std::string p = path("other.db");
  {
    SqliteDb db = SqliteDb::open(p, false, true);
    db.exec("CREATE TABLE people(name TEXT); INSERT INTO people VALUES ('ada');");
  }
  expect_refused(p, {p, "not a Kiln tuning-records database", "people"});
  SqliteDb db = SqliteDb::open(p, true, false);
  EXPECT_EQ(db.query_text("SELECT name FROM people"), "ada") << "the foreign file was changed";
}

TEST_F(RecordsCorrupt, KilnMetaWithoutRecordsTableIsRefused) {
  std::string p = real_database("meta-only.db", 3);
  {
    SqliteDb db = SqliteDb::open(p, false, false);
    db.exec("DROP TABLE records");
  }
  expect_refused(p, {p, "records"});
}

TEST_F(RecordsCorrupt, MissingSchemaVersionIsRefused) {
  std::string p = real_database("no-version.db", 3);
  {
    SqliteDb db = SqliteDb::open(p, false, false);
    db.exec("DELETE FROM kiln_meta WHERE key = 'schema_version'");
  }
  expect_refused(p, {p, "schema_version"});
}

TEST_F(RecordsCorrupt, NewerSchemaIsIncompatible) {
  std::string p = real_database("future.db", 3);
  {
    SqliteDb db = SqliteDb::open(p, false, false);
    db.exec("UPDATE kiln_meta SET value = '7' WHERE key = 'schema_version'");
  }
  for (auto mode : {RecordDatabase::Mode::kReadOnly, RecordDatabase::Mode::kCreate})
    expect_user_error([&] { RecordDatabase::open(p, mode); }, UserErrorKind::kIncompatible,
                      {p, "schema version 7", "newer"});
}

TEST_F(RecordsCorrupt, MalformedKnobsAreRefusedOnRead) {
  std::string p = real_database("knobs.db", 3);
  {
    SqliteDb db = SqliteDb::open(p, false, false);
    db.exec("UPDATE records SET knobs = 'tile_oc=banana' WHERE id = 2");
  }
  auto db = RecordDatabase::open(p, RecordDatabase::Mode::kReadOnly);
  expect_user_error([&] { db.all(); }, UserErrorKind::kParse, {p, "tile_oc=banana"});
}

TEST_F(RecordsCorrupt, EmptyFileIsRefusedReadOnlyAndBecomesADatabaseReadWrite) {
  std::string p = path("empty.db");
  std::ofstream(p).close();
  expect_user_error([&] { RecordDatabase::open(p, RecordDatabase::Mode::kReadOnly); }, UserErrorKind::kParse,
                    {p, "no tables"});
  auto db = RecordDatabase::open(p, RecordDatabase::Mode::kCreate);
  db.add(make_record("t", kDevice, 1, 0.1));
  EXPECT_EQ(db.all().size(), 1u);
}

}  // namespace
}  // namespace kiln::tune
