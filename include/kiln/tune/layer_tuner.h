// Graph-level tuning (issue 15): settles the passes' layer choice points (pass/layer_choice.h:
// Winograd or direct per 3x3 conv, a conv's output-channel block) by measuring the whole model.
//
//   LayerTuneReport r = tune_layer_choices(graph, compile_options, tune_options, measurer);
//   // then: pass::LayerChoices c = layer_choices_from_records(db, device, &stale);
//   //       compile_options.layer_choices = &c; extract_tasks(graph, compile_options) ...
//
// Contract:
//   - The points are those the compile pipeline meets for `options` (same target, -O level,
//     input shapes); points with the same layer structure are one point (one decision for all
//     such layers).
//   - Each alternative is measured as what it really costs: the WHOLE model compiled with only
//     that point flipped (every other point at its default, default kernel schedules), so its
//     layout transforms, Winograd transforms and the neighbours' changed input blocks are all in
//     the time. Per point, the default model, each alternative and the default again are
//     measured in one batch, then once more in a second batch; each batch is judged on its own:
//     an alternative keeps the slower of its two medians, the default the fastest of its four
//     (deliberately conservative: on a noisy machine a choice flips only when it beats the
//     default's good moment in both batches, not a load burst). An alternative whose outputs do
//     not match the default model's (outputs_match, tuner.h) is recorded unverified and never
//     applied.
//   - The points are settled heaviest first (the layer's multiply-adds x the layers sharing the
//     point), and the report lists them in that order.
//   - Every measurement is a layer record (RecordKind::kLayer; task = the point's signature,
//     knobs = {kind: value}, space = layer_space_fingerprint) in options.records, added at once.
//     A point whose alternatives all have applicable records of this device is not measured again
//     (resume); without options.resume, any such record is a UserError, as in tune_tasks.
//   - Stops before a point once options.time_budget_seconds (if > 0) has passed.
#ifndef KILN_TUNE_LAYER_TUNER_H_
#define KILN_TUNE_LAYER_TUNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/driver/compile.h"
#include "kiln/ir/graph.h"
#include "kiln/tune/measure.h"
#include "kiln/tune/tuner.h"

namespace kiln::tune {

struct LayerOutcome {
  std::string signature, label, kind;
  int64_t default_value = 0, best_value = 0;
  double default_seconds = 0, best_seconds = 0;  // whole-model times; 0: not measured
  int64_t alternatives = 0;
};

struct LayerTuneReport {
  std::vector<LayerOutcome> points;
  int64_t measured_now = 0, failed_now = 0;
  double seconds = 0;
  std::string summary() const;
};

LayerTuneReport tune_layer_choices(const ir::Graph& graph, const driver::CompileOptions& options,
                                   const TuneOptions& tune, Measurer& measurer);

}  // namespace kiln::tune

#endif  // KILN_TUNE_LAYER_TUNER_H_
