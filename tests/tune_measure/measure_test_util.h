// Shared by the measurement tests: a private temp directory (removed when the test process exits)
// and the tiny-cnn example artifact, compiled at build time (tests/tune_measure/tests.cmake).
#ifndef KILN_TESTS_TUNE_MEASURE_MEASURE_TEST_UTIL_H_
#define KILN_TESTS_TUNE_MEASURE_MEASURE_TEST_UTIL_H_

#include <unistd.h>

#include <filesystem>
#include <string>

namespace kiln::tune::testing {

// A directory under the system temp dir, removed at exit (forked children _exit or exec and
// never remove it).
inline const std::string& test_dir() {
  struct Dir {
    std::string path;
    Dir() {
      path = (std::filesystem::temp_directory_path() / ("kiln_measure_test_" + std::to_string(::getpid()))).string();
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

inline std::string test_path(const std::string& name) { return test_dir() + "/" + name; }

inline std::string tiny_artifact() { return KILN_TUNE_TINY_ARTIFACT; }

}  // namespace kiln::tune::testing

#endif  // KILN_TESTS_TUNE_MEASURE_MEASURE_TEST_UTIL_H_
