// kiln_load_test: one loaded artifact shared by many threads (issue 14, docs/reliability.md).
//
//   kiln_load_test ARTIFACT.so [--threads T] [--runs R] [--seconds S] [--oom]
//
// Loads the artifact once and computes, single-threaded, the outputs for 16 different inputs
// (seeded patterns over every f32 input). Then T threads, each with its own executor on the shared
// module, run R times each (or until S seconds have passed: the soak), cycling through the 16
// inputs; every output must be bit-identical to the single-threaded one, every call must
// succeed. VmRSS is read after a warm-up and at the end (and every 10 s of a soak); the growth is
// printed. With --oom the address space is then capped just above what the process uses and
// executors are created and run until allocation fails: every failure must be an error code
// with a message, never a crash (skipped, with a message, in an AddressSanitizer build). Exit status 0 when every check passed. Links only
// libkiln_runtime (so it also runs in the sanitizer builds of scripts/check.sh).
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime/c_api.h"

// AddressSanitizer maps terabytes of shadow address space: under an address-space cap its own
// mmap fails and it aborts, before Kiln's allocation failure can be observed.
#if defined(__SANITIZE_ADDRESS__)
#define KILN_LOAD_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_LOAD_TEST_UNDER_ASAN 1
#endif
#endif

namespace {

constexpr int kVariants = 16;

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

struct Inputs {
  std::vector<std::vector<DLTensor*>> variants;  // [variant][input]
};

bool is_f32(DLDataType t) { return t.code == kDLFloat && t.bits == 32 && t.lanes == 1; }

int fail(const char* what) {
  std::fprintf(stderr, "error: %s: %s\n", what, kiln_get_last_error());
  return 1;
}

// Runs variant `v` on `exec`; appends every output's bytes to `out`.
bool run_variant(KilnExecutor* exec, const Inputs& in, int v, int32_t num_outputs, std::string* out) {
  for (size_t i = 0; i < in.variants[v].size(); ++i) {
    if (kiln_executor_set_input(exec, static_cast<int32_t>(i), in.variants[v][i]) != 0) return false;
  }
  if (kiln_executor_run(exec) != 0) return false;
  out->clear();
  for (int32_t o = 0; o < num_outputs; ++o) {
    const DLTensor* t = nullptr;
    size_t bytes = 0;
    if (kiln_executor_output_view(exec, o, &t) != 0 || kiln_tensor_nbytes(t, &bytes) != 0) return false;
    out->append(static_cast<const char*>(t->data), bytes);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ARTIFACT.so [--threads T] [--runs R] [--seconds S] [--oom]\n", argv[0]);
    return 2;
  }
  int threads = 32, runs = 1000;
  double seconds = 0;
  bool oom = false;
  for (int a = 2; a < argc; ++a) {
    const std::string f = argv[a];
    if (f == "--oom") oom = true;
    else if (a + 1 < argc && f == "--threads") threads = std::atoi(argv[++a]);
    else if (a + 1 < argc && f == "--runs") runs = std::atoi(argv[++a]);
    else if (a + 1 < argc && f == "--seconds") seconds = std::atof(argv[++a]);
    else return std::fprintf(stderr, "unknown argument %s\n", f.c_str()), 2;
  }
  KilnModule* module = nullptr;
  if (kiln_module_load(argv[1], &module) != 0) return fail("loading");
  int32_t num_inputs = 0, num_outputs = 0;
  kiln_module_num_inputs(module, &num_inputs);
  kiln_module_num_outputs(module, &num_outputs);
  Inputs in;
  in.variants.resize(kVariants);
  for (int v = 0; v < kVariants; ++v) {
    for (int32_t i = 0; i < num_inputs; ++i) {
      KilnTensorInfo info;
      DLTensor* t = nullptr;
      if (kiln_module_input_info(module, i, &info) != 0 || kiln_tensor_alloc(info.shape, info.ndim, info.dtype, &t) != 0) {
        return fail("allocating an input");
      }
      size_t bytes = 0;
      kiln_tensor_nbytes(t, &bytes);
      if (is_f32(info.dtype)) {
        auto* d = static_cast<float*>(t->data);
        for (size_t k = 0; k < bytes / 4; ++k) d[k] = static_cast<float>(static_cast<int>((k * 7 + v * 13) % 23) - 11) / 8.0f;
      }
      in.variants[v].push_back(t);
    }
  }
  std::vector<std::string> expected(kVariants);
  {
    KilnExecutor* exec = nullptr;
    if (kiln_executor_create(module, &exec) != 0) return fail("creating an executor");
    for (int v = 0; v < kVariants; ++v) {
      if (!run_variant(exec, in, v, num_outputs, &expected[v])) return fail("single-threaded run");
    }
    kiln_executor_free(exec);
  }
  std::atomic<long> done{0}, mismatches{0}, errors{0};
  std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  long rss_warm = -1;
  std::atomic<int> warmed{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      KilnExecutor* exec = nullptr;
      if (kiln_executor_create(module, &exec) != 0) {
        ++errors;
        return;
      }
      std::string out;
      for (long r = 0; seconds > 0 ? !stop.load() : r < runs; ++r) {
        const int v = static_cast<int>((t * 7 + r) % kVariants);
        if (!run_variant(exec, in, v, num_outputs, &out)) {
          if (errors++ < 5) std::fprintf(stderr, "thread %d run %ld: %s\n", t, r, kiln_get_last_error());
        } else if (out != expected[v]) {
          ++mismatches;
        }
        ++done;
        if (r == 20) ++warmed;
      }
      kiln_executor_free(exec);
    });
  }
  while (warmed.load() < threads && done.load() < static_cast<long>(threads) * runs && errors.load() < threads) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  rss_warm = rss_kib();
  long rss_max = rss_warm;
  if (seconds > 0) {
    double next = 10;
    while (elapsed() < seconds) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (elapsed() >= next) {
        const long r = rss_kib();
        rss_max = std::max(rss_max, r);
        std::printf("  %5.0f s: %ld runs, VmRSS %ld KiB\n", elapsed(), done.load(), r);
        std::fflush(stdout);
        next += 10;
      }
    }
    stop = true;
  }
  for (auto& th : pool) th.join();
  const long rss_end = rss_kib();
  rss_max = std::max(rss_max, rss_end);
  std::printf("%s: %d threads, %ld runs in %.1f s, %ld mismatches, %ld errors; VmRSS after warm-up %ld KiB, "
              "at the end %ld KiB (growth %ld KiB), max %ld KiB\n",
              argv[1], threads, done.load(), elapsed(), mismatches.load(), errors.load(), rss_warm, rss_end,
              rss_end - rss_warm, rss_max);
  bool ok = mismatches == 0 && errors == 0;
#ifdef KILN_LOAD_TEST_UNDER_ASAN
  if (oom) {
    std::printf("--oom skipped: this is an AddressSanitizer build, whose shadow memory cannot live under an "
                "address-space cap (the plain build runs this check)\n");
    oom = false;
  }
#endif
  if (oom) {
    // Cap the address space a little above what is mapped now, then create and run executors until
    // allocations fail: each failure must come back as an error code with a message.
    std::ifstream st("/proc/self/statm");
    long pages = 0;
    st >> pages;
    const rlim_t cap = static_cast<rlim_t>(pages) * 4096 + (rlim_t{8} << 20);
    rlimit old{};
    getrlimit(RLIMIT_AS, &old);
    rlimit lim{cap, old.rlim_max};
    setrlimit(RLIMIT_AS, &lim);
    std::vector<KilnExecutor*> held;
    long refused = 0, ran = 0;
    std::string out, message;
    for (int k = 0; k < 100000 && refused < 50; ++k) {
      KilnExecutor* exec = nullptr;
      if (kiln_executor_create(module, &exec) != 0) {
        ++refused;
        message = kiln_get_last_error();
        continue;
      }
      held.push_back(exec);
      if (run_variant(exec, in, k % kVariants, num_outputs, &out)) {
        ++ran;
        if (out != expected[k % kVariants]) ++mismatches, ok = false;
      } else {
        ++refused;
        message = kiln_get_last_error();
      }
    }
    setrlimit(RLIMIT_AS, &old);
    for (KilnExecutor* e : held) kiln_executor_free(e);
    std::printf("allocation failure: address space capped at %lu MiB: %zu executors created, %ld runs correct, "
                "%ld refusals, last: %s\n",
                static_cast<unsigned long>(cap >> 20), held.size(), ran, refused, message.c_str());
    if (refused == 0 || message.find("out of memory") == std::string::npos) ok = false;
  }
  for (auto& v : in.variants) {
    for (DLTensor* t : v) kiln_tensor_free(t);
  }
  kiln_module_free(module);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
