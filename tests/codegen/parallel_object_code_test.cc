// object_code_in_parallel (llvm_module.h): modules compiled on several threads give the same
// objects, in the same order, as one after another on one thread; each object holds its own
// module's kernel. default_codegen_threads honours $KILN_COMPILE_THREADS and ignores a bad value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"

namespace kiln::codegen {
namespace {

// A kernel @k<i> that returns 0 after a loop LLVM cannot fold away entirely (so O3 has work).
std::string kernel_ir(int i) {
  std::ostringstream os;
  os << "define i32 @k" << i << "(ptr %args, i32 %num_args) {\n"
     << "entry:\n  br label %loop\n"
     << "loop:\n  %j = phi i32 [0, %entry], [%j1, %loop]\n"
     << "  %j1 = add i32 %j, " << i + 1 << "\n"
     << "  %c = icmp slt i32 %j1, %num_args\n  br i1 %c, label %loop, label %done\n"
     << "done:\n  ret i32 0\n}\n";
  return os.str();
}

// prefix + i (+ suffix), without std::string's operator+ (GCC 12 warns falsely on it, -Wrestrict).
std::string named(const char* prefix, int i, const char* suffix = "") {
  std::ostringstream os;
  os << prefix << i << suffix;
  return os.str();
}

std::vector<std::vector<char>> compile(int modules, int threads) {
  std::vector<LLVMModule> owned;
  for (int i = 0; i < modules; ++i) {
    owned.emplace_back(host_target(), named("m", i));
    owned.back().add_llvm_ir(kernel_ir(i), named("k", i, ".ll"));
  }
  std::vector<LLVMModule*> pointers;
  for (LLVMModule& m : owned) pointers.push_back(&m);
  return object_code_in_parallel(pointers, threads);
}

bool holds(const std::vector<char>& object, const std::string& text) {
  return std::search(object.begin(), object.end(), text.begin(), text.end()) != object.end();
}

TEST(ParallelObjectCode, SameObjectsInModuleOrderWhateverTheThreads) {
  const auto one = compile(6, 1);
  ASSERT_EQ(one.size(), 6u);
  for (int threads : {2, 3, 16}) EXPECT_EQ(compile(6, threads), one) << threads << " threads";
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(holds(one[i], named("k", i).append(1, '\0'))) << "object " << i;
    EXPECT_FALSE(holds(one[i], named("k", (i + 1) % 6).append(1, '\0'))) << "object " << i;
  }
  EXPECT_TRUE(object_code_in_parallel({}, 4).empty());
}

TEST(ParallelObjectCode, DefaultThreadsHonourTheEnvironment) {
  ::setenv("KILN_COMPILE_THREADS", "3", 1);
  EXPECT_EQ(default_codegen_threads(), 3);
  ::setenv("KILN_COMPILE_THREADS", "lots", 1);  // ignored with a warning
  const int fallback = default_codegen_threads();
  ::unsetenv("KILN_COMPILE_THREADS");
  EXPECT_EQ(fallback, default_codegen_threads());
  EXPECT_GE(fallback, 1);
  EXPECT_LE(fallback, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace kiln::codegen
