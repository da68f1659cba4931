// The on-disk kernel cache (see kernel_cache.h).
#include "kiln/driver/kernel_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "kiln/codegen/host_info.h"
#include "kiln/runtime/artifact_format.h"
#include "kiln/support/fnv.h"
#include "kiln/support/logging.h"
#include "kiln/version.h"

namespace kiln::driver {
namespace {

namespace fs = std::filesystem;

constexpr char kTrailerMagic[8] = {'K', 'I', 'L', 'N', 'K', 'C', 'H', '1'};
constexpr size_t kTrailerBytes = 8 + 8 + 8;  // magic, object size, hash64(object)
constexpr uint64_t kDefaultMaxMb = 1024;

bool is_off(const char* v) {
  if (v == nullptr) return false;
  const std::string s(v);
  return s == "off" || s == "0" || s == "no" || s == "false" || s == "OFF";
}

std::string default_dir() {
  if (const char* d = std::getenv("KILN_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x == '/') return std::string(x) + "/kiln";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h == '/') return std::string(h) + "/.cache/kiln";
  return "";
}

void put64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
uint64_t get64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

KernelCache::KernelCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

KernelCache KernelCache::disabled() { return KernelCache("", 0); }

KernelCache KernelCache::from_environment() {
  if (is_off(std::getenv("KILN_CACHE"))) return disabled();
  uint64_t max_mb = kDefaultMaxMb;
  if (const char* m = std::getenv("KILN_CACHE_MAX_MB")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(m, &end, 10);
    if (end != m && *end == '\0') max_mb = v;
    else KILN_LOG(driver, kWarning) << "ignoring KILN_CACHE_MAX_MB='" << m << "' (expected a number of MB)";
  }
  return KernelCache(default_dir(), max_mb << 20);
}

std::string KernelCache::key(const std::string& bitcode, const std::string& target) {
  std::string text = std::string(compiler_version()) + "\n" + codegen::host_info().llvm_version + "\n" + target + "\n";
  const uint64_t a = fnv1a64(text + bitcode);
  const uint64_t b = artifact::hash64(bitcode.data(), bitcode.size()) ^ fnv1a64(text);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  return buf;
}

std::optional<std::vector<char>> KernelCache::lookup(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  const fs::path path = fs::path(dir_) / "objects" / (key + ".o");
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < kTrailerBytes) return std::nullopt;
  const char* t = bytes.data() + bytes.size() - kTrailerBytes;
  const uint64_t size = get64(t + 8), hash = get64(t + 16);
  if (std::memcmp(t, kTrailerMagic, 8) != 0 || size != bytes.size() - kTrailerBytes ||
      hash != artifact::hash64(bytes.data(), size)) {
    KILN_LOG(driver, kInfo) << "kernel cache: ignoring the damaged entry " << path.string();
    return std::nullopt;
  }
  bytes.resize(size);
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used
  return bytes;
}

void KernelCache::store(const std::string& key, const std::vector<char>& object) {
  if (enabled() && write_entry(key, object)) evict();
}

void KernelCache::store_all(const std::vector<std::string>& keys, const std::vector<const std::vector<char>*>& objects) {
  bool stored = false;
  for (size_t i = 0; i < keys.size() && i < objects.size() && enabled(); ++i) stored = write_entry(keys[i], *objects[i]);
  if (stored && enabled()) evict();
}

bool KernelCache::write_entry(const std::string& key, const std::vector<char>& object) {
  const fs::path objects = fs::path(dir_) / "objects";
  std::error_code ec;
  fs::create_directories(objects, ec);
  if (ec) {
    give_up("cannot create " + objects.string() + ": " + ec.message());
    return false;
  }
  std::string trailer(kTrailerMagic, 8);
  put64(trailer, object.size());
  put64(trailer, artifact::hash64(object.data(), object.size()));
  const fs::path tmp = objects / (key + ".tmp-" + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
    out.write(trailer.data(), static_cast<std::streamsize>(trailer.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      give_up("cannot write " + tmp.string());
      return false;
    }
  }
  fs::rename(tmp, objects / (key + ".o"), ec);
  if (ec) {
    fs::remove(tmp, ec);
    give_up("cannot rename into " + objects.string() + ": " + ec.message());
    return false;
  }
  return true;
}

void KernelCache::evict() const {
  struct Entry {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type time;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(dir_) / "objects", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".o") continue;
    std::error_code e2;
    const uint64_t bytes = it->file_size(e2);
    const fs::file_time_type time = it->last_write_time(e2);
    if (e2) continue;
    entries.push_back({it->path(), bytes, time});
    total += bytes;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.time < b.time; });
  for (const Entry& e : entries) {
    if (total <= max_bytes_ / 10 * 8) break;
    if (fs::remove(e.path, ec)) total -= e.bytes;
  }
}

void KernelCache::give_up(const std::string& why) {
  KILN_LOG(driver, kWarning) << "kernel cache off for this compile: " << why
                             << " (set KILN_CACHE_DIR to a writable directory, or KILN_CACHE=off)";
  dir_.clear();
}

}  // namespace kiln::driver
