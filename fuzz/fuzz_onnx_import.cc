// libFuzzer target: the ONNX importer (kiln::frontend::import_onnx_bytes). Any bytes must either
// import into a graph that the IR verifier accepts, or be refused with a kiln::UserError; nothing
// else: no crash, no InternalError (a KILN_ICHECK reached by a bad model is a missing UserError),
// no other exception, no leak, no giant allocation (tensors are capped at
// $KILN_MAX_TENSOR_BYTES, set low here so that a model asking for more is refused, not allocated).
// External data is looked up in an empty directory of its own: nothing outside it may be read.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/frontend/onnx.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"

namespace {
std::string g_model_dir;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KILN_MAX_TENSOR_BYTES", "67108864", /*overwrite=*/0);  // 64 MiB per tensor
  char dir_template[] = "/tmp/kiln-fuzz-onnx-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    std::perror("fuzz_onnx_import: mkdtemp");
    std::abort();
  }
  g_model_dir = dir;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    kiln::ir::Graph graph = kiln::frontend::import_onnx_bytes(bytes, g_model_dir, {}, "fuzz.onnx");
    const std::vector<std::string> problems = kiln::ir::verify_graph(graph);
    if (!problems.empty()) {
      std::fprintf(stderr, "fuzz_onnx_import: the importer returned a graph the verifier rejects:\n");
      for (const std::string& p : problems) std::fprintf(stderr, "  %s\n", p.c_str());
      std::abort();
    }
  } catch (const kiln::UserError&) {
  }
  return 0;
}
