// merge_databases: every record of the inputs in input order, duplicates dropped, inputs left
// untouched; an output that is an input or already exists is refused; a damaged input is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kiln/tune/records.h"
#include "records_test_util.h"

namespace kiln::tune {
namespace {

using testing::expect_user_error;
using testing::make_record;
using RecordsMerge = testing::RecordsTest;

const std::string kDevice = "x86_64-unknown-linux-gnu znver3 avx,avx2";
const std::string kOther = "aarch64-unknown-linux-gnu neoverse-v1 neon,sve";

TEST_F(RecordsMerge, MergesInOrderAndDropsDuplicates) {
  {
    auto a = RecordDatabase::open(path("a.db"), RecordDatabase::Mode::kCreate);
    a.add(make_record("t", kDevice, 8, 0.010, true, true, false));
    a.add(make_record("t", kDevice, 16, 0.004, true, false, true));
    a.add(make_record("t", kOther, 16, 0.004, true, false, true));  // same knobs, other device: kept
    auto b = RecordDatabase::open(path("b.db"), RecordDatabase::Mode::kCreate);
    b.add(make_record("t", kDevice, 16, 0.004, true, false, true));  // duplicate of a's second
    b.add(make_record("t", kDevice, 16, 0.005, true, false, true));  // same knobs, another time: kept
    b.add(make_record("u", kDevice, 32, 0.002, true, true, false));
    b.add(make_record("u", kDevice, 64, 0, false));
  }
  EXPECT_EQ(merge_databases({path("a.db"), path("b.db"), path("a.db")}, path("c.db")), 6);
  auto c = RecordDatabase::open(path("c.db"), RecordDatabase::Mode::kReadOnly);
  std::vector<TuningRecord> all = c.all();
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0].knobs.at("tile_oc"), 8);
  EXPECT_EQ(all[2].device, kOther);
  EXPECT_DOUBLE_EQ(all[3].seconds, 0.005);
  EXPECT_EQ(all[5].error, "killed by signal 11");
  EXPECT_DOUBLE_EQ(c.best("t", kDevice)->seconds, 0.004);
  EXPECT_DOUBLE_EQ(c.best("u", kDevice)->seconds, 0.002);
  EXPECT_EQ(RecordDatabase::open(path("a.db"), RecordDatabase::Mode::kReadOnly).all().size(), 3u);
  EXPECT_EQ(RecordDatabase::open(path("b.db"), RecordDatabase::Mode::kReadOnly).all().size(), 4u);
  // Merging the merge with its inputs adds nothing new.
  EXPECT_EQ(merge_databases({path("c.db"), path("b.db")}, path("d.db")), 6);
  // No temporary file is left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 4);
}

TEST_F(RecordsMerge, RefusesToOverwriteAnInputOrAnExistingFile) {
  {
    auto a = RecordDatabase::open(path("a.db"), RecordDatabase::Mode::kCreate);
    a.add(make_record("t", kDevice, 8, 0.010, true, true, false));
    auto b = RecordDatabase::open(path("b.db"), RecordDatabase::Mode::kCreate);
  }
  expect_user_error([&] { merge_databases({path("a.db"), path("b.db")}, path("a.db")); },
                    UserErrorKind::kInvalidArgument, {"also one of its inputs", "new file"});
  // The same file under another spelling.
  expect_user_error([&] { merge_databases({path("a.db")}, (dir_ / "." / "a.db").string()); },
                    UserErrorKind::kInvalidArgument, {"also one of its inputs"});
  expect_user_error([&] { merge_databases({path("a.db")}, path("b.db")); }, UserErrorKind::kInvalidArgument,
                    {"already exists"});
  expect_user_error([&] { merge_databases({}, path("c.db")); }, UserErrorKind::kInvalidArgument, {"no input"});
  expect_user_error([&] { merge_databases({path("a.db")}, path("no/such/c.db")); }, UserErrorKind::kNotFound,
                    {"no/such", "does not exist"});
  EXPECT_EQ(RecordDatabase::open(path("a.db"), RecordDatabase::Mode::kReadOnly).all().size(), 1u);
}

TEST_F(RecordsMerge, DamagedOrMissingInputIsRefusedAndWritesNothing) {
  {
    auto a = RecordDatabase::open(path("a.db"), RecordDatabase::Mode::kCreate);
    a.add(make_record("t", kDevice, 8, 0.010, true, true, false));
  }
  std::ofstream(path("junk.db")) << "junk junk junk";
  expect_user_error([&] { merge_databases({path("a.db"), path("junk.db")}, path("c.db")); }, UserErrorKind::kParse,
                    {path("junk.db")});
  expect_user_error([&] { merge_databases({path("a.db"), path("nope.db")}, path("c.db")); },
                    UserErrorKind::kNotFound, {path("nope.db")});
  EXPECT_FALSE(std::filesystem::exists(path("c.db")));
}

}  // namespace
}  // namespace kiln::tune
