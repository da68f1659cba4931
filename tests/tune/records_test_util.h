// Shared by the tests/tune/records_*_test.cc files: a fresh temporary folder per test and a
// record factory.
#ifndef KILN_TESTS_TUNE_RECORDS_TEST_UTIL_H_
#define KILN_TESTS_TUNE_RECORDS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "kiln/support/error.h"
#include "kiln/tune/records.h"

namespace kiln::tune::testing {

// A test fixture with its own empty folder, removed afterwards.
class RecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("kiln-records-" + std::to_string(getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

inline TuningRecord make_record(const std::string& task, const std::string& device, int64_t tile, double seconds,
                                bool ok = true, bool is_default = false, bool verified = true) {
  TuningRecord r;
  r.task = task;
  r.task_label = "label of " + task;
  r.device = device;
  r.knobs = {{"tile_oc", tile}, {"unroll", tile % 2}};
  r.ok = ok;
  r.error = ok ? "" : "killed by signal 11";
  r.seconds = ok ? seconds : 0;
  r.is_default = is_default;
  r.verified = verified;
  return r;
}

// Runs `body`, expecting a UserError of `kind` whose message mentions every string in `parts`.
template <typename Body>
void expect_user_error(Body&& body, UserErrorKind kind, std::initializer_list<std::string> parts) {
  try {
    body();
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(to_string(e.kind()), std::string(to_string(kind))) << e.what();
    std::string text = std::string(e.what()) + " " + e.subject() + " " + e.reason() + " " + e.hint();
    for (const std::string& part : parts) EXPECT_NE(text.find(part), std::string::npos) << part << " not in: " << text;
  }
}

}  // namespace kiln::tune::testing

#endif  // KILN_TESTS_TUNE_RECORDS_TEST_UTIL_H_
