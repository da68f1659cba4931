// Code-generation targets, named by a string in TVM's spirit and parsed into the facts that
// schedules and the code generator need.
//
//   "llvm"                                        the host: its CPU name AND its feature string
//   "llvm -mcpu=native"                           the same, spelled out
//   "llvm -mcpu=znver4"                           a named CPU (features implied by the CPU)
//   "llvm -mattr=+avx2,+fma"                      host triple, generic CPU, these features
//   "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1"   cross-compilation (object output only)
//   "llvm -vector-width=256"                      the host, with 256-bit vectors in the schedules
//
// -vector-width=W (128, 256 or 512) sets the SIMD width that schedules and the code generator
// plan for; the default is the widest the features give. Below it, code uses fewer lanes (e.g.
// AVX-512 instructions on ymm registers); above it, LLVM splits each vector into native ones,
// which is slow but runs the schedules of a wider machine here (tests of AVX-512 schedules on an
// AVX2 host).
//
// A CPU name with an empty feature string makes LLVM emit SSE-only x86 code, so the host target
// always carries the host's full feature string (sys::getHostCPUFeatures). Malformed strings,
// unknown CPUs, unknown features and unknown triples are UserErrors that name the fix.
// LLVM's headers stay in src/codegen/llvm/; this header is plain C++.
#ifndef KILN_CODEGEN_TARGET_H_
#define KILN_CODEGEN_TARGET_H_

#include <string>
#include <string_view>
#include <vector>

namespace kiln::codegen {

struct Target {
  std::string triple;       // normalized LLVM triple, e.g. "x86_64-unknown-linux-gnu"
  std::string cpu;          // LLVM CPU name, e.g. "znver3", "neoverse-v1", "generic"
  std::string features;     // LLVM feature string, e.g. "+avx2,+fma,-avx512f" (may be empty)
  int vector_bits = 128;    // SIMD width schedules and codegen use (128/256/512; -vector-width)
  int native_vector_bits = 128;  // the widest SIMD register the features give
  int num_vector_regs = 16; // SIMD registers schedules plan for (16 for AVX2, 32 for AVX-512 / NEON
                            // or with -vector-width=512)
  std::vector<std::string> enabled_features;  // every feature the CPU + feature string enable, sorted

  // True when `name` (LLVM spelling, without '+', e.g. "avx512f", "fma", "neon") is enabled.
  bool has_feature(std::string_view name) const;
  // Lanes of one native vector for elements of `element_bits` bits (e.g. 8 for f32 on AVX2).
  int vector_lanes(int element_bits) const { return vector_bits / element_bits; }
  bool is_x86_64() const;
  bool is_aarch64() const;
  // Canonical string: "llvm -mtriple=... -mcpu=... [-mattr=...]"; parse_target(str()) gives back
  // an equal Target.
  std::string str() const;
};

// Parses a target string (see the header comment). Throws UserError(kInvalidArgument) naming the
// bad part and the fix.
Target parse_target(std::string_view text);

// The machine this process runs on (same as parse_target("llvm")). Computed once.
const Target& host_target();

// Features that `target` enables and this machine lacks (empty when code for `target` can run
// here). A different architecture reports its triple as the one missing "feature".
std::vector<std::string> missing_host_features(const Target& target);

}  // namespace kiln::codegen

#endif  // KILN_CODEGEN_TARGET_H_
