// A GoogleTest fixture with a fresh directory per test (named after the test and the process),
// removed afterwards: the tuner's tests write records databases and artifacts into it.
#ifndef KILN_TESTS_TUNE_TEMP_DIR_TEST_H_
#define KILN_TESTS_TUNE_TEMP_DIR_TEST_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kiln::testing {

class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + "-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_TUNE_TEMP_DIR_TEST_H_
