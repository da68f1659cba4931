// Writes the test artifact of tests/driver/artifact_test_util.h to argv[1] and prints, in the
// format of examples/c/run_model.c, what that program must print for it (the model computed in
// plain C++ on run_model.c's input pattern).
#include <cstdio>

#include "../driver/artifact_test_util.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.so\n", argv[0]);
    return 2;
  }
  kiln::testing::write_test_artifact(argv[1]);
  std::vector<float> x(kiln::testing::kRows * kiln::testing::kCols);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k % 13) - 6) / 4.0f;
  const std::vector<float> y = kiln::testing::reference_output(x);
  std::printf("output y:");
  double sum = 0;
  for (size_t k = 0; k < y.size(); ++k) {
    if (k < 8) std::printf(" %.9g", y[k]);
    sum += y[k];
  }
  std::printf("\nsum y: %.17g\n", sum);
  return 0;
}
