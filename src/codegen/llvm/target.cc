// Target strings → kiln::codegen::Target (see include/kiln/codegen/target.h). CPU and feature
// names are checked against the LLVM back end's own tables, so a typo is an error here rather
// than LLVM's "(ignoring feature)" warning and silently slower code.
#include "kiln/codegen/target.h"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "codegen/llvm/llvm_support.h"
#include "kiln/support/error.h"

namespace kiln::codegen {
namespace {

constexpr const char* kTargetExamples =
    "write e.g. 'llvm', 'llvm -mcpu=native', 'llvm -mcpu=znver4', 'llvm -mattr=+avx2,+fma' or "
    "'llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1'";

[[noreturn]] void bad_target(std::string_view text, const std::string& reason,
                             const std::string& hint = kTargetExamples) {
  throw UserError(UserErrorKind::kInvalidArgument, "target '" + std::string(text) + "'", reason,
                  hint);
}

std::vector<std::string> split_ws(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  std::string tok;
  while (in >> tok) out.push_back(tok);
  return out;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

// The host's feature string with every feature LLVM reports, enabled (+) or not (-).
std::string host_feature_string() {
  std::vector<std::string> items;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    std::string item(1, entry.getValue() ? '+' : '-');
    item += entry.getKey().str();
    items.push_back(std::move(item));
  }
  std::sort(items.begin(), items.end());
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

bool known_feature(const llvm::MCSubtargetInfo& sti, const std::string& name) {
  for (const auto& kv : sti.getAllProcessorFeatures()) {
    if (name == kv.Key) return true;
  }
  return false;
}

}  // namespace

bool Target::has_feature(std::string_view name) const {
  return std::binary_search(enabled_features.begin(), enabled_features.end(), std::string(name));
}

bool Target::is_x86_64() const { return llvm::Triple(triple).getArch() == llvm::Triple::x86_64; }

bool Target::is_aarch64() const { return llvm::Triple(triple).isAArch64(); }

std::string Target::str() const {
  std::string out = "llvm -mtriple=" + triple + " -mcpu=" + cpu;
  if (!features.empty()) out += " -mattr=" + features;
  if (vector_bits != native_vector_bits) out += " -vector-width=" + std::to_string(vector_bits);
  return out;
}

Target parse_target(std::string_view text) {
  llvm_detail::initialize_llvm_targets();
  const std::vector<std::string> tokens = split_ws(text);
  if (tokens.empty() || tokens[0] != "llvm") {
    bad_target(text, "a target string starts with the target kind 'llvm' (the only kind Kiln has)");
  }
  std::map<std::string, std::string> options;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    const size_t eq = tok.find('=');
    if (tok.size() < 2 || tok[0] != '-' || eq == std::string::npos) {
      bad_target(text, "option '" + tok + "' is not of the form -name=value");
    }
    std::string key = tok.substr(1, eq - 1);
    std::string value = tok.substr(eq + 1);
    if (key != "mcpu" && key != "mattr" && key != "mtriple" && key != "vector-width") {
      bad_target(text, "unknown option '-" + key + "'",
                 "the options are -mtriple=<triple>, -mcpu=<cpu|native>, -mattr=<+f,-g,...> and "
                 "-vector-width=<128|256|512>");
    }
    if (value.empty()) bad_target(text, "option '-" + key + "' has an empty value");
    if (!options.emplace(key, value).second) {
      bad_target(text, "option '-" + key + "' is given twice", "give each option once");
    }
  }

  const llvm::Triple host_triple(llvm::sys::getProcessTriple());
  const bool triple_given = options.count("mtriple") > 0;
  Target t;
  t.triple = triple_given ? llvm::Triple::normalize(options["mtriple"]) : host_triple.str();
  const llvm::Triple triple(t.triple);
  const llvm::Target& backend = llvm_detail::lookup_llvm_target(t.triple, "target '" + std::string(text) + "'");
  const bool host_arch = triple.getArch() == host_triple.getArch();

  std::string cpu;
  if (options.count("mcpu")) {
    cpu = options["mcpu"];
  } else {
    cpu = (triple_given || options.count("mattr")) ? "generic" : "native";
  }
  std::string features;
  if (cpu == "native") {
    if (!host_arch) {
      bad_target(text, "-mcpu=native names this machine's CPU, which cannot run " + t.triple,
                 "name the CPU of the target machine, e.g. -mcpu=neoverse-v1 for AArch64");
    }
    cpu = llvm::sys::getHostCPUName().str();
    features = host_feature_string();
  }

  // Check the CPU and each -mattr feature against the back end's tables.
  std::unique_ptr<llvm::MCSubtargetInfo> generic_sti(
      backend.createMCSubtargetInfo(t.triple, "generic", ""));
  if (cpu != "generic" && !generic_sti->isCPUStringValid(cpu)) {
    bad_target(text, "'" + cpu + "' is not a CPU LLVM knows for " + t.triple,
               "check the spelling; 'llc-19 -mtriple=" + t.triple +
                   " -mcpu=help' lists the CPUs, and -mcpu=native picks this machine's");
  }
  if (options.count("mattr")) {
    for (const std::string& item : split_commas(options["mattr"])) {
      if (item.size() < 2 || (item[0] != '+' && item[0] != '-')) {
        bad_target(text, "feature '" + item + "' in -mattr must start with '+' or '-'",
                   "write e.g. -mattr=+avx2,+fma,-avx512f");
      }
      if (!known_feature(*generic_sti, item.substr(1))) {
        bad_target(text, "'" + item.substr(1) + "' is not a feature LLVM knows for " + t.triple,
                   "check the spelling; 'llc-19 -mtriple=" + t.triple +
                       " -mattr=help' lists the features");
      }
      features += (features.empty() ? "" : ",") + item;
    }
  }
  t.cpu = cpu;
  t.features = features;

  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      backend.createMCSubtargetInfo(t.triple, t.cpu, t.features));
  for (const auto& kv : sti->getAllProcessorFeatures()) {
    if (sti->getFeatureBits().test(kv.Value)) t.enabled_features.emplace_back(kv.Key);
  }
  std::sort(t.enabled_features.begin(), t.enabled_features.end());

  const bool avx512 = triple.getArch() == llvm::Triple::x86_64 && t.has_feature("avx512f");
  if (triple.getArch() == llvm::Triple::x86_64) {
    t.native_vector_bits = avx512 ? 512 : (t.has_feature("avx") ? 256 : 128);
  } else {
    t.native_vector_bits = 128;  // NEON; SVE code is not generated (its width is only known at run time)
  }
  t.vector_bits = t.native_vector_bits;
  if (options.count("vector-width")) {
    const std::string& w = options["vector-width"];
    if (w != "128" && w != "256" && w != "512") {
      bad_target(text, "-vector-width=" + w + " is not one of 128, 256 and 512",
                 "write e.g. -vector-width=256 (AVX-512 code with 256-bit vectors)");
    }
    t.vector_bits = std::stoi(w);
  }
  // AVX-512 (any width) and AArch64 have 32 registers; schedules for 512-bit vectors on a
  // narrower machine plan for AVX-512's register file too (each vector is then split by LLVM).
  const bool x86 = triple.getArch() == llvm::Triple::x86_64;
  t.num_vector_regs = (!x86 || avx512 || t.vector_bits == 512) ? 32 : 16;
  return t;
}

const Target& host_target() {
  static const Target target = parse_target("llvm");
  return target;
}

std::vector<std::string> missing_host_features(const Target& target) {
  const llvm::Triple host_triple(llvm::sys::getProcessTriple());
  if (llvm::Triple(target.triple).getArch() != host_triple.getArch()) return {target.triple};
  // Only the ISA features the host reports (getHostCPUFeatures) count: LLVM's per-CPU tuning
  // flags are features too, and differ between CPUs without changing what can run.
  const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> missing;
  for (const std::string& f : target.enabled_features) {
    auto it = host.find(f);
    if (it != host.end() && !it->getValue()) missing.push_back(f);
  }
  return missing;
}

}  // namespace kiln::codegen
