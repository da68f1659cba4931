// What the whole-model measurements of the layer tuner (layer_tuner.cc) and the kernel-records
// check (model_check.cc) share: their work directory, and how a model's two passes are judged.
#ifndef KILN_SRC_TUNE_WHOLE_MODEL_H_
#define KILN_SRC_TUNE_WHOLE_MODEL_H_

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/tune/measure.h"

namespace kiln::tune {

// The median of `v` (0 when empty).
double median_of(std::vector<double> v);

// `requested` (created), or when empty a fresh directory $TMPDIR/<prefix>-XXXXXX; *own says
// whether the caller made it and should remove it. UserError(kIO) when it cannot be created.
std::filesystem::path make_work_dir(const std::string& requested, const std::string& prefix, bool* own);

// The time a whole model measured in two passes (first, second: both ok) is credited with, each
// pass judged on its own: the default keeps its faster pass -- and the faster still of its closing
// re-runs `close_first` / `close_second` when given and ok -- an alternative its slower pass. So
// an alternative wins only by beating the default's good moment in both passes, not a load burst
// (on a shared 2-core VM one burst on the default once made 12 % "gains" of no effect).
double two_pass_seconds(const MeasureResult& first, const MeasureResult& second, bool is_default,
                        const MeasureResult* close_first = nullptr, const MeasureResult* close_second = nullptr);

}  // namespace kiln::tune

#endif  // KILN_SRC_TUNE_WHOLE_MODEL_H_
