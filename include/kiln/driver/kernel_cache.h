// The kernel cache: object code of compiled LLVM modules kept on disk between compiles, so a
// recompile of an unchanged model (or of a model whose kernels did not change) skips LLVM's O3
// pipeline and code generation, which are most of a compile (docs/compile.md, "Kernel cache").
//
// Key: a 128-bit hash of the module's bitcode before optimization (which holds the triple, data
// layout and every kernel's target-cpu / target-features / vector-width attributes), the target
// string, Kiln's version and LLVM's version: a new Kiln or LLVM never reuses an old entry.
// Entry: DIR/objects/<key>.o, written to a temporary file and renamed into place (concurrent
// compiles never see half a file), with a trailer holding the object's size and hash64; an entry
// whose trailer does not match is ignored and rewritten. A hit refreshes the entry's time; after
// a store (once per compile: store_all), when the entries exceed the size cap, the least
// recently used ones are deleted until they take 80% of it.
//
// DIR: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln. $KILN_CACHE=off (or
// 0/no/false) disables it; $KILN_CACHE_MAX_MB sets the cap (default 1024). A cache directory
// that cannot be created or written makes the compile go on without it (one warning), never fail.
#ifndef KILN_DRIVER_KERNEL_CACHE_H_
#define KILN_DRIVER_KERNEL_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::driver {

class KernelCache {
 public:
  // The cache the environment configures (see above); disabled() when $KILN_CACHE says off.
  static KernelCache from_environment();
  // A cache in `dir` with a cap of `max_bytes` (tests).
  KernelCache(std::string dir, uint64_t max_bytes);
  // No cache: lookups miss, stores do nothing.
  static KernelCache disabled();

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // The key of a module's bitcode for `target` (codegen::Target::str()).
  static std::string key(const std::string& bitcode, const std::string& target);

  // The object stored under `key`, if there is a whole one.
  std::optional<std::vector<char>> lookup(const std::string& key) const;
  // Stores `object` under `key` (best effort: a failure is logged once and the cache turns off),
  // then evicts down to the cap.
  void store(const std::string& key, const std::vector<char>& object);
  // Stores each object under its key, then evicts once (one scan of the directory per compile,
  // not one per module).
  void store_all(const std::vector<std::string>& keys, const std::vector<const std::vector<char>*>& objects);

 private:
  bool write_entry(const std::string& key, const std::vector<char>& object);  // false: gave up
  void evict() const;
  void give_up(const std::string& why);

  std::string dir_;
  uint64_t max_bytes_ = 0;
};

}  // namespace kiln::driver

#endif  // KILN_DRIVER_KERNEL_CACHE_H_
