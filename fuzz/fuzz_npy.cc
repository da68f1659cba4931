// libFuzzer target: the .npy reader (kiln::ir::parse_npy). Any bytes must give an NDArray or a
// kiln::UserError; nothing else (no crash, no other exception, no leak, no giant allocation:
// a header whose shape asks for more than the bytes present is refused before allocating).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/ir/npy.h"
#include "kiln/support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    kiln::ir::NDArray a = kiln::ir::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    (void)a.nbytes();
  } catch (const kiln::UserError&) {
  }
  return 0;
}
