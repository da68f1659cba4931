// kiln-tune-worker: the measurement worker of distributed tuning (kiln/tune/tune_worker.h).
#include <string>
#include <vector>

#include "kiln/tune/tune_worker.h"

int main(int argc, char** argv) {
  return kiln::tune::tune_worker_main(std::vector<std::string>(argv + 1, argv + argc));
}
