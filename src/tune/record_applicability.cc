// Which records apply: see include/kiln/tune/record_applicability.h.
#include "kiln/tune/record_applicability.h"

#include "kiln/support/fnv.h"
#include "kiln/version.h"

namespace kiln::tune {

std::string StaleRecords::note(const std::string& db_path) const {
  std::string text;
  for (const auto& [version, n] : by_version) {
    text += (text.empty() ? "" : "; ") + std::to_string(n) + " record(s) from kiln " + version;
  }
  return text + " in " + db_path +
         " ignored: the schedule templates changed; re-tune (kiln tune MODEL --records NEW.db)";
}

bool record_applies(const TuningRecord& record, const std::string& space_fingerprint) {
  if (!record.space.empty()) return record.space == space_fingerprint;
  return record.kiln_version == compiler_version();
}

std::optional<TuningRecord> best_applicable(const std::vector<TuningRecord>& records, RecordKind kind,
                                            const std::string& space_fingerprint, StaleRecords* stale,
                                            double min_gain) {
  std::optional<TuningRecord> best, best_default;
  for (const TuningRecord& r : records) {
    if (r.kind != kind) continue;
    if (!record_applies(r, space_fingerprint)) {
      if (stale != nullptr) ++stale->by_version[r.kiln_version];
      continue;
    }
    if (!r.ok || !(r.is_default || r.verified)) continue;
    if (!best || r.seconds < best->seconds) best = r;  // ties: the earlier record (insertion order)
    if (r.is_default && (!best_default || r.seconds < best_default->seconds)) best_default = r;
  }
  if (min_gain > 0 && best && best_default && !best->is_default &&
      !(best->seconds < best_default->seconds * (1.0 - min_gain))) {
    return best_default;
  }
  return best;
}

std::string layer_space_fingerprint(const pass::LayerChoicePoint& point) {
  std::string text = "layer=" + point.kind + ";alternatives=";
  for (int64_t v : point.alternatives) text += std::to_string(v) + ",";
  return fnv1a64_hex(text);
}

pass::LayerChoices layer_choices_from_records(const RecordDatabase& db, const std::string& device,
                                              StaleRecords* stale) {
  pass::LayerChoices choices;
  choices.lookup = [&db, device, stale](const pass::LayerChoicePoint& p) -> std::optional<int64_t> {
    const std::optional<TuningRecord> r =
        best_applicable(db.records(p.signature(), device), RecordKind::kLayer, layer_space_fingerprint(p), stale,
                        kLayerChoiceMinGain);
    if (!r) return std::nullopt;
    auto it = r->knobs.find(p.kind);
    if (it == r->knobs.end()) return std::nullopt;
    return it->second;
  };
  return choices;
}

}  // namespace kiln::tune
