// A thin RAII layer over SQLite's C API for the tuning-records database (src/tune/records_*.cc).
// SQLite's header stays in sqlite_db.cc; callers see only these classes.
//
//   SqliteDb db = SqliteDb::open(path, /*read_only=*/false, /*create=*/true);
//   db.exec("CREATE TABLE ...");
//   SqliteStatement s = db.prepare("SELECT a, b FROM t WHERE c = ?");
//   s.bind_text(1, "x");
//   while (s.step()) use(s.column_int64(0), s.column_text(1));
//
// Contract: every failing SQLite call throws SqliteError with SQLite's primary result code and
// message; the records layer turns it into a UserError that names the database file. The
// connection waits up to 10 s for another process's write lock (busy timeout) before failing.
#ifndef KILN_SRC_TUNE_SQLITE_DB_H_
#define KILN_SRC_TUNE_SQLITE_DB_H_

#include <cstdint>
#include <stdexcept>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace kiln::tune {

// Primary SQLite result codes the records layer tells apart (values of SQLITE_*).
enum class SqliteCode : int {
  kOther = -1,
  kBusy = 5,       // SQLITE_BUSY
  kCorrupt = 11,   // SQLITE_CORRUPT
  kCantOpen = 14,  // SQLITE_CANTOPEN
  kNotADb = 26,    // SQLITE_NOTADB
};

class SqliteError : public std::runtime_error {
 public:
  SqliteError(int primary_code, const std::string& message);
  int code() const { return code_; }
  bool is(SqliteCode c) const { return code_ == static_cast<int>(c); }

 private:
  int code_;
};

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  SqliteStatement(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameters are 1-based, as in SQLite.
  void bind_text(int index, const std::string& value);
  void bind_int64(int index, int64_t value);
  void bind_double(int index, double value);
  // Runs one step: true when a row is available, false when done.
  bool step();
  void reset();  // ready to bind and step again
  // Columns are 0-based. NULL reads as "" / 0.
  std::string column_text(int column) const;
  int64_t column_int64(int column) const;
  double column_double(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class SqliteDb {
 public:
  // read_only: SQLITE_OPEN_READONLY; otherwise read-write, creating the file when `create`.
  static SqliteDb open(const std::string& path, bool read_only, bool create);
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  ~SqliteDb();

  void exec(const std::string& sql);
  // How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
  void set_busy_timeout_ms(int ms);
  SqliteStatement prepare(const std::string& sql) const;
  // The first column of the first row of `sql` as text ("" when there is no row).
  std::string query_text(const std::string& sql) const;
  int64_t query_int64(const std::string& sql) const;

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

// RAII transaction: BEGIN IMMEDIATE on construction, ROLLBACK unless commit() was called.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db);
  SqliteTransaction(const SqliteTransaction&) = delete;
  ~SqliteTransaction();
  void commit();

 private:
  SqliteDb& db_;
  bool done_ = false;
};

// "3.40.1"
std::string sqlite_library_version();

}  // namespace kiln::tune

#endif  // KILN_SRC_TUNE_SQLITE_DB_H_
