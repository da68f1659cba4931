// RecordDatabase (include/kiln/tune/records.h) over the SQLite store of records_store.h, and
// DeviceKey. One connection per RecordDatabase, guarded by a mutex so the tuner may add from
// several threads; other processes may read or write the same file at the same time (SQLite's
// locking, a 10 s busy timeout).
#include <mutex>

#include "kiln/tune/records.h"
#include "tune/records_store.h"

namespace kiln::tune {

DeviceKey DeviceKey::of(const codegen::Target& target) {
  DeviceKey key;
  key.triple = target.triple;
  key.cpu = target.cpu;
  for (const std::string& f : target.enabled_features) {  // already sorted (target.h)
    if (!key.features.empty()) key.features += ',';
    key.features += f;
  }
  return key;
}

std::string DeviceKey::str() const { return triple + " " + cpu + " " + features; }

struct RecordDatabase::Impl {
  std::string path;
  bool read_only;
  SqliteDb db;
  mutable std::mutex mutex;
  ~Impl() {
    if (!read_only) settle_records_store(db);
  }
};

RecordDatabase::RecordDatabase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RecordDatabase::RecordDatabase(RecordDatabase&&) noexcept = default;
RecordDatabase& RecordDatabase::operator=(RecordDatabase&&) noexcept = default;
RecordDatabase::~RecordDatabase() = default;

RecordDatabase RecordDatabase::open(const std::string& path, Mode mode) {
  SqliteDb db = open_records_store(path, mode == Mode::kReadOnly);
  return RecordDatabase(std::unique_ptr<Impl>(new Impl{path, mode == Mode::kReadOnly, std::move(db), {}}));
}

const std::string& RecordDatabase::path() const { return impl_->path; }

void RecordDatabase::add(const TuningRecord& record) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  try {
    SqliteStatement insert = prepare_insert_record(impl_->db);
    insert_record(insert, record);  // autocommit: one durable transaction per record
  } catch (const SqliteError& e) {
    throw_records_error(impl_->path, e);
  }
}

void RecordDatabase::lower_default_seconds(const std::string& task, const std::string& device, const std::string& space,
                                           double seconds) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  try {
    SqliteStatement update = impl_->db.prepare(
        "UPDATE records SET seconds = ? WHERE task = ? AND device = ? AND space = ? AND kind = 'kernel' AND is_default = 1 "
        "AND ok = 1 AND seconds > ?");
    update.bind_double(1, seconds);
    update.bind_text(2, task);
    update.bind_text(3, device);
    update.bind_text(4, space);
    update.bind_double(5, seconds);
    update.step();
  } catch (const SqliteError& e) {
    throw_records_error(impl_->path, e);
  }
}

std::vector<TuningRecord> RecordDatabase::records(const std::string& task, const std::string& device) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return select_records(impl_->db, impl_->path, "task = ? AND device = ?", {task, device}, "id");
}

std::optional<TuningRecord> RecordDatabase::best(const std::string& task, const std::string& device) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<TuningRecord> r =
      select_records(impl_->db, impl_->path, "task = ? AND device = ? AND ok = 1 AND (is_default = 1 OR verified = 1)",
                     {task, device}, "seconds, id", 1);
  if (r.empty()) return std::nullopt;
  return std::move(r.front());
}

std::vector<TuningRecord> RecordDatabase::all() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return select_records(impl_->db, impl_->path, "", {}, "id");
}

int64_t RecordDatabase::count_other_devices(const std::string& device) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  try {
    SqliteStatement s = impl_->db.prepare("SELECT count(*) FROM records WHERE device != ?");
    s.bind_text(1, device);
    return s.step() ? s.column_int64(0) : 0;
  } catch (const SqliteError& e) {
    throw_records_error(impl_->path, e);
  }
}

}  // namespace kiln::tune
