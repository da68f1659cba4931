// Choosing and probing the linker for foreign-architecture artifacts (see cross_linker.h).
#include "driver/cross_linker.h"

#include <stdlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "driver/shell_command.h"
#include "kiln/driver/doctor.h"

namespace kiln::driver {
namespace {

namespace fs = std::filesystem;

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// ELF e_machine of the triple's architecture; 0 when Kiln does not know it.
uint16_t elf_machine_of(const std::string& llvm_triple) {
  if (starts_with(llvm_triple, "aarch64") || starts_with(llvm_triple, "arm64")) return 183;  // EM_AARCH64
  if (starts_with(llvm_triple, "x86_64")) return 62;                                         // EM_X86_64
  return 0;
}

std::string clang_flags(const std::string& llvm_triple) {
  return " --target=" + shell_quote(llvm_triple) + " -fuse-ld=lld -nostdlib";
}

}  // namespace

std::string gnu_triple(const std::string& llvm_triple) {
  std::string parts[4];
  int n = 0;
  size_t start = 0;
  while (n < 4) {
    const size_t dash = llvm_triple.find('-', start);
    parts[n++] = llvm_triple.substr(start, dash == std::string::npos ? std::string::npos : dash - start);
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  std::string arch = parts[0] == "arm64" ? "aarch64" : parts[0];
  if (n == 4 && (parts[1] == "unknown" || parts[1] == "pc" || parts[1] == "none")) {
    return arch + "-" + parts[2] + "-" + parts[3];
  }
  std::string out = arch;
  for (int i = 1; i < n; ++i) out += "-" + parts[i];
  return out;
}

CrossLinker find_cross_linker(const std::string& llvm_triple) {
  CrossLinker linker;
  linker.triple = llvm_triple;
  const char* kiln_cc = std::getenv("KILN_CC");
  if (kiln_cc != nullptr && *kiln_cc != '\0') {
    linker.command = kiln_cc;
    linker.origin = "$KILN_CC";
    const bool clang = fs::path(kiln_cc).filename().string().find("clang") != std::string::npos;
    linker.flags = clang ? clang_flags(llvm_triple) : " -lm";
    return linker;
  }
  const std::string gnu = find_executable(gnu_triple(llvm_triple) + "-gcc");
  if (!gnu.empty()) {
    linker.command = gnu;
    linker.origin = "GNU cross compiler";
    // Its own GNU ld (binutils-aarch64-linux-gnu): a cross gcc does not find ld.lld by -fuse-ld.
    linker.flags = " -lm";
    return linker;
  }
  const std::string clang = find_executable("clang");
  if (!clang.empty() && !find_executable("ld.lld").empty()) {
    linker.command = clang;
    linker.origin = "clang + ld.lld";
    linker.flags = clang_flags(llvm_triple);
  }
  return linker;
}

std::string cross_link_hint(const std::string& llvm_triple) {
  const std::string gnu = gnu_triple(llvm_triple);
  std::string hint = "install " + gnu + "-gcc";
  if (starts_with(gnu, "aarch64-linux-gnu")) {
    hint += " ('apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross', which scripts/install-deps.sh does)";
  }
  return hint + ", or clang and ld.lld, or set KILN_CC to a C compiler that links for " + llvm_triple;
}

std::string probe_cross_link(const CrossLinker& linker) {
  if (linker.command.empty()) return "no linker for " + linker.triple + " found";
  const char* tmp_env = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp_env && *tmp_env ? tmp_env : "/tmp") + "/kiln-cross-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return "cannot create a temporary directory from " + tmpl;
  const fs::path dir(tmpl);
  {
    std::ofstream src(dir / "probe.c");
    src << "int kiln_cross_probe(int x) { return x * 6; }\n";
  }
  const std::string so = (dir / "probe.so").string();
  // The probe is C source: a clang link gets the object from clang itself (same --target).
  std::string output;
  const int rc = run_capture(shell_quote(linker.command) + " -shared -fPIC -o " + shell_quote(so) + " " +
                                 shell_quote((dir / "probe.c").string()) + linker.flags,
                             &output);
  std::string error;
  if (rc != 0) {
    error = "'" + linker.command + " -shared' exited with " + std::to_string(rc) + ": " +
            output.substr(0, output.find('\n'));
  } else {
    std::ifstream in(so, std::ios::binary);
    unsigned char header[20] = {};
    in.read(reinterpret_cast<char*>(header), sizeof header);
    const uint16_t machine = static_cast<uint16_t>(header[18] | (header[19] << 8));
    const uint16_t expected = elf_machine_of(linker.triple);
    if (!in || header[0] != 0x7f || header[1] != 'E') {
      error = "it did not write an ELF shared object";
    } else if (expected != 0 && machine != expected) {
      error = "it wrote ELF machine " + std::to_string(machine) + ", not " + std::to_string(expected) +
              " (" + linker.triple + ")";
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return error;
}

}  // namespace kiln::driver
