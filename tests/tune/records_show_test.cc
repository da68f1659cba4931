// format_records (`kiln tune --show`): one row per task with trials, ok/failed, default and best
// time, speedup, verified and the best knobs; other devices counted in a footer or listed with
// all_devices.
#include <gtest/gtest.h>

#include "kiln/tune/records.h"
#include "kiln/tune/records_show.h"
#include "records_test_util.h"

namespace kiln::tune {
namespace {

using testing::make_record;
using RecordsShow = testing::RecordsTest;

const std::string kDevice = "x86_64-unknown-linux-gnu znver3 avx,avx2";
const std::string kOther = "aarch64-unknown-linux-gnu neoverse-v1 neon";

// The line of `text` that contains `needle` ("" when none).
std::string line_with(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  size_t begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, text.find('\n', at) - begin);
}

TEST_F(RecordsShow, ListsTasksWithBestAndSpeedup) {
  auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
  db.add(make_record("conv", kDevice, 8, 0.004, true, /*is_default=*/true, false));
  db.add(make_record("conv", kDevice, 16, 0.001, true, false, /*verified=*/true));
  db.add(make_record("conv", kDevice, 32, 0, /*ok=*/false));
  db.add(make_record("conv", kDevice, 64, 0.0005, true, false, /*verified=*/false));  // not applicable
  db.add(make_record("dense", kDevice, 8, 0.0000125, true, true, false));
  db.add(make_record("conv", kOther, 8, 0.01, true, true, false));
  db.add(make_record("conv", kOther, 4, 0.005, true, false, true));

  std::string text = format_records(db, kDevice, false);
  std::string conv = line_with(text, "label of conv");
  EXPECT_NE(conv.find("4  "), std::string::npos) << text;  // trials
  EXPECT_NE(conv.find("3/1"), std::string::npos) << text;
  EXPECT_NE(conv.find("4.00 ms"), std::string::npos) << text;
  EXPECT_NE(conv.find("1.00 ms"), std::string::npos) << text;
  EXPECT_NE(conv.find("4.00x"), std::string::npos) << text;
  EXPECT_NE(conv.find("yes"), std::string::npos) << text;
  EXPECT_NE(conv.find("tile_oc=16 unroll=0"), std::string::npos) << text;
  std::string dense = line_with(text, "label of dense");
  EXPECT_NE(dense.find("12.5 us"), std::string::npos) << text;
  EXPECT_NE(dense.find("1.00x"), std::string::npos) << text;
  EXPECT_NE(dense.find("default"), std::string::npos) << text;
  EXPECT_EQ(text.find(kOther), std::string::npos) << text;
  EXPECT_NE(text.find("2 records of 1 other device not shown"), std::string::npos) << text;
  EXPECT_NE(text.find("2 tasks, 1 tuned"), std::string::npos) << text;

  std::string all = format_records(db, kDevice, true);
  EXPECT_NE(all.find("device " + kOther), std::string::npos) << all;
  EXPECT_NE(all.find(kDevice + " (this device)"), std::string::npos) << all;
  EXPECT_EQ(all.find("not shown"), std::string::npos) << all;
  EXPECT_NE(line_with(all, "tile_oc=4").find("2.00x"), std::string::npos) << all;
}

TEST_F(RecordsShow, SaysWhenTheDeviceHasNoRecords) {
  auto db = RecordDatabase::open(path("r.db"), RecordDatabase::Mode::kCreate);
  db.add(make_record("conv", kOther, 8, 0.01, true, true, false));
  std::string text = format_records(db, kDevice, false);
  EXPECT_NE(text.find("no records for device " + kDevice), std::string::npos) << text;
  EXPECT_NE(text.find("1 record of 1 other device"), std::string::npos) << text;
}

TEST(FormatSeconds, PicksAUnit) {
  EXPECT_EQ(format_seconds(812.34e-6), "812.3 us");
  EXPECT_EQ(format_seconds(0.01241), "12.41 ms");
  EXPECT_EQ(format_seconds(1.2034), "1.203 s");
}

}  // namespace
}  // namespace kiln::tune
