// RecordDatabase basics: add/records/best/all round trip, best() ignores failed and unverified
// records, other devices' records are kept apart and counted, reopening keeps everything,
// DeviceKey from a Target.
#include <gtest/gtest.h>

#include <thread>

#include "kiln/codegen/target.h"
#include "kiln/tune/records.h"
#include "kiln/version.h"
#include "records_test_util.h"

namespace kiln::tune {
namespace {

using testing::make_record;
using testing::RecordsTest;

const std::string kDevice = "x86_64-unknown-linux-gnu znver3 avx,avx2,fma";
const std::string kOther = "x86_64-unknown-linux-gnu skylake-avx512 avx,avx2,avx512f,fma";

using RecordDb = RecordsTest;

TEST_F(RecordDb, RoundTripsEveryField) {
  auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
  EXPECT_EQ(db.path(), path("r.db"));
  TuningRecord r = make_record("conv:abc", kDevice, 16, 0.00125, true, false, true);
  r.knobs = {{"tile_oc", 16}, {"order", -1}, {"vector_width", 8}};
  r.created_unix = 1700000000;
  r.kiln_version = "9.9.9";
  db.add(r);
  TuningRecord failed = make_record("conv:abc", kDevice, 32, 0, false);
  db.add(failed);

  std::vector<TuningRecord> got = db.records("conv:abc", kDevice);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].task, "conv:abc");
  EXPECT_EQ(got[0].task_label, "label of conv:abc");
  EXPECT_EQ(got[0].device, kDevice);
  EXPECT_EQ(got[0].kiln_version, "9.9.9");
  EXPECT_EQ(got[0].knobs, r.knobs);
  EXPECT_TRUE(got[0].ok);
  EXPECT_DOUBLE_EQ(got[0].seconds, 0.00125);
  EXPECT_FALSE(got[0].is_default);
  EXPECT_TRUE(got[0].verified);
  EXPECT_EQ(got[0].created_unix, 1700000000);
  // Defaults filled in by add(): Kiln's version and the current time.
  EXPECT_FALSE(got[1].ok);
  EXPECT_EQ(got[1].error, "killed by signal 11");
  EXPECT_EQ(got[1].kiln_version, compiler_version());
  EXPECT_GT(got[1].created_unix, 1700000000);
  EXPECT_EQ(db.all().size(), 2u);
}

TEST_F(RecordDb, EmptyKnobsRoundTrip) {
  auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
  TuningRecord r = make_record("t", kDevice, 1, 0.5, true, true, false);
  r.knobs.clear();
  db.add(r);
  ASSERT_EQ(db.all().size(), 1u);
  EXPECT_TRUE(db.all()[0].knobs.empty());
}

TEST_F(RecordDb, BestIsFastestOkRecordThatIsDefaultOrVerified) {
  auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
  EXPECT_FALSE(db.best("t", kDevice).has_value());
  db.add(make_record("t", kDevice, 8, 0.010, true, /*is_default=*/true, /*verified=*/false));
  db.add(make_record("t", kDevice, 16, 0.001, /*ok=*/false));                              // failed
  db.add(make_record("t", kDevice, 32, 0.002, true, false, /*verified=*/false));           // unchecked
  db.add(make_record("t", kDevice, 64, 0.006, true, false, /*verified=*/true));
  db.add(make_record("t", kOther, 4, 0.0001, true, false, true));                          // elsewhere
  db.add(make_record("u", kDevice, 4, 0.0001, true, false, true));                         // other task
  std::optional<TuningRecord> best = db.best("t", kDevice);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->knobs.at("tile_oc"), 64);
  EXPECT_DOUBLE_EQ(best->seconds, 0.006);

  // Only the baseline ran: it is the best.
  db.add(make_record("v", kDevice, 8, 0.010, true, true, false));
  db.add(make_record("v", kDevice, 16, 0.020, true, false, true));
  EXPECT_EQ(db.best("v", kDevice)->knobs.at("tile_oc"), 8);
  EXPECT_FALSE(db.best("t", "some other device").has_value());
}

TEST_F(RecordDb, OtherDevicesAreKeptApartAndCounted) {
  auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
  db.add(make_record("t", kDevice, 8, 0.01, true, true));
  db.add(make_record("t", kOther, 8, 0.02, true, true));
  db.add(make_record("t", kOther, 16, 0.01, true, false, true));
  db.add(make_record("u", kOther, 16, 0.01, true, true));
  EXPECT_EQ(db.records("t", kDevice).size(), 1u);
  EXPECT_EQ(db.records("t", kOther).size(), 2u);
  EXPECT_DOUBLE_EQ(db.best("t", kDevice)->seconds, 0.01);
  EXPECT_EQ(db.count_other_devices(kDevice), 3);
  EXPECT_EQ(db.count_other_devices(kOther), 1);
  EXPECT_EQ(db.count_other_devices("nowhere"), 4);
}

TEST_F(RecordDb, ReopenKeepsRecordsInOrderAndReadOnlyReads) {
  {
    auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
    for (int i = 0; i < 20; ++i) {
      std::string task = std::string("t").append(std::to_string(i % 3));
      db.add(make_record(task, kDevice, i, 0.001 * (i + 1)));
    }
  }
  {
    auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);  // resume
    db.add(make_record("t0", kDevice, 99, 0.5));
  }
  auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kReadOnly);
  std::vector<TuningRecord> all = db.all();
  ASSERT_EQ(all.size(), 21u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(all[i].knobs.at("tile_oc"), i);
  EXPECT_EQ(all[20].knobs.at("tile_oc"), 99);
  EXPECT_DOUBLE_EQ(db.best("t0", kDevice)->seconds, 0.001);
  EXPECT_THROW(db.add(make_record("t", kDevice, 1, 0.1)), UserError);  // read-only connection
}

TEST_F(RecordDb, ThreadsMayShareOneDatabase) {
  auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&db, t] {
      for (int i = 0; i < 25; ++i) {
        db.add(make_record("task" + std::to_string(t), kDevice, i, 1e-3 * (i + 1)));
        EXPECT_TRUE(db.best("task" + std::to_string(t), kDevice).has_value());
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(db.all().size(), 100u);
  for (int t = 0; t < 4; ++t) EXPECT_EQ(db.records("task" + std::to_string(t), kDevice).size(), 25u);
}

TEST_F(RecordDb, MovedDatabaseStillWorks) {
  auto a = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
  RecordDatabase b = std::move(a);
  b.add(make_record("t", kDevice, 1, 0.1));
  EXPECT_EQ(b.all().size(), 1u);
}

TEST_F(RecordDb, MissingFileInReadOnlyModeIsNotFound) {
  testing::expect_user_error([&] { RecordDatabase::open(path("absent.db"), RecordDatabase::Mode::kReadOnly); },
                             UserErrorKind::kNotFound, {path("absent.db"), "kiln tune"});
  testing::expect_user_error([&] { RecordDatabase::open(dir_.string(), RecordDatabase::Mode::kCreate); },
                             UserErrorKind::kInvalidArgument, {"folder"});
  testing::expect_user_error(
      [&] { RecordDatabase::open(path("no/such/dir/r.db"), RecordDatabase::Mode::kCreate); },
      UserErrorKind::kNotFound, {"no/such/dir/r.db", "does not exist"});
}

TEST(DeviceKey, FromTargetNamesTripleCpuAndSortedFeatures) {
  codegen::Target t = codegen::parse_target("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver3");
  DeviceKey key = DeviceKey::of(t);
  EXPECT_EQ(key.triple, t.triple);
  EXPECT_EQ(key.cpu, "znver3");
  EXPECT_NE(key.features.find("avx2"), std::string::npos);
  EXPECT_EQ(key.features.find("avx512f"), std::string::npos);
  EXPECT_EQ(key.str(), t.triple + " znver3 " + key.features);
  DeviceKey other = DeviceKey::of(codegen::parse_target("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=skylake-avx512"));
  EXPECT_NE(other.str(), key.str());
  EXPECT_EQ(DeviceKey::of(t).str(), key.str());  // stable
}

}  // namespace
}  // namespace kiln::tune
