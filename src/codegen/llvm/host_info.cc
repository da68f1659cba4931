// Host facts from LLVM's TargetParser (see include/kiln/codegen/host_info.h).
#include "kiln/codegen/host_info.h"

#include <algorithm>

#include <llvm/Config/llvm-config.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/TargetParser/Host.h>

namespace kiln::codegen {

bool HostInfo::has_feature(const std::string& name) const {
  return std::binary_search(features.begin(), features.end(), name);
}

const HostInfo& host_info() {
  static const HostInfo info = [] {
    HostInfo h;
    h.llvm_version = LLVM_VERSION_STRING;
    h.llvm_static = KILN_LLVM_STATIC_LINK;
    h.cpu_name = llvm::sys::getHostCPUName().str();
    h.default_triple = llvm::sys::getDefaultTargetTriple();
    for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
      if (entry.getValue()) h.features.push_back(entry.getKey().str());
    }
    std::sort(h.features.begin(), h.features.end());
    return h;
  }();
  return info;
}

}  // namespace kiln::codegen
