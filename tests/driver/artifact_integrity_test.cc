// The whole-file checksum (kiln/runtime/artifact_checksum.h): a byte changed anywhere in an
// artifact is refused with a clear error before dlopen. Flips one byte in every position class
// of a real artifact (ELF header, program headers, each section's first/middle/last byte, the
// section header table, the padding between them, each byte of the checksum trailer), truncates
// at each boundary and appends bytes; every mutant must be refused by kiln_module_load and by
// kiln_artifact_describe with a message saying the file is corrupted or truncated.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "artifact_test_util.h"
#include "kiln/runtime/artifact_checksum.h"
#include "kiln/runtime/c_api.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

// Byte offsets of a file, grouped by what they belong to.
std::map<std::string, std::vector<uint64_t>> position_classes(const std::string& b) {
  std::map<std::string, std::vector<uint64_t>> out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  for (uint64_t i = 0; i < sizeof eh; ++i) out["ELF header"].push_back(i);
  const uint64_t ph_end = eh.e_phoff + uint64_t{eh.e_phnum} * eh.e_phentsize;
  out["program headers"] = {eh.e_phoff, (eh.e_phoff + ph_end) / 2, ph_end - 1};
  const uint64_t sh_end = eh.e_shoff + uint64_t{eh.e_shnum} * eh.e_shentsize;
  out["section headers"] = {eh.e_shoff, (eh.e_shoff + sh_end) / 2, sh_end - 1};
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), b.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  const char* names = b.data() + sh[eh.e_shstrndx].sh_offset;
  std::vector<std::pair<uint64_t, uint64_t>> used = {{0, sizeof eh}, {eh.e_phoff, ph_end}, {eh.e_shoff, sh_end}};
  for (const auto& h : sh) {
    if (h.sh_type == SHT_NOBITS || h.sh_size == 0) continue;
    out["section " + std::string(names + h.sh_name)] = {h.sh_offset, h.sh_offset + h.sh_size / 2,
                                                        h.sh_offset + h.sh_size - 1};
    used.emplace_back(h.sh_offset, h.sh_offset + h.sh_size);
  }
  const uint64_t covered = b.size() - artifact::kFileSumBytes;
  std::sort(used.begin(), used.end());
  uint64_t at = 0;
  for (const auto& [begin, end] : used) {
    if (begin > at) out["padding"].push_back(at);  // the first byte of each gap
    at = std::max(at, end);
  }
  if (at < covered) out["padding"].push_back(at);
  for (uint64_t i = covered; i < b.size(); ++i) out["checksum trailer"].push_back(i);
  return out;
}

class ArtifactIntegrityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln-artifact-integrity-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    good_ = (dir_ / "good.so").string();
    write_test_artifact(good_);
    bytes_ = read_all(good_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `mutant`, requires both the loader and the describer to refuse it clearly.
  void expect_refused(const std::string& mutant, const std::string& what) {
    const std::string file = (dir_ / "mutant.so").string();
    write_all(file, mutant);
    KilnModule* m = nullptr;
    const int rc = kiln_module_load(file.c_str(), &m);
    ASSERT_NE(rc, 0) << what << ": the damaged artifact was loaded";
    const std::string message = kiln_get_last_error();
    bool clear = false;  // a file cut inside its ELF header is "not an ELF shared library"
    for (const char* word : {"corrupted", "truncated", "not an ELF", "not a 64-bit"}) {
      clear = clear || message.find(word) != std::string::npos;
    }
    EXPECT_TRUE(clear) << what << ": " << message;
    char* text = nullptr;
    EXPECT_NE(kiln_artifact_describe(file.c_str(), &text), 0) << what << ": kiln inspect accepted it";
    if (text != nullptr) kiln_free_text(text);
    ++mutants_;
  }

  fs::path dir_;
  std::string good_, bytes_;
  int mutants_ = 0;
};

TEST_F(ArtifactIntegrityTest, TrailerVerifiesAndInspectShowsIt) {
  const auto sum = artifact::read_file_checksum(bytes_);
  ASSERT_TRUE(sum.has_value());
  EXPECT_TRUE(sum->ok());
  EXPECT_EQ(sum->covered, bytes_.size() - artifact::kFileSumBytes);
  char* text = nullptr;
  ASSERT_EQ(kiln_artifact_describe(good_.c_str(), &text), 0) << kiln_get_last_error();
  const std::string description = text;
  kiln_free_text(text);
  EXPECT_NE(description.find("file checksum:"), std::string::npos) << description;
}

TEST_F(ArtifactIntegrityTest, EveryBytePositionClassFlipped) {
  const auto classes = position_classes(bytes_);
  for (const char* required : {"ELF header", "program headers", "section headers", "section .text",
                               "section .kiln.meta", "section .kiln.plan", "section .kiln.weights", "section .dynsym",
                               "padding", "checksum trailer"}) {
    EXPECT_TRUE(classes.count(required)) << "no byte class '" << required << "' in the test artifact";
  }
  for (const auto& [what, offsets] : classes) {
    for (uint64_t at : offsets) {
      for (unsigned char mask : {0x01, 0x80, 0xFF}) {
        std::string m = bytes_;
        m[at] = static_cast<char>(m[at] ^ mask);
        expect_refused(m, what + " byte " + std::to_string(at) + " ^ " + std::to_string(mask));
      }
    }
  }
  EXPECT_GT(mutants_, 300);
}

TEST_F(ArtifactIntegrityTest, TruncatedExtendedAndZeroed) {
  for (const auto& [what, offsets] : position_classes(bytes_)) {
    for (uint64_t at : offsets) {
      if (at > 0) expect_refused(bytes_.substr(0, at), "truncated at " + what + " byte " + std::to_string(at));
    }
  }
  expect_refused(bytes_ + std::string(1, '\0'), "one byte appended");
  expect_refused(bytes_ + bytes_.substr(bytes_.size() - artifact::kFileSumBytes), "trailer appended twice");
  const auto [off, size] = section_range(bytes_, ".text");
  std::string zeroed = bytes_;
  std::fill(zeroed.begin() + static_cast<std::ptrdiff_t>(off), zeroed.begin() + static_cast<std::ptrdiff_t>(off + size), '\0');
  expect_refused(zeroed, ".text zeroed");
}

}  // namespace
}  // namespace kiln::testing
