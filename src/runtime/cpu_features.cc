// CPU feature detection for the artifact loader (see cpu_features.h).
#include "cpu_features.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace kiln::runtime {
namespace {

#if defined(__x86_64__)
uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

std::vector<std::string> detect() {
  std::vector<std::string> f;
  auto bit = [](uint32_t reg, int b) { return ((reg >> b) & 1u) != 0; };
  uint32_t a = 0, b = 0, c = 0, d = 0;
  const uint32_t max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return f;
  __cpuid(1, a, b, c, d);
  const uint32_t c1 = c, d1 = d;
  f.push_back("x87");
  if (bit(d1, 8)) f.push_back("cx8");
  if (bit(d1, 15)) f.push_back("cmov");
  if (bit(d1, 23)) f.push_back("mmx");
  if (bit(d1, 24)) f.push_back("fxsr");
  if (bit(d1, 25)) f.push_back("sse");
  if (bit(d1, 26)) f.push_back("sse2");
  if (bit(c1, 0)) f.push_back("sse3");
  if (bit(c1, 1)) f.push_back("pclmul");
  if (bit(c1, 9)) f.push_back("ssse3");
  if (bit(c1, 13)) f.push_back("cx16");
  if (bit(c1, 19)) f.push_back("sse4.1");
  if (bit(c1, 20)) f.push_back("sse4.2");
  if (bit(c1, 20)) f.push_back("crc32");
  if (bit(c1, 22)) f.push_back("movbe");
  if (bit(c1, 23)) f.push_back("popcnt");
  if (bit(c1, 25)) f.push_back("aes");
  if (bit(c1, 26)) f.push_back("xsave");
  if (bit(c1, 30)) f.push_back("rdrnd");
  // The OS must save the wider registers, else using them faults: XCR0 bits 1 (SSE) and 2 (AVX);
  // bits 5, 6, 7 (opmask, upper ZMM0-15, ZMM16-31) for AVX-512.
  const bool osxsave = bit(c1, 27);
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const bool os_avx = osxsave && (xcr0 & 0x6) == 0x6;
  const bool os_avx512 = os_avx && (xcr0 & 0xE0) == 0xE0;
  if (os_avx && bit(c1, 28)) f.push_back("avx");
  if (os_avx && bit(c1, 12)) f.push_back("fma");
  if (os_avx && bit(c1, 29)) f.push_back("f16c");
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    const uint32_t b7 = b, c7 = c, d7 = d;
    if (bit(b7, 3)) f.push_back("bmi");
    if (os_avx && bit(b7, 5)) f.push_back("avx2");
    if (bit(b7, 8)) f.push_back("bmi2");
    if (bit(b7, 18)) f.push_back("rdseed");
    if (bit(b7, 19)) f.push_back("adx");
    if (bit(b7, 29)) f.push_back("sha");
    if (os_avx && bit(c7, 8)) f.push_back("gfni");
    if (os_avx && bit(c7, 9)) f.push_back("vaes");
    if (os_avx && bit(c7, 10)) f.push_back("vpclmulqdq");
    if (os_avx512) {
      if (bit(b7, 16)) f.push_back("avx512f");
      if (bit(b7, 17)) f.push_back("avx512dq");
      if (bit(b7, 21)) f.push_back("avx512ifma");
      if (bit(b7, 28)) f.push_back("avx512cd");
      if (bit(b7, 30)) f.push_back("avx512bw");
      if (bit(b7, 31)) f.push_back("avx512vl");
      if (bit(c7, 1)) f.push_back("avx512vbmi");
      if (bit(c7, 6)) f.push_back("avx512vbmi2");
      if (bit(c7, 11)) f.push_back("avx512vnni");
      if (bit(c7, 12)) f.push_back("avx512bitalg");
      if (bit(c7, 14)) f.push_back("avx512vpopcntdq");
      if (bit(d7, 23)) f.push_back("avx512fp16");
    }
    __cpuid_count(7, 1, a, b, c, d);
    if (os_avx && bit(a, 4)) f.push_back("avxvnni");
    if (os_avx512 && bit(a, 5)) f.push_back("avx512bf16");
  }
  if (max_leaf >= 0xD && osxsave) {
    __cpuid_count(0xD, 1, a, b, c, d);
    if (bit(a, 0)) f.push_back("xsaveopt");
    if (bit(a, 1)) f.push_back("xsavec");
    if (bit(a, 3)) f.push_back("xsaves");
  }
  const uint32_t max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext >= 0x80000001u) {
    __cpuid(0x80000001u, a, b, c, d);
    if (bit(c, 0)) f.push_back("sahf");
    if (bit(c, 5)) f.push_back("lzcnt");
    if (bit(c, 6)) f.push_back("sse4a");
    if (bit(c, 8)) f.push_back("prfchw");
    if (os_avx && bit(c, 11)) f.push_back("xop");
    if (os_avx && bit(c, 16)) f.push_back("fma4");
  }
  return f;
}
#elif defined(__aarch64__)
std::vector<std::string> detect() {
  std::vector<std::string> f;
  const unsigned long hw = getauxval(AT_HWCAP);
  const unsigned long hw2 = getauxval(AT_HWCAP2);
  auto bit = [](unsigned long reg, int b) { return ((reg >> b) & 1ul) != 0; };
  if (bit(hw, 0)) f.push_back("fp-armv8");
  if (bit(hw, 1)) f.push_back("neon");
  if (bit(hw, 3)) f.push_back("aes");
  if (bit(hw, 6)) f.push_back("sha2");
  if (bit(hw, 7)) f.push_back("crc");
  if (bit(hw, 8)) f.push_back("lse");
  if (bit(hw, 9) && bit(hw, 10)) f.push_back("fullfp16");  // FPHP and ASIMDHP
  if (bit(hw, 12)) f.push_back("rdm");
  if (bit(hw, 20)) f.push_back("dotprod");
  if (bit(hw, 22)) f.push_back("sve");
  if (bit(hw2, 1)) f.push_back("sve2");
  if (bit(hw2, 13)) f.push_back("i8mm");
  if (bit(hw2, 14)) f.push_back("bf16");
  return f;
}
#else
std::vector<std::string> detect() { return {}; }
#endif

std::vector<std::string> compute() {
  std::vector<std::string> f = detect();
  if (const char* hide = std::getenv("KILN_RUNTIME_HIDE_CPU_FEATURES")) {
    std::string_view rest(hide);
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view name = rest.substr(0, comma);
      std::erase(f, std::string(name));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  std::sort(f.begin(), f.end());
  f.erase(std::unique(f.begin(), f.end()), f.end());
  return f;
}

}  // namespace

const std::vector<std::string>& host_cpu_features() {
  static const std::vector<std::string> features = compute();
  return features;
}

std::vector<std::string> missing_cpu_features(const std::vector<std::string>& required) {
  const auto& have = host_cpu_features();
  std::vector<std::string> missing;
  for (const auto& r : required) {
    if (!std::binary_search(have.begin(), have.end(), r)) missing.push_back(r);
  }
  return missing;
}

}  // namespace kiln::runtime
