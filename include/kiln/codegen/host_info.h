// What LLVM knows about this build and this machine: the LLVM version compiled into libkiln, how it
// was linked, the host CPU as LLVM names it, its features and the default target triple.
// The only header of these facts; LLVM's own headers stay inside src/codegen/llvm/.
#ifndef KILN_CODEGEN_HOST_INFO_H_
#define KILN_CODEGEN_HOST_INFO_H_

#include <string>
#include <vector>

namespace kiln::codegen {

struct HostInfo {
  std::string llvm_version;            // e.g. "19.1.7"
  bool llvm_static = false;            // LLVM linked statically into libkiln.so
  std::string cpu_name;                // sys::getHostCPUName(), e.g. "znver5"
  std::string default_triple;          // e.g. "x86_64-pc-linux-gnu"
  std::vector<std::string> features;   // enabled host features, sorted, e.g. "avx2", "avx512f"
  bool has_feature(const std::string& name) const;
};

// Queries LLVM once; cheap afterwards.
const HostInfo& host_info();

}  // namespace kiln::codegen

#endif  // KILN_CODEGEN_HOST_INFO_H_
