// Cache eviction between timed runs (cache_evictor.h).
#include "cache_evictor.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string>

namespace kiln::tune {
namespace {

constexpr size_t kAssumedCacheBytes = size_t{32} << 20;
constexpr size_t kMaxBufferBytes = size_t{256} << 20;

// sysfs writes sizes as "32768K" or "1M".
size_t parse_cache_size(const std::string& text) {
  size_t value = 0, i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    value = value * 10 + static_cast<size_t>(text[i] - '0');
    if (value > (size_t{1} << 40)) return 0;
    ++i;
  }
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  else if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) value <<= 20;
  return value;
}

}  // namespace

size_t last_level_cache_bytes() {
  size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream type_file(dir + "type"), size_file(dir + "size");
    std::string type, size;
    if (!(type_file >> type) || !(size_file >> size)) continue;
    if (type == "Instruction") continue;
    best = std::max(best, parse_cache_size(size));
  }
  return best;
}

CacheEvictor::CacheEvictor() {
  size_t llc = last_level_cache_bytes();
  if (llc == 0) llc = kAssumedCacheBytes;
  buffer_.assign(std::min(2 * llc, kMaxBufferBytes), 0);
}

void CacheEvictor::evict() {
  // A different value each time, so the writes are never elided; one byte per 64-byte line.
  ++round_;
  volatile unsigned char* p = buffer_.data();
  for (size_t i = 0; i < buffer_.size(); i += 64) p[i] = static_cast<unsigned char>(p[i] + round_);
}

}  // namespace kiln::tune
