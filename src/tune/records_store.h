// The SQLite schema of the tuning-records database and the operations on it that RecordDatabase
// (records_db.cc) and merge_databases (records_merge.cc) share. Internal to src/tune/.
//
// Schema version 2 (kRecordsSchemaVersion):
//   kiln_meta(key TEXT PRIMARY KEY, value TEXT)   rows: schema_version, created_by (Kiln version),
//                                                 created_unix
//   records(id INTEGER PRIMARY KEY, task, task_label, device, kiln_version, knobs, ok, error,
//           seconds, is_default, verified, created_unix, kind, space)  + index records_by_task_device
// Version 1 lacked `kind` ('kernel' | 'layer') and `space` (the knob space's fingerprint). A
// read-write open migrates a version-1 file in place (ALTER TABLE: its records become kind
// 'kernel', space '' = unknown); a read-only open reads it as such without changing it.
// The header's application_id is 0x4B494C4E ("KILN"). Knobs are stored as canonical text
// "a=1 b=2" (names sorted, as std::map orders them) and parsed back on read.
//
// Opening validates the file (SQLite at all, PRAGMA quick_check, our kiln_meta and records tables,
// the schema version) and sets WAL + synchronous=FULL on read-write connections. Every failure is
// a UserError naming the file: kNotFound, kParse (not ours / damaged, with the fix), kIncompatible
// (newer schema) or kIO. A schema change bumps kRecordsSchemaVersion and migrates older files on
// a read-write open.
#ifndef KILN_SRC_TUNE_RECORDS_STORE_H_
#define KILN_SRC_TUNE_RECORDS_STORE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/tune/records.h"
#include "tune/sqlite_db.h"

namespace kiln::tune {

inline constexpr int kRecordsSchemaVersion = 2;

// Opens (read_only) or opens-or-creates (read-write) a records database at `path`, validated.
SqliteDb open_records_store(const std::string& path, bool read_only);

// UserError(kNotFound) naming `path` when the folder it would be created in does not exist.
void require_parent_folder(const std::string& path);

// Before closing a read-write connection: when no other connection has the file open, switches it
// back to a rollback journal, which checkpoints and deletes the WAL, so the closed database is one
// self-contained file (and read-only openers leave no -wal/-shm files beside it). Best effort,
// never waits, never throws: with other connections open the file simply stays in WAL mode.
void settle_records_store(SqliteDb& db) noexcept;

// The UserError for a SQLite failure on `path` (kParse for a damaged file, kIO otherwise).
[[noreturn]] void throw_records_error(const std::string& path, const SqliteError& error);

// Knobs as canonical text and back. Names must not contain ' ' or '=' (KILN_ICHECK); a malformed
// text is a UserError(kParse) naming `path`.
std::string knobs_to_text(const std::map<std::string, int64_t>& knobs);
std::map<std::string, int64_t> knobs_from_text(const std::string& text, const std::string& path);

// Inserts one record through a statement from prepare_insert_record(); fills an empty
// kiln_version with compiler_version() and a zero created_unix with the current time.
SqliteStatement prepare_insert_record(const SqliteDb& db);
void insert_record(SqliteStatement& insert, const TuningRecord& record);

// Records matching `where` (an SQL condition over the records columns with `?` placeholders bound
// to `params` as text, "" for all), in `order` (an SQL ORDER BY list), at most `limit` (< 0: all).
std::vector<TuningRecord> select_records(const SqliteDb& db, const std::string& path, const std::string& where,
                                         const std::vector<std::string>& params, const std::string& order,
                                         int64_t limit = -1);

}  // namespace kiln::tune

#endif  // KILN_SRC_TUNE_RECORDS_STORE_H_
