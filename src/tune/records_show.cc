// format_records / format_seconds: see include/kiln/tune/records_show.h.
#include "kiln/tune/records_show.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace kiln::tune {

namespace {

// Per-task summary of one device's records.
struct TaskRow {
  std::string task;
  std::string label;
  int64_t trials = 0;
  int64_t ok = 0;
  double default_seconds = -1;  // fastest ok baseline; < 0: none
};

// Groups `records` of one device by task, in first-recorded order.
std::vector<TaskRow> task_rows(const std::vector<const TuningRecord*>& records) {
  std::vector<TaskRow> rows;
  std::map<std::string, size_t> index;
  for (const TuningRecord* r : records) {
    auto [it, inserted] = index.emplace(r->task, rows.size());
    if (inserted) rows.push_back(TaskRow{r->task, r->task_label.empty() ? r->task : r->task_label});
    TaskRow& row = rows[it->second];
    ++row.trials;
    if (!r->ok) continue;
    ++row.ok;
    if (r->is_default && (row.default_seconds < 0 || r->seconds < row.default_seconds))
      row.default_seconds = r->seconds;
  }
  return rows;
}

// "1 record", "3 records".
std::string count_of(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string knobs_text(const std::map<std::string, int64_t>& knobs) {
  std::string text;
  for (const auto& [name, value] : knobs) text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return text.empty() ? "(defaults)" : text;
}

// Renders rows of cells as left-aligned columns two spaces apart.
std::string render_table(const std::vector<std::vector<std::string>>& cells) {
  std::vector<size_t> width;
  for (const auto& row : cells)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string device_table(const RecordDatabase& db, const std::string& device,
                         const std::vector<const TuningRecord*>& records) {
  std::vector<std::vector<std::string>> cells = {
      {"task", "trials", "ok/failed", "default", "best", "speedup", "verified", "best knobs"}};
  std::vector<TaskRow> rows = task_rows(records);
  int64_t tuned = 0;
  for (const TaskRow& row : rows) {
    std::optional<TuningRecord> best = db.best(row.task, device);
    if (best && !best->is_default) ++tuned;
    std::string speedup = "-";
    if (best && row.default_seconds > 0 && best->seconds > 0) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.2fx", row.default_seconds / best->seconds);
      speedup = text;
    }
    cells.push_back({row.label, std::to_string(row.trials),
                     std::to_string(row.ok) + "/" + std::to_string(row.trials - row.ok),
                     row.default_seconds >= 0 ? format_seconds(row.default_seconds) : "-",
                     best ? format_seconds(best->seconds) : "-", speedup,
                     !best ? "-" : best->is_default ? "default" : "yes", best ? knobs_text(best->knobs) : "-"});
  }
  return render_table(cells) + count_of(static_cast<int64_t>(rows.size()), "task") + ", " + std::to_string(tuned) +
         " tuned (a verified candidate is the best record)\n";
}

}  // namespace

std::string format_seconds(double seconds) {
  char text[32];
  if (seconds < 1e-3)
    std::snprintf(text, sizeof(text), "%.1f us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(text, sizeof(text), "%.2f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof(text), "%.3f s", seconds);
  return text;
}

std::string format_records(const RecordDatabase& db, const std::string& device, bool all_devices) {
  std::vector<TuningRecord> all = db.all();
  // Devices in first-recorded order, each with its records.
  std::vector<std::pair<std::string, std::vector<const TuningRecord*>>> devices;
  for (const TuningRecord& r : all) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const auto& d) { return d.first == r.device; });
    if (it == devices.end()) {
      devices.emplace_back(r.device, std::vector<const TuningRecord*>{});
      it = devices.end() - 1;
    }
    it->second.push_back(&r);
  }
  std::ostringstream out;
  out << db.path() << ": " << count_of(static_cast<int64_t>(all.size()), "record") << "\n";
  int64_t other_records = 0;
  int64_t other_devices = 0;
  bool shown = false;
  for (const auto& [key, records] : devices) {
    if (!all_devices && key != device) {
      other_records += static_cast<int64_t>(records.size());
      ++other_devices;
      continue;
    }
    shown = true;
    out << "\ndevice " << key << (key == device ? " (this device)" : "") << ": "
        << count_of(static_cast<int64_t>(records.size()), "record") << "\n"
        << device_table(db, key, records);
  }
  if (!shown) out << "\nno records for device " << device << "\n";
  if (other_records > 0)
    out << "\n"
        << count_of(other_records, "record") << " of " << count_of(other_devices, "other device")
        << " not shown (they never apply here; --device all lists them)\n";
  return out.str();
}

}  // namespace kiln::tune
