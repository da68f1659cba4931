// numpy .npz writer: a stored (uncompressed) ZIP archive of .npy members (see npz.h).
#include "kiln/ir/npz.h"

#include <array>
#include <cstring>
#include <set>

#include "kiln/ir/npy.h"
#include "kiln/support/error.h"
#include "kiln/support/file_io.h"

namespace kiln::ir {
namespace {

constexpr uint64_t kZipLimit = 0xFFFFFFFFull;  // plain ZIP's 32-bit sizes and offsets
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
constexpr uint16_t kUtf8NamesFlag = 1 << 11;

uint32_t crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put16(std::string& out, uint32_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>((v >> 8) & 0xFF);
}
void put32(std::string& out, uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

// The fields a local header and a central-directory entry share, from "version needed" on.
void put_common(std::string& out, uint32_t crc, uint32_t size, const std::string& name) {
  put16(out, 20);  // version needed to extract: 2.0
  put16(out, kUtf8NamesFlag);
  put16(out, 0);   // method: stored
  put16(out, 0);   // time 00:00:00
  put16(out, kDosDate1980);
  put32(out, crc);
  put32(out, size);  // compressed size = size (stored)
  put32(out, size);
  put16(out, static_cast<uint32_t>(name.size()));
  put16(out, 0);  // extra field length
}

void check_fits(uint64_t value, const std::string& what) {
  if (value >= kZipLimit) {
    throw UserError(UserErrorKind::kUnsupported, what, "is 4 GiB or more, past what a plain ZIP (.npz) holds",
                    "write the outputs as .npy files instead (--output-dir)");
  }
}

}  // namespace

std::string encode_npz(const NamedArrays& arrays) {
  std::string out, directory;
  std::set<std::string> names;
  for (const auto& [name, array] : arrays) {
    const std::string member = name + ".npy";
    if (!names.insert(member).second) {
      throw UserError(UserErrorKind::kInvalidArgument, "array '" + name + "'", "appears twice in one .npz",
                      "give each array its own name");
    }
    if (member.size() > 0xFFFF) {
      throw UserError(UserErrorKind::kUnsupported, "array name", "is longer than a ZIP member name can be (65,535 bytes)");
    }
    const std::string data = encode_npy(array);
    check_fits(data.size(), "array '" + name + "'");
    check_fits(out.size(), "the .npz archive");
    const uint32_t crc = crc32(data);
    const uint32_t offset = static_cast<uint32_t>(out.size());
    put32(out, 0x04034B50);  // local file header
    put_common(out, crc, static_cast<uint32_t>(data.size()), member);
    out += member;
    out += data;

    put32(directory, 0x02014B50);  // central directory entry
    put16(directory, (3 << 8) | 20);  // made by: Unix, 2.0
    put_common(directory, crc, static_cast<uint32_t>(data.size()), member);
    put16(directory, 0);  // comment length
    put16(directory, 0);  // disk number
    put16(directory, 0);  // internal attributes
    put32(directory, 0644u << 16);  // external attributes: -rw-r--r--
    put32(directory, offset);
    directory += member;
  }
  check_fits(out.size() + directory.size(), "the .npz archive");
  if (arrays.size() > 0xFFFF) {
    throw UserError(UserErrorKind::kUnsupported, "the .npz archive", "has more than 65,535 arrays");
  }
  const uint32_t directory_offset = static_cast<uint32_t>(out.size());
  out += directory;
  put32(out, 0x06054B50);  // end of central directory
  put16(out, 0);           // this disk
  put16(out, 0);           // disk with the directory
  put16(out, static_cast<uint32_t>(arrays.size()));
  put16(out, static_cast<uint32_t>(arrays.size()));
  put32(out, static_cast<uint32_t>(directory.size()));
  put32(out, directory_offset);
  put16(out, 0);  // comment length
  return out;
}

void write_npz(const std::string& path, const NamedArrays& arrays) { write_file(path, encode_npz(arrays)); }

}  // namespace kiln::ir
