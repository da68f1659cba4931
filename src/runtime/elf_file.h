// Reads the section table of a 64-bit little-endian ELF file held in memory, without loading or
// running anything from it. Every offset and size is checked against the file's size: a
// truncated or corrupted file is a FormatError naming what lies beyond the end, never a crash.
#ifndef KILN_SRC_RUNTIME_ELF_FILE_H_
#define KILN_SRC_RUNTIME_ELF_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

struct ElfSection {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

class ElfFile {
 public:
  // Parses the header and section table of `bytes` (which must outlive this object). `path`
  // names the file in messages. Throws artifact::FormatError.
  ElfFile(std::string_view bytes, std::string path);

  uint16_t machine() const { return machine_; }
  // "x86_64", "aarch64", or "ELF machine N".
  std::string machine_name() const;
  uint16_t type() const { return type_; }

  const std::vector<ElfSection>& sections() const { return sections_; }
  // The section named `name`, or nullptr.
  const ElfSection* find(std::string_view name) const;
  // The file bytes of a section (empty for SHT_NOBITS).
  std::string_view contents(const ElfSection& section) const;

 private:
  std::string_view bytes_;
  std::string path_;
  uint16_t machine_ = 0;
  uint16_t type_ = 0;
  std::vector<ElfSection> sections_;
};

// The ELF machine of the running process ("x86_64"/"aarch64").
std::string host_arch();

}  // namespace kiln::runtime

#endif  // KILN_SRC_RUNTIME_ELF_FILE_H_
