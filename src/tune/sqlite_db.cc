// RAII over SQLite's C API: see sqlite_db.h for the contract.
#include "tune/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace kiln::tune {

namespace {

// Throws SqliteError for a result code that is not success, with the connection's message.
void check(sqlite3* db, int rc) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  throw SqliteError(rc & 0xff, db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

}  // namespace

SqliteError::SqliteError(int primary_code, const std::string& message)
    : std::runtime_error(message), code_(primary_code) {}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

SqliteStatement::~SqliteStatement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

void SqliteStatement::bind_text(int index, const std::string& value) {
  check(db_, sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT));
}

void SqliteStatement::bind_int64(int index, int64_t value) {
  check(db_, sqlite3_bind_int64(stmt_, index, value));
}

void SqliteStatement::bind_double(int index, double value) {
  check(db_, sqlite3_bind_double(stmt_, index, value));
}

bool SqliteStatement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  check(db_, rc);
  return false;
}

void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string SqliteStatement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

int64_t SqliteStatement::column_int64(int column) const { return sqlite3_column_int64(stmt_, column); }

double SqliteStatement::column_double(int column) const { return sqlite3_column_double(stmt_, column); }

SqliteDb SqliteDb::open(const std::string& path, bool read_only, bool create) {
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (!read_only && create) flags |= SQLITE_OPEN_CREATE;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw SqliteError(rc & 0xff, message);
  }
  sqlite3_extended_result_codes(db, 0);
  sqlite3_busy_timeout(db, 10000);
  return SqliteDb(db);
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

SqliteDb::~SqliteDb() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

void SqliteDb::exec(const std::string& sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    throw SqliteError(rc & 0xff, message);
  }
}

void SqliteDb::set_busy_timeout_ms(int ms) { sqlite3_busy_timeout(db_, ms); }

SqliteStatement SqliteDb::prepare(const std::string& sql) const {
  sqlite3_stmt* stmt = nullptr;
  check(db_, sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr));
  return SqliteStatement(db_, stmt);
}

std::string SqliteDb::query_text(const std::string& sql) const {
  SqliteStatement s = prepare(sql);
  return s.step() ? s.column_text(0) : std::string();
}

int64_t SqliteDb::query_int64(const std::string& sql) const {
  SqliteStatement s = prepare(sql);
  return s.step() ? s.column_int64(0) : 0;
}

SqliteTransaction::SqliteTransaction(SqliteDb& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (done_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (const SqliteError&) {
    // The transaction was already rolled back by SQLite (e.g. after SQLITE_FULL); nothing to undo.
  }
}

void SqliteTransaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

std::string sqlite_library_version() { return sqlite3_libversion(); }

}  // namespace kiln::tune
