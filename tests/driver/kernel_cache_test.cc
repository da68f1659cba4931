// The kernel cache (kiln/driver/kernel_cache.h): entries round-trip, a damaged entry is a miss,
// eviction keeps the most recently used entries under the cap, the environment turns it off or
// moves it; a second compile of one graph takes every module from the cache, writes the same
// artifact and still matches the reference executor; an unusable cache directory never fails a
// compile.
#include "kiln/driver/kernel_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "compile_test_util.h"
#include "kiln/driver/compile.h"
#include "kiln/ref/executor.h"

namespace kiln::driver {
namespace {

namespace fs = std::filesystem;

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln-kernel-cache-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    ::unsetenv("KILN_CACHE");
    ::unsetenv("KILN_CACHE_DIR");
  }
  fs::path dir_;
};

std::vector<char> bytes_of(const std::string& s) { return std::vector<char>(s.begin(), s.end()); }

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(KernelCacheTest, EntriesRoundTripAndDamagedOnesMiss) {
  KernelCache cache(dir_.string(), 1 << 20);
  const std::string k1 = KernelCache::key("bitcode one", "llvm -mcpu=znver4");
  EXPECT_EQ(k1.size(), 32u);
  EXPECT_NE(k1, KernelCache::key("bitcode one", "llvm -mcpu=znver3")) << "the target is in the key";
  EXPECT_NE(k1, KernelCache::key("bitcode two", "llvm -mcpu=znver4"));
  EXPECT_FALSE(cache.lookup(k1).has_value());
  cache.store(k1, bytes_of("object code"));
  ASSERT_TRUE(cache.lookup(k1).has_value());
  EXPECT_EQ(*cache.lookup(k1), bytes_of("object code"));

  // One flipped byte, then a truncated file: both are misses, never wrong code.
  const fs::path entry = dir_ / "objects" / (k1 + ".o");
  std::string raw = file_bytes(entry);
  raw[3] ^= 0x20;
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << raw;
  EXPECT_FALSE(cache.lookup(k1).has_value());
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << raw.substr(0, 5);
  EXPECT_FALSE(cache.lookup(k1).has_value());
  cache.store(k1, bytes_of("object code"));  // rewritten whole
  EXPECT_TRUE(cache.lookup(k1).has_value());
}

TEST_F(KernelCacheTest, EvictionKeepsTheRecentlyUsedUnderTheCap) {
  KernelCache cache(dir_.string(), 5000);  // entries of ~1 KB: five fit
  std::vector<std::string> keys;
  const auto t0 = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (int i = 0; i < 5; ++i) {
    keys.push_back(KernelCache::key("module " + std::to_string(i), "t"));
    cache.store(keys.back(), std::vector<char>(960, static_cast<char>('a' + i)));
    fs::last_write_time(dir_ / "objects" / (keys.back() + ".o"), t0 + std::chrono::minutes(i));
  }
  for (const std::string& k : keys) EXPECT_TRUE(cache.lookup(k).has_value());  // all fit; each lookup refreshes
  fs::last_write_time(dir_ / "objects" / (keys[0] + ".o"), t0);                // 0 is the oldest again
  fs::last_write_time(dir_ / "objects" / (keys[1] + ".o"), t0 + std::chrono::seconds(1));
  cache.store(KernelCache::key("module 5", "t"), std::vector<char>(960, 'z'));  // over the cap: evict to 80%
  EXPECT_FALSE(cache.lookup(keys[0]).has_value());
  EXPECT_FALSE(cache.lookup(keys[1]).has_value());
  EXPECT_TRUE(cache.lookup(KernelCache::key("module 5", "t")).has_value());
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "objects")) total += e.file_size();
  EXPECT_LE(total, 4000u);
}

TEST_F(KernelCacheTest, TheEnvironmentMovesOrDisablesIt) {
  ::setenv("KILN_CACHE_DIR", dir_.c_str(), 1);
  EXPECT_EQ(KernelCache::from_environment().dir(), dir_.string());
  ::setenv("KILN_CACHE", "off", 1);
  EXPECT_FALSE(KernelCache::from_environment().enabled());
  KernelCache off = KernelCache::disabled();
  off.store("k", bytes_of("x"));
  EXPECT_FALSE(off.lookup("k").has_value());
}

TEST_F(KernelCacheTest, ASecondCompileTakesEveryModuleFromTheCache) {
  ::setenv("KILN_CACHE_DIR", dir_.c_str(), 1);
  const ir::Graph g = example_model("tiny-cnn");
  const std::string a = (dir_ / "first.so").string(), b = (dir_ / "second.so").string();
  fs::create_directories(dir_);
  const CompileReport first = compile_graph(g, a, {});
  EXPECT_EQ(first.cached_modules, 0);
  ASSERT_GT(first.codegen_modules, 1);
  const CompileReport second = compile_graph(g, b, {});
  EXPECT_EQ(second.cached_modules, second.codegen_modules);
  EXPECT_NE(second.summary().find("from the kernel cache"), std::string::npos) << second.summary();
  EXPECT_TRUE(file_bytes(a) == file_bytes(b)) << "a cached compile writes the same artifact";
  ir::NDArray x = ir::NDArray::empty(ir::DType::kF32, ir::Shape{1, 3, 32, 32});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, std::sin(0.3 * static_cast<double>(i)));
  testing::expect_close(testing::run_compiled(b, {x})[0], ref::run_graph(g, std::vector<ir::NDArray>{x})[0], 1e-4,
                        1e-5, "tiny-cnn from the cache");
  CompileOptions no_cache;
  no_cache.use_kernel_cache = false;
  EXPECT_EQ(compile_graph(g, b, no_cache).cached_modules, 0);
}

TEST_F(KernelCacheTest, AnUnusableDirectoryNeverFailsACompile) {
  ::setenv("KILN_CACHE_DIR", "/proc/kiln-cannot-create-this", 1);
  fs::create_directories(dir_);
  const CompileReport r = compile_graph(example_model("tiny-cnn"), (dir_ / "m.so").string(), {});
  EXPECT_EQ(r.cached_modules, 0);
  EXPECT_TRUE(fs::exists(dir_ / "m.so"));
}

}  // namespace
}  // namespace kiln::driver
