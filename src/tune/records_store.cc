// The records database's schema, validation on open, and record (de)serialization: see
// records_store.h. Durability: WAL journal with synchronous=FULL. In WAL mode NORMAL already keeps
// every committed transaction through a killed process (the WAL is in the OS page cache); FULL
// also fsyncs the WAL at each commit, so a committed record survives a power cut or kernel crash
// too. One fsync per record costs ~milliseconds against the seconds each measurement takes, so
// the stronger guarantee is nearly free here.
#include "tune/records_store.h"

#include <charconv>
#include <cmath>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <system_error>
#include <thread>

#include "kiln/support/error.h"
#include "kiln/version.h"

namespace kiln::tune {

namespace {

constexpr const char* kFixHint =
    "delete it or tune again into a new file; merge the good parts of other databases with "
    "`kiln tune --merge A.db B.db -o OUT.db`";

constexpr const char* kColumns =
    "task, task_label, device, kiln_version, knobs, ok, error, seconds, is_default, verified, created_unix, kind, "
    "space";
// What a schema-1 file (no kind, no space) reads as: kernel records of an unknown knob space.
constexpr const char* kColumnsV1 =
    "task, task_label, device, kiln_version, knobs, ok, error, seconds, is_default, verified, created_unix, "
    "'kernel', ''";
// The columns schema 2 added, with the values schema-1 records get in a migration.
constexpr const char* kMigrateV1ToV2 =
    "ALTER TABLE records ADD COLUMN kind TEXT NOT NULL DEFAULT 'kernel';"
    "ALTER TABLE records ADD COLUMN space TEXT NOT NULL DEFAULT '';"
    "UPDATE kiln_meta SET value = '2' WHERE key = 'schema_version';";

// Whether the records table has schema 2's columns (a schema-1 file opened read-only has not).
bool has_v2_columns(const SqliteDb& db) {
  return db.query_int64("SELECT count(*) FROM pragma_table_info('records') WHERE name = 'space'") != 0;
}

const char* record_kind_text(RecordKind kind) { return kind == RecordKind::kLayer ? "layer" : "kernel"; }

[[noreturn]] void throw_not_ours(const std::string& path, const std::string& reason) {
  throw UserError(UserErrorKind::kParse, path, "not a Kiln tuning-records database: " + reason, kFixHint);
}

// Creates the schema in an empty file. Under the write lock, re-checks that the file is still
// empty: another process may have created it since we looked (two tuners starting together).
void create_schema_if_empty(SqliteDb& db) {
  SqliteTransaction txn(db);
  if (db.query_int64("SELECT count(*) FROM sqlite_master") != 0) return;  // rolled back: nothing to do
  db.exec("PRAGMA application_id = 1263094862");  // 0x4B494C4E, "KILN"
  db.exec(
      "CREATE TABLE kiln_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE records("
      "  id INTEGER PRIMARY KEY,"
      "  task TEXT NOT NULL, task_label TEXT NOT NULL, device TEXT NOT NULL, kiln_version TEXT NOT NULL,"
      "  knobs TEXT NOT NULL, ok INTEGER NOT NULL, error TEXT NOT NULL, seconds REAL NOT NULL,"
      "  is_default INTEGER NOT NULL, verified INTEGER NOT NULL, created_unix INTEGER NOT NULL,"
      "  kind TEXT NOT NULL DEFAULT 'kernel', space TEXT NOT NULL DEFAULT '');"
      "CREATE INDEX records_by_task_device ON records(task, device);");
  SqliteStatement meta = db.prepare("INSERT INTO kiln_meta(key, value) VALUES (?, ?)");
  const std::pair<std::string, std::string> rows[] = {
      {"schema_version", std::to_string(kRecordsSchemaVersion)},
      {"created_by", std::string("kiln ") + compiler_version()},
      {"created_unix", std::to_string(static_cast<int64_t>(std::time(nullptr)))},
  };
  for (const auto& [key, value] : rows) {
    meta.bind_text(1, key);
    meta.bind_text(2, value);
    meta.step();
    meta.reset();
  }
  txn.commit();
}

// Checks an existing, non-empty SQLite file: intact, ours, a schema version we read.
void validate(const SqliteDb& db, const std::string& path) {
  std::string check = db.query_text("PRAGMA quick_check(1)");
  if (check != "ok")
    throw UserError(UserErrorKind::kParse, path, "the database is damaged (SQLite quick_check: " + check + ")",
                    kFixHint);
  if (db.query_int64("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'kiln_meta'") == 0) {
    std::string tables = db.query_text("SELECT group_concat(name, ', ') FROM sqlite_master WHERE type = 'table'");
    throw_not_ours(path, "an SQLite database without Kiln's kiln_meta table (its tables: " + tables + ")");
  }
  std::string version_text = db.query_text("SELECT value FROM kiln_meta WHERE key = 'schema_version'");
  int version = 0;
  auto [end, ec] = std::from_chars(version_text.data(), version_text.data() + version_text.size(), version);
  if (ec != std::errc() || end != version_text.data() + version_text.size() || version < 1)
    throw_not_ours(path, "kiln_meta has no valid schema_version (found '" + version_text + "')");
  if (version > kRecordsSchemaVersion) {
    std::string created_by = db.query_text("SELECT value FROM kiln_meta WHERE key = 'created_by'");
    throw UserError(UserErrorKind::kIncompatible, path,
                    "records schema version " + std::to_string(version) + " (written by " + created_by +
                        ") is newer than this Kiln (" + compiler_version() + ") reads (version " +
                        std::to_string(kRecordsSchemaVersion) + ")",
                    "use a Kiln at least as new as the one that wrote it, or tune again into a new file");
  }
  try {
    db.prepare(std::string("SELECT id, ") + (version >= 2 ? kColumns : kColumnsV1) + " FROM records LIMIT 0");
  } catch (const SqliteError& e) {
    throw_not_ours(path, std::string("its records table lacks Kiln's columns (") + e.what() + ")");
  }
}

// Brings a schema-1 file to schema 2 in one transaction (re-checked under the write lock: another
// opener may have migrated it since). Its records become kernel records of an unknown knob space,
// which apply only in the Kiln version that measured them (record_applicability.h).
void migrate_if_old(SqliteDb& db) {
  SqliteTransaction txn(db);
  if (db.query_text("SELECT value FROM kiln_meta WHERE key = 'schema_version'") != "1") return;
  db.exec(kMigrateV1ToV2);
  txn.commit();
}

}  // namespace

[[noreturn]] void throw_records_error(const std::string& path, const SqliteError& error) {
  if (error.is(SqliteCode::kNotADb))
    throw_not_ours(path, "the file is not an SQLite database (" + std::string(error.what()) + ")");
  if (error.is(SqliteCode::kCorrupt))
    throw UserError(UserErrorKind::kParse, path, std::string("the database is damaged (") + error.what() + ")",
                    kFixHint);
  throw UserError(UserErrorKind::kIO, path, error.what(),
                  "check that the file and its folder are readable and writable and the disk has room");
}

void require_parent_folder(const std::string& path) {
  std::error_code ec;
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
    throw UserError(UserErrorKind::kNotFound, path, "the folder " + folder.string() + " does not exist",
                    "create the folder first, or name a file in an existing one");
}

namespace {
// One attempt at opening, validating and (read-write) preparing the file; SqliteErrors propagate.
SqliteDb open_records_store_once(const std::string& path, bool read_only);
}  // namespace

SqliteDb open_records_store(const std::string& path, bool read_only) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    throw UserError(UserErrorKind::kInvalidArgument, path, "is a folder, not a records database file",
                    "name a .db file");
  bool exists = std::filesystem::exists(status);
  if (!exists && read_only)
    throw UserError(UserErrorKind::kNotFound, path, "no such records database",
                    "check the path, or create it with `kiln tune MODEL.onnx --records " + path + "`");
  if (!exists) require_parent_folder(path);
  // Opening takes locks for which SQLite does not always wait (a journal-mode switch racing
  // another process's open or close, two openers creating the schema): SQLITE_BUSY then comes at
  // once. Such an open is tried again for up to 10 s, like the busy timeout of every other access.
  for (int attempt = 0;; ++attempt) {
    try {
      return open_records_store_once(path, read_only);
    } catch (const SqliteError& e) {
      if (!e.is(SqliteCode::kBusy) || attempt >= 500) throw_records_error(path, e);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

namespace {
SqliteDb open_records_store_once(const std::string& path, bool read_only) {
  SqliteDb db = SqliteDb::open(path, read_only, /*create=*/true);
  // The first read of the header: SQLITE_NOTADB here for a file that is not SQLite at all.
  int64_t tables = db.query_int64("SELECT count(*) FROM sqlite_master");
  if (tables == 0 && read_only) throw_not_ours(path, "the file holds no tables (an empty file?)");
  if (tables != 0) validate(db, path);  // before any write: a refused file is never modified
  if (!read_only) db.exec("PRAGMA journal_mode = WAL");
  if (tables != 0 && !read_only) migrate_if_old(db);
  if (tables == 0) {
    create_schema_if_empty(db);
    validate(db, path);  // ours, or what a concurrent opener created
  }
  if (!read_only) db.exec("PRAGMA synchronous = FULL");
  return db;
}
}  // namespace

void settle_records_store(SqliteDb& db) noexcept {
  try {
    db.set_busy_timeout_ms(0);
    db.exec("PRAGMA journal_mode = DELETE");
  } catch (const SqliteError&) {
    // Another connection holds the file: it stays in WAL mode, which is just as correct.
  }
}

std::string knobs_to_text(const std::map<std::string, int64_t>& knobs) {
  std::string text;
  for (const auto& [name, value] : knobs) {
    KILN_ICHECK(!name.empty() && name.find_first_of(" =\t\n") == std::string::npos)
        << "knob name '" << name << "' must be non-empty without spaces or '='";
    if (!text.empty()) text += ' ';
    text += name + "=" + std::to_string(value);
  }
  return text;
}

std::map<std::string, int64_t> knobs_from_text(const std::string& text, const std::string& path) {
  std::map<std::string, int64_t> knobs;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    size_t eq = item.find('=');
    int64_t value = 0;
    const char* begin = item.data() + (eq == std::string::npos ? 0 : eq + 1);
    const char* end = item.data() + item.size();
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || ptr != end)
      throw UserError(UserErrorKind::kParse, path, "a record has malformed knobs '" + text + "'", kFixHint);
    knobs[item.substr(0, eq)] = value;
  }
  return knobs;
}

SqliteStatement prepare_insert_record(const SqliteDb& db) {
  return db.prepare(std::string("INSERT INTO records(") + kColumns + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
}

void insert_record(SqliteStatement& insert, const TuningRecord& r) {
  KILN_ICHECK(!r.task.empty()) << "a tuning record needs a task signature";
  KILN_ICHECK(std::isfinite(r.seconds)) << "record of task " << r.task << " has seconds = " << r.seconds;
  insert.bind_text(1, r.task);
  insert.bind_text(2, r.task_label);
  insert.bind_text(3, r.device);
  insert.bind_text(4, r.kiln_version.empty() ? std::string(compiler_version()) : r.kiln_version);
  insert.bind_text(5, knobs_to_text(r.knobs));
  insert.bind_int64(6, r.ok ? 1 : 0);
  insert.bind_text(7, r.error);
  insert.bind_double(8, r.seconds);
  insert.bind_int64(9, r.is_default ? 1 : 0);
  insert.bind_int64(10, r.verified ? 1 : 0);
  insert.bind_int64(11, r.created_unix != 0 ? r.created_unix : static_cast<int64_t>(std::time(nullptr)));
  insert.bind_text(12, record_kind_text(r.kind));
  insert.bind_text(13, r.space);
  insert.step();
  insert.reset();
}

std::vector<TuningRecord> select_records(const SqliteDb& db, const std::string& path, const std::string& where,
                                         const std::vector<std::string>& params, const std::string& order,
                                         int64_t limit) {
  std::vector<TuningRecord> out;
  std::string sql;
  try {
    sql = std::string("SELECT ") + (has_v2_columns(db) ? kColumns : kColumnsV1) + " FROM records";
  } catch (const SqliteError& e) {
    throw_records_error(path, e);
  }
  if (!where.empty()) sql += " WHERE " + where;
  sql += " ORDER BY " + order;
  if (limit >= 0) sql += " LIMIT " + std::to_string(limit);
  try {
    SqliteStatement s = db.prepare(sql);
    for (size_t i = 0; i < params.size(); ++i) s.bind_text(static_cast<int>(i) + 1, params[i]);
    while (s.step()) {
      TuningRecord r;
      r.task = s.column_text(0);
      r.task_label = s.column_text(1);
      r.device = s.column_text(2);
      r.kiln_version = s.column_text(3);
      r.knobs = knobs_from_text(s.column_text(4), path);
      r.ok = s.column_int64(5) != 0;
      r.error = s.column_text(6);
      r.seconds = s.column_double(7);
      r.is_default = s.column_int64(8) != 0;
      r.verified = s.column_int64(9) != 0;
      r.created_unix = s.column_int64(10);
      const std::string kind = s.column_text(11);
      if (kind != "kernel" && kind != "layer")
        throw UserError(UserErrorKind::kParse, path, "a record has an unknown kind '" + kind + "'", kFixHint);
      r.kind = kind == "layer" ? RecordKind::kLayer : RecordKind::kKernel;
      r.space = s.column_text(12);
      out.push_back(std::move(r));
    }
  } catch (const SqliteError& e) {
    throw_records_error(path, e);
  }
  return out;
}

}  // namespace kiln::tune
