// libFuzzer target: the artifact reader and validator (libkiln_runtime's read_artifact on bytes:
// whole-file checksum, ELF structure, metadata, plan, plan consistency; no dlopen) and the
// section decoders on their own (decode_metadata/decode_plan, reached past the checksums by
// feeding the bytes to them directly). Any bytes must give a result or an artifact::FormatError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/runtime/artifact_format.h"
#include "module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)kiln::runtime::read_artifact_bytes(bytes, "fuzz.so", /*check_compatibility=*/false);
  } catch (const kiln::artifact::FormatError&) {
  }
  // The decoders past their magic/version/hash: re-frame the input as a valid section.
  for (const char* magic : {kiln::artifact::kMetaMagic, kiln::artifact::kPlanMagic}) {
    std::string section(magic, 8);
    const uint32_t version = kiln::artifact::kFormatVersion;
    const uint64_t n = bytes.size();
    section.append(reinterpret_cast<const char*>(&version), 4);
    section.append(reinterpret_cast<const char*>(&n), 8);
    section += bytes;
    const uint64_t h = kiln::artifact::hash64(bytes.data(), bytes.size());
    section.append(reinterpret_cast<const char*>(&h), 8);
    try {
      if (magic == kiln::artifact::kMetaMagic) (void)kiln::artifact::decode_metadata(section, "meta");
      else (void)kiln::artifact::decode_plan(section, "plan");
    } catch (const kiln::artifact::FormatError&) {
    }
  }
  return 0;
}
