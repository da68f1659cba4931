// The tuning-records database (issue 15): every measurement `kiln tune` makes, in one SQLite file.
//
//   auto db = RecordDatabase::open("resnet50.db", RecordDatabase::Mode::kCreate);
//   db.add(record);                                  // durable when add() returns
//   std::optional<TuningRecord> r = db.best(task_signature, DeviceKey::of(target).str());
//
// Contract:
//   - One file, safe to interrupt: each add() is its own committed transaction (WAL journal), so a
//     tuner killed at any point loses nothing already added; reopening resumes.
//   - Records are keyed by the task signature (TuningTask::signature, stable across runs and
//     machines) AND the device key (the target's triple, CPU name and enabled features): a record
//     never applies to another CPU. Each record carries the Kiln version that measured it.
//   - best() is the fastest record that ran (ok) and is either the default schedule's baseline or
//     was checked against it (verified). Records of another device or an unknown knob set are
//     kept, never applied to the wrong machine.
//   - A file that is not a Kiln records database, or is damaged, is a UserError naming the file,
//     the reason and the fix -- never a crash, never silently emptied.
#ifndef KILN_TUNE_RECORDS_H_
#define KILN_TUNE_RECORDS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/codegen/target.h"

namespace kiln::tune {

// Which machine a measurement belongs to.
struct DeviceKey {
  std::string triple;    // normalized LLVM triple
  std::string cpu;       // LLVM CPU name ("znver3")
  std::string features;  // the target's enabled features, sorted, joined by ','
  static DeviceKey of(const codegen::Target& target);
  std::string str() const;  // "x86_64-unknown-linux-gnu znver3 avx,avx2,..."
};

// What a record tunes: a kernel's schedule knobs (task = the kernel's signature, task.h), or a
// graph-level layer choice (task = pass::LayerChoicePoint::signature, knobs = {kind: value}).
enum class RecordKind { kKernel, kLayer };

struct TuningRecord {
  std::string task;        // TuningTask::signature
  std::string task_label;  // readable, e.g. "conv2d+add+relu f32[1,64,56,56]"
  std::string device;      // DeviceKey::str()
  std::string kiln_version;
  std::map<std::string, int64_t> knobs;  // topi::Knobs::values()
  bool ok = false;          // built and ran within the timeout
  std::string error;        // why not, when !ok
  double seconds = 0;       // median run time after outlier rejection, when ok
  bool is_default = false;  // the default schedule's baseline measurement
  bool verified = false;    // outputs matched the default schedule's outputs
  int64_t created_unix = 0; // 0: add() fills in the current time
  RecordKind kind = RecordKind::kKernel;
  // Fingerprint of the search space the record was measured in (kernel: the template and its
  // knobs' value sets, topi::knob_space_fingerprint; layer: the alternatives). "" = unknown
  // (records of a schema-1 file): such a record applies only in the Kiln version that made it.
  std::string space;
};

class RecordDatabase {
 public:
  enum class Mode { kReadOnly, kCreate /* open or create, read-write */ };
  // UserError(kNotFound) for a missing file in kReadOnly; UserError(kParse) for a file that is not
  // a Kiln records database or is damaged (names the file and says to delete or re-tune);
  // UserError(kIncompatible) for a newer schema version.
  static RecordDatabase open(const std::string& path, Mode mode);
  RecordDatabase(RecordDatabase&&) noexcept;
  RecordDatabase& operator=(RecordDatabase&&) noexcept;
  ~RecordDatabase();

  const std::string& path() const;
  void add(const TuningRecord& record);  // committed before it returns
  // The tuner's re-timing of a task's default schedule beside a confirmed candidate (tuner.h): the
  // default's kernel record of `task` on `device` in search space `space` (ok, is_default) takes
  // `seconds` when that is lower. A default first measured in one of the machine's slow moments
  // then no longer makes every candidate look faster than it is. Committed before it returns.
  void lower_default_seconds(const std::string& task, const std::string& device, const std::string& space, double seconds);
  std::vector<TuningRecord> records(const std::string& task, const std::string& device) const;
  std::optional<TuningRecord> best(const std::string& task, const std::string& device) const;
  std::vector<TuningRecord> all() const;  // every record, in insertion order
  // How many records belong to devices other than `device` (to tell the user why they are unused).
  int64_t count_other_devices(const std::string& device) const;

 private:
  struct Impl;
  explicit RecordDatabase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `kiln tune --merge a.db b.db -o c.db`: every record of the inputs, duplicates (same task,
// device, knobs and time) dropped. Returns the number of records written.
int64_t merge_databases(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace kiln::tune

#endif  // KILN_TUNE_RECORDS_H_
