// Small helpers shared by the whole-model measurements of the layer tuner (layer_tuner.cc) and the
// kernel-records check (model_check.cc).
#ifndef KILN_SRC_TUNE_WORK_DIR_H_
#define KILN_SRC_TUNE_WORK_DIR_H_

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::tune {

// The median of `v` (0 when empty).
double median_of(std::vector<double> v);

// `requested` (created), or when empty a fresh directory $TMPDIR/<prefix>-XXXXXX; *own says
// whether the caller made it and should remove it. UserError(kIO) when it cannot be created.
std::filesystem::path make_work_dir(const std::string& requested, const std::string& prefix, bool* own);

}  // namespace kiln::tune

#endif  // KILN_SRC_TUNE_WORK_DIR_H_
