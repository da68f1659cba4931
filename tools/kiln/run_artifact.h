// `kiln run ARTIFACT.so ...`: runs a compiled artifact through libkiln_runtime (the .onnx path of
// `kiln run`, in run_command.cc, runs the reference executor instead; it dispatches here when the
// model file is an ELF shared library).
#ifndef KILN_TOOLS_KILN_RUN_ARTIFACT_H_
#define KILN_TOOLS_KILN_RUN_ARTIFACT_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace kiln::cli {

struct RunArtifactOptions {
  std::string artifact;
  std::vector<std::string> inputs;   // NAME=FILE.npy
  std::vector<std::string> outputs;  // FILE.npy per output, in order
  std::string output_dir;            // or DIR/<output name>.npy
  int repeat = 1;                    // timed runs
  int warmup = 0;                    // untimed runs before them
  int threads = -1;                  // -1: KILN_NUM_THREADS / one per core
  bool profile = false;              // per-kernel table over the timed runs
  std::string fill;                  // "": no --fill; else random|zeros|ones for inputs not given
  uint64_t seed = 0;                 // of --fill random
  int print_top = 0;                 // > 0: print each output's K largest entries
  std::string output_npz;            // every output in one .npz
  std::string trace;                 // Chrome trace-event JSON of the timed runs
};

// True when `path` starts with the ELF magic (an artifact, not an ONNX model).
bool is_artifact_file(const std::string& path);

// Loads, runs and reports; throws kiln::UserError for anything the user can fix. With no --input
// at all, every input is made up (--fill, default random; run_io.h); with some, --fill makes up
// the rest.
void run_artifact(const RunArtifactOptions& options, std::ostream& out);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_RUN_ARTIFACT_H_
