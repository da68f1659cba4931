// Shared by the kiln quantize tests (quantize_e2e.cc, quantize_accuracy_e2e.cc): the fixture's
// folder (tests/driver/make_quantize_cases.py), the skip when it could not run, and a private
// temporary folder removed at exit.
#ifndef KILN_TESTS_DRIVER_QUANTIZE_TEST_UTIL_H_
#define KILN_TESTS_DRIVER_QUANTIZE_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kiln::quantize_test {

inline const std::filesystem::path kCases = std::filesystem::path(KILN_BINARY_DIR) / "quantize_cases";

// Skips the test when the fixture did not write `file` into kCases.
#define KILN_SKIP_IF_NO_QUANTIZE_CASE(file)                                                       \
  if (!std::filesystem::exists(::kiln::quantize_test::kCases / (file)))                           \
  GTEST_SKIP() << "no models in " << ::kiln::quantize_test::kCases                                \
               << ": tests/driver/make_quantize_cases.py (fixture driver.make_quantize_cases) failed; " \
                  "it needs /usr/bin/python3 with torch, onnx and sklearn (python3-sklearn)"

inline const std::filesystem::path kTmp =
    std::filesystem::temp_directory_path() / ("kiln-quantize-test-" + std::to_string(getpid()));
struct RemoveTmp {
  ~RemoveTmp() {
    std::error_code ec;
    std::filesystem::remove_all(kTmp, ec);
  }
};
inline RemoveTmp remove_tmp;

// kTmp / name, creating kTmp.
inline std::filesystem::path tmp(const std::string& name) {
  std::filesystem::create_directories(kTmp);
  return kTmp / name;
}

}  // namespace kiln::quantize_test

#endif  // KILN_TESTS_DRIVER_QUANTIZE_TEST_UTIL_H_
