// A loaded Kiln artifact (the runtime's side of docs/artifact.md).
//
// read_artifact() reads the FILE and checks it without loading or running any of its code:
// the whole-file checksum (before anything else is trusted), ELF structure and bounds, the metadata (format version first, then its checksum), optionally
// the compatibility with this process (architecture, runtime ABI, CPU features), the plan
// (checksum, then every id, size and offset), and the weights' checksum.
// load_module() does that with the compatibility check, then dlopen()s the library and resolves
// every kernel symbol and the weights. A problem is an artifact::FormatError whose message names
// the file, what is wrong and what to do.
#ifndef KILN_SRC_RUNTIME_MODULE_H_
#define KILN_SRC_RUNTIME_MODULE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/artifact_format.h"
#include "kiln/runtime/c_api.h"

namespace kiln::runtime {

using KernelFunction = int32_t (*)(const DLTensor* args, int32_t num_args);

struct ArtifactFile {
  std::string path;
  uint64_t file_size = 0;
  std::string elf_machine;  // "x86_64", "aarch64", ...
  uint64_t file_hash = 0;   // the verified whole-file checksum (kiln/runtime/artifact_checksum.h)
  artifact::Metadata meta;
  artifact::Plan plan;
  // The file's bytes by part (kiln inspect): executable sections (the kernels, and the few
  // instructions the linker adds), the three Kiln sections, and the rest (ELF headers, symbol and
  // relocation tables, padding, the checksum trailer).
  uint64_t code_bytes = 0, weights_bytes = 0, plan_bytes = 0, meta_bytes = 0;
};

// Reads and checks `path` (see above). With check_compatibility, an artifact this process cannot
// run is refused right after its metadata is read.
ArtifactFile read_artifact(const std::string& path, bool check_compatibility);

// The same checks on a file's bytes already in memory (`path` names it in messages; fuzz/).
ArtifactFile read_artifact_bytes(const std::string& bytes, const std::string& path, bool check_compatibility);

// Why this process cannot run an artifact with this metadata, or "" when it can.
std::string compatibility_problem(const artifact::Metadata& meta, const std::string& elf_machine,
                                  const std::string& path);

// Human-readable description of an artifact file (kiln inspect); never loads its code.
std::string describe_artifact(const std::string& path);

class LoadedModule {
 public:
  explicit LoadedModule(ArtifactFile file);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  const ArtifactFile& file() const { return file_; }
  const artifact::Metadata& meta() const { return file_.meta; }
  const artifact::Plan& plan() const { return file_.plan; }
  KernelFunction kernel(size_t i) const { return kernels_[i]; }
  const unsigned char* weights() const { return weights_; }

 private:
  ArtifactFile file_;
  void* handle_ = nullptr;
  std::vector<KernelFunction> kernels_;
  const unsigned char* weights_ = nullptr;
};

std::shared_ptr<const LoadedModule> load_module(const std::string& path);

}  // namespace kiln::runtime

#endif  // KILN_SRC_RUNTIME_MODULE_H_
