// ELF section table reader for artifact validation (see elf_file.h).
#include "elf_file.h"

#include <elf.h>

#include <cstring>

#include "kiln/runtime/artifact_format.h"

namespace kiln::runtime {

using artifact::FormatError;

ElfFile::ElfFile(std::string_view bytes, std::string path) : bytes_(bytes), path_(std::move(path)) {
  if (bytes_.size() < EI_NIDENT || std::memcmp(bytes_.data(), ELFMAG, SELFMAG) != 0) {
    throw FormatError(path_ + ": not an ELF shared library (bad magic); a Kiln artifact is the .so "
                              "that `kiln compile` writes");
  }
  if (static_cast<unsigned char>(bytes_[EI_CLASS]) != ELFCLASS64 ||
      static_cast<unsigned char>(bytes_[EI_DATA]) != ELFDATA2LSB) {
    throw FormatError(path_ + ": not a 64-bit little-endian ELF file (Kiln artifacts are)");
  }
  if (bytes_.size() < sizeof(Elf64_Ehdr)) {
    throw FormatError(path_ + ": truncated: the file (" + std::to_string(bytes_.size()) +
                      " bytes) ends inside the ELF header");
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes_.data(), sizeof eh);
  machine_ = eh.e_machine;
  type_ = eh.e_type;
  if (eh.e_shoff == 0 || eh.e_shnum == 0) {
    throw FormatError(path_ + ": the ELF file has no section table (was it stripped with sstrip?)");
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) {
    throw FormatError(path_ + ": unexpected ELF section header size " +
                      std::to_string(eh.e_shentsize));
  }
  const uint64_t table_end = eh.e_shoff + static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr);
  if (eh.e_shoff > bytes_.size() || table_end > bytes_.size()) {
    throw FormatError(path_ + ": truncated: the ELF section table ends at byte " +
                      std::to_string(table_end) + " but the file has " +
                      std::to_string(bytes_.size()) + " bytes");
  }
  std::vector<Elf64_Shdr> headers(eh.e_shnum);
  std::memcpy(headers.data(), bytes_.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  if (eh.e_shstrndx >= headers.size()) {
    throw FormatError(path_ + ": corrupted ELF header (section name table index out of range)");
  }
  const Elf64_Shdr& strtab = headers[eh.e_shstrndx];
  if (strtab.sh_offset > bytes_.size() || strtab.sh_size > bytes_.size() - strtab.sh_offset) {
    throw FormatError(path_ + ": truncated: the ELF section name table lies beyond the end of "
                              "the file");
  }
  std::string_view names = bytes_.substr(strtab.sh_offset, strtab.sh_size);
  for (const Elf64_Shdr& h : headers) {
    ElfSection s;
    if (h.sh_name < names.size()) {
      std::string_view rest = names.substr(h.sh_name);
      s.name = std::string(rest.substr(0, rest.find('\0')));
    }
    s.type = h.sh_type;
    s.flags = h.sh_flags;
    s.addr = h.sh_addr;
    s.offset = h.sh_offset;
    s.size = h.sh_size;
    if (s.type != SHT_NOBITS && s.type != SHT_NULL &&
        (s.offset > bytes_.size() || s.size > bytes_.size() - s.offset)) {
      throw FormatError(path_ + ": truncated: section " + s.name + " (bytes " +
                        std::to_string(s.offset) + ".." + std::to_string(s.offset + s.size) +
                        ") lies beyond the end of the file (" + std::to_string(bytes_.size()) +
                        " bytes)");
    }
    sections_.push_back(std::move(s));
  }
}

std::string ElfFile::machine_name() const {
  if (machine_ == EM_X86_64) return "x86_64";
  if (machine_ == EM_AARCH64) return "aarch64";
  return "ELF machine " + std::to_string(machine_);
}

const ElfSection* ElfFile::find(std::string_view name) const {
  for (const auto& s : sections_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string_view ElfFile::contents(const ElfSection& section) const {
  if (section.type == SHT_NOBITS) return {};
  return bytes_.substr(section.offset, section.size);
}

std::string host_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

}  // namespace kiln::runtime
