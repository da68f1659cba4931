// The whole-model check of a tuning run's kernel records (issue 15): `kiln tune`'s last step.
//
//   tune_tasks(...);                                  // kernel records, each timed alone
//   ModelCheckReport c = check_kernel_records(graph, compile_options, tune_options, measurer);
//   // kiln compile --records: the kernels take their records only if c.kept (see below)
//
// Why: a kernel's best record is chosen by timing the kernel alone; inside the model, next to its
// neighbours' data and with the artifact's own weights, the chosen schedules have come out slower
// than the defaults (ResNet-50 on the 2-core Zen 3 VM: 4-8 % at 1 and 2 threads). This check
// times what the user will run -- the whole model with and without the kernel records -- and keeps
// the records only when they make the model faster, so that tuning never leaves a model slower
// than it found it.
//
// Contract:
//   - The decision is a graph-level choice point (pass/layer_choice.h) of kind "kernel_records"
//     (0: the default schedules, the point's default; 1: the kernels take their best records),
//     made by the compile driver after its passes. Its structure names every kernel call of the
//     optimized graph in order (driver::kernel_group_signature) with how many records of this
//     device the database holds for it: records added after the check (a resumed tuning run) make
//     it another point, so an old verdict never judges new records. Without a verdict for the
//     point (records from a tuning run without the check) the kernel records apply.
//   - check_kernel_records builds the model twice (layer choices from the records in both; kernel
//     records off, then on), measures [off, on, off again] in two batches like the layer tuner
//     (layer_tuner.h: "off" keeps its fastest pass, "on" its slower one, outputs compared) and adds
//     both as layer records (RecordKind::kLayer, task = the point's signature). Through
//     layer_choices_from_records "on" applies only when it beats "off" by more than
//     kLayerChoiceMinGain in both passes: the kernel records stay in use only when the whole model
//     is measurably faster with them.
//   - Nothing is measured (report.measured = false) when no kernel of the model has a record that
//     differs from its default schedule's, or when `options.records` does not exist.
#ifndef KILN_TUNE_MODEL_CHECK_H_
#define KILN_TUNE_MODEL_CHECK_H_

#include <string>

#include "kiln/codegen/target.h"
#include "kiln/driver/compile.h"
#include "kiln/ir/graph.h"
#include "kiln/pass/layer_choice.h"
#include "kiln/tune/measure.h"
#include "kiln/tune/records.h"
#include "kiln/tune/tuner.h"

namespace kiln::tune {

inline constexpr const char* kKernelRecordsKind = "kernel_records";

// The choice point of `pipeline_graph` (the compile passes' output) on `target`, with the record
// counts of `db` on `device` (see the contract).
pass::LayerChoicePoint kernel_records_point(const ir::Graph& pipeline_graph, const codegen::Target& target,
                                            const RecordDatabase& db, const std::string& device);

struct ModelCheckReport {
  bool measured = false;
  std::string why_not;                // when !measured
  double with_records_seconds = 0;    // whole model, kernel records on (its slower pass)
  double without_records_seconds = 0; // kernel records off (its fastest pass)
  bool kept = false;                  // what compile will do: kernel records applied
  std::string summary() const;
};

ModelCheckReport check_kernel_records(const ir::Graph& graph, const driver::CompileOptions& options,
                                      const TuneOptions& tune, Measurer& measurer);

}  // namespace kiln::tune

#endif  // KILN_TUNE_MODEL_CHECK_H_
