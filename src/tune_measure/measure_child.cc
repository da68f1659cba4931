// The measuring child process (measure_child.h).
#include "measure_child.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kiln/runtime/c_api.h"
#include "cache_evictor.h"
#include "measure_wire.h"
#include "seeded_fill.h"

namespace kiln::tune {
namespace {

// A run never ends: measured runs stop at this many even if min_seconds is not reached.
constexpr int kMaxTimedRuns = 100000;

void write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing to tell
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void finish(int fd, const MeasureResult& result) {
  write_all(fd, wire::encode_result(result));
  ::close(fd);
  ::_exit(0);
}

[[noreturn]] void fail(int fd, const std::string& error) {
  MeasureResult r;
  r.error = error;
  finish(fd, r);
}

std::string last_error(const char* what) {
  const char* e = kiln_get_last_error();
  return std::string(what) + ": " + (e != nullptr && *e != '\0' ? e : "unknown error");
}

void apply_test_fault() {
  const char* fault = std::getenv("KILN_TUNE_MEASURE_TEST_FAULT");
  if (fault == nullptr || *fault == '\0') return;
  const std::string f = fault;
  if (f == "segv") {
    // Die by the signal itself, as a crashing candidate does: a sanitizer's handler (ASan installs
    // one for SIGSEGV) would otherwise turn the signal into an exit status.
    ::signal(SIGSEGV, SIG_DFL);
    ::raise(SIGSEGV);
  }
  if (f == "hang") for (;;) ::pause();
  if (f.rfind("exit:", 0) == 0) ::_exit(std::atoi(f.c_str() + 5));
  if (f.rfind("sleep:", 0) == 0) ::usleep(static_cast<useconds_t>(std::atof(f.c_str() + 6) * 1e6));
}

}  // namespace

void run_measure_child(const std::string& path, const MeasureOptions& options, int fd) {
  if (kiln_set_num_threads(options.threads) != 0) fail(fd, last_error("cannot set the thread count"));
  KilnModule* module = nullptr;
  if (kiln_module_load(path.c_str(), &module) != 0) fail(fd, last_error("cannot load the candidate"));
  apply_test_fault();
  KilnExecutor* exec = nullptr;
  if (kiln_executor_create(module, &exec) != 0) fail(fd, last_error("cannot create an executor"));

  int32_t num_inputs = 0, num_outputs = 0;
  kiln_module_num_inputs(module, &num_inputs);
  kiln_module_num_outputs(module, &num_outputs);
  for (int32_t i = 0; i < num_inputs; ++i) {
    KilnTensorInfo info;
    DLTensor* t = nullptr;
    if (kiln_module_input_info(module, i, &info) != 0 ||
        kiln_tensor_alloc(info.shape, info.ndim, info.dtype, &t) != 0) {
      fail(fd, last_error("cannot allocate an input"));
    }
    if (!fill_seeded(t, options.seed, i)) {
      fail(fd, std::string("input '") + info.name + "' has a dtype the measurer cannot fill");
    }
    if (kiln_executor_set_input(exec, i, t) != 0) fail(fd, last_error("cannot set an input"));
    kiln_tensor_free(t);
  }

  for (int w = 0; w < options.warmup; ++w) {
    if (kiln_executor_run(exec) != 0) fail(fd, last_error("the candidate failed to run"));
  }
  MeasureResult result;
  using Clock = std::chrono::steady_clock;
  const int repeats = options.repeats < 1 ? 1 : options.repeats;
  std::optional<CacheEvictor> evictor;
  if (options.flush_cache) evictor.emplace();
  double timed = 0;  // min_seconds counts the timed runs only, not the evictions
  while (static_cast<int>(result.runs.size()) < kMaxTimedRuns) {
    if (evictor) evictor->evict();
    const auto t0 = Clock::now();
    if (kiln_executor_run(exec) != 0) fail(fd, last_error("the candidate failed to run"));
    const auto t1 = Clock::now();
    result.runs.push_back(std::chrono::duration<double>(t1 - t0).count());
    timed += result.runs.back();
    const int runs = static_cast<int>(result.runs.size());
    // With evictions each run costs a few ms more, so a tiny kernel stops at 4 x repeats.
    if (runs >= repeats && (timed >= options.min_seconds || (evictor && runs >= 4 * repeats))) break;
  }

  if (options.return_outputs) {
    for (int32_t i = 0; i < num_outputs; ++i) {
      const DLTensor* view = nullptr;
      size_t nbytes = 0;
      if (kiln_executor_output_view(exec, i, &view) != 0 || kiln_tensor_nbytes(view, &nbytes) != 0) {
        fail(fd, last_error("cannot read an output"));
      }
      const char* data = static_cast<const char*>(view->data) + view->byte_offset;
      result.outputs.emplace_back(data, data + nbytes);
    }
  }
  result.ok = true;
  finish(fd, result);
}

}  // namespace kiln::tune
