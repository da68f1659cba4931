// Which tuning records a compile (or a resumed tuning run) may use (issue 15): records of this
// device whose search space is the one this Kiln version has.
//
//   StaleRecords stale;
//   std::optional<TuningRecord> r = best_applicable(db.records(sig, device), fingerprint, &stale);
//   if (!stale.empty()) log(stale.note(db.path()));
//
// Contract:
//   - A record applies when its `space` equals the fingerprint of the task's search space now
//     (kernel: topi::knob_space_fingerprint -- template, knob names and value sets; layer choice:
//     layer_space_fingerprint -- the alternatives). A record of unknown space (a schema-1 file)
//     applies only when its kiln_version is this Kiln's. This is what AutoTVM/MetaSchedule users
//     expect: a record means "this schedule, measured in this search space"; once the templates
//     change, its knobs may mean another schedule, so it is ignored and counted, never applied.
//   - best_applicable is the fastest applicable record that ran and is the default or verified
//     (RecordDatabase::best's rule); every record of the right kind that does not apply is counted
//     in `stale` by its Kiln version.
//   - With min_gain > 0, a record that is not the default wins only when it is faster than the
//     fastest applicable default record by more than that fraction; otherwise that default record
//     is the answer (no default record: the fastest, as before).
//   - layer_choices_from_records gives the compile pipeline's lookup (pass/layer_choice.h) over a
//     database: each point's best applicable layer record of this device, with
//     kLayerChoiceMinGain: an alternative is whole-model timed, and medians of one model swing by
//     a few percent between batches on a shared machine (docs/tuning.md, "ResNet-50 on a quiet
//     host": every recorded winner there was within 1 % of the default), so a smaller win is
//     noise, and applying it changes the graph for nothing.
#ifndef KILN_TUNE_RECORD_APPLICABILITY_H_
#define KILN_TUNE_RECORD_APPLICABILITY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/pass/layer_choice.h"
#include "kiln/tune/records.h"

namespace kiln::tune {

struct StaleRecords {
  std::map<std::string, int64_t> by_version;  // kiln_version -> records ignored
  bool empty() const { return by_version.empty(); }
  // "12 records from kiln 0.0.9 in F.db ignored: the schedule templates changed; re-tune (kiln tune ...)"
  std::string note(const std::string& db_path) const;
};

bool record_applies(const TuningRecord& record, const std::string& space_fingerprint);

std::optional<TuningRecord> best_applicable(const std::vector<TuningRecord>& records, RecordKind kind,
                                            const std::string& space_fingerprint, StaleRecords* stale,
                                            double min_gain = 0.0);

// The least whole-model gain for which a layer alternative replaces the default (see above).
inline constexpr double kLayerChoiceMinGain = 0.02;

// The fingerprint of a layer choice point's alternatives (its kind and values).
std::string layer_space_fingerprint(const pass::LayerChoicePoint& point);

// A lookup over `db`'s layer records of `device` (db and stale must outlive the result's use).
pass::LayerChoices layer_choices_from_records(const RecordDatabase& db, const std::string& device,
                                              StaleRecords* stale);

}  // namespace kiln::tune

#endif  // KILN_TUNE_RECORD_APPLICABILITY_H_
