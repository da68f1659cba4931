// Object code of several LLVM modules on several threads (see llvm_module.h).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "kiln/codegen/llvm_module.h"
#include "kiln/support/logging.h"
#include "kiln/support/machine.h"

namespace kiln::codegen {

int default_codegen_threads() {
  if (const char* env = std::getenv("KILN_COMPILE_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 1024) return static_cast<int>(n);
    KILN_LOG(codegen, kWarning) << "ignoring KILN_COMPILE_THREADS='" << env << "' (expected an integer 1..1024)";
  }
  int threads = usable_cores();
  if (const int64_t memory_mb = available_memory_mb(); memory_mb > 0) {
    const int64_t per_thread_mb = static_cast<int64_t>(kCodegenBytesPerThread >> 20);
    threads = static_cast<int>(std::min<int64_t>(threads, std::max<int64_t>(1, memory_mb / per_thread_mb)));
  }
  return threads;
}

std::vector<std::vector<char>> object_code_in_parallel(const std::vector<LLVMModule*>& modules, int threads,
                                                       const std::function<void()>& on_module_done) {
  std::vector<std::vector<char>> objects(modules.size());
  std::vector<std::exception_ptr> errors(modules.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < modules.size(); i = next++) {
      try {
        objects[i] = modules[i]->object_code();
      } catch (...) {
        errors[i] = std::current_exception();
      }
      if (on_module_done) on_module_done();
    }
  };
  const size_t n = std::min<size_t>(modules.size(), static_cast<size_t>(std::max(1, threads)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();  // this thread is one of them
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return objects;
}

}  // namespace kiln::codegen
