// The CPU features of the machine the runtime runs on, detected without LLVM: cpuid and xgetbv on
// x86-64 (a vector extension counts only when the OS also saves its registers: XCR0 must enable
// the SSE/AVX state for AVX and the opmask/ZMM state for AVX-512), getauxval(AT_HWCAP/HWCAP2) on
// AArch64. Names are LLVM's spelling (artifact::detectable_features lists them).
#ifndef KILN_SRC_RUNTIME_CPU_FEATURES_H_
#define KILN_SRC_RUNTIME_CPU_FEATURES_H_

#include <string>
#include <vector>

namespace kiln::runtime {

// Sorted feature names of this CPU. Computed once. $KILN_RUNTIME_HIDE_CPU_FEATURES (a comma
// list) removes features, so tests and users can see how an artifact fares on a smaller CPU.
const std::vector<std::string>& host_cpu_features();

// Features in `required` that this CPU lacks, in order.
std::vector<std::string> missing_cpu_features(const std::vector<std::string>& required);

}  // namespace kiln::runtime

#endif  // KILN_SRC_RUNTIME_CPU_FEATURES_H_
