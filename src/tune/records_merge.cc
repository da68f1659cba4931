// merge_databases (include/kiln/tune/records.h): `kiln tune --merge a.db b.db -o c.db`.
// Inputs are opened read-only and validated like any records database; the output must not exist
// yet (in particular it is never one of the inputs). Records are copied in input order, dropping
// duplicates (same task, device, knobs, ok and seconds -- what copying one record twice gives),
// into a temporary file next to the output that is renamed into place only once complete, so an
// interrupted merge leaves no half-written output.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "kiln/support/error.h"
#include "kiln/tune/records.h"
#include "tune/records_store.h"

namespace kiln::tune {

namespace {

std::string dedupe_key(const TuningRecord& r) {
  char seconds[64];
  std::snprintf(seconds, sizeof(seconds), "%a", r.seconds);  // exact: hex float
  return r.task + '\x1f' + r.device + '\x1f' + knobs_to_text(r.knobs) + '\x1f' + (r.ok ? "1" : "0") + '\x1f' +
         seconds;
}

void check_output(const std::vector<std::string>& inputs, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const std::string& input : inputs) {
    if (input == output || fs::equivalent(input, output, ec))
      throw UserError(UserErrorKind::kInvalidArgument, output,
                      "the merge output is also one of its inputs; writing it could lose that input's records",
                      "write the merge to a new file (-o NEW.db)");
  }
  if (fs::exists(output, ec))
    throw UserError(UserErrorKind::kInvalidArgument, output, "the merge output already exists",
                    "write the merge to a new file, or delete the old one first (or name it as an input too)");
  require_parent_folder(output);
}

}  // namespace

int64_t merge_databases(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty())
    throw UserError(UserErrorKind::kInvalidArgument, "--merge", "no input databases", "name at least one .db file");
  check_output(inputs, output);
  std::vector<TuningRecord> merged;
  std::set<std::string> seen;
  for (const std::string& input : inputs) {
    SqliteDb db = open_records_store(input, /*read_only=*/true);
    for (TuningRecord& r : select_records(db, input, "", {}, "id"))
      if (seen.insert(dedupe_key(r)).second) merged.push_back(std::move(r));
  }

  std::string temp = output + ".merging-" + std::to_string(::getpid());
  std::filesystem::remove(temp);
  try {
    SqliteDb db = open_records_store(temp, /*read_only=*/false);
    try {
      SqliteTransaction txn(db);
      SqliteStatement insert = prepare_insert_record(db);
      for (const TuningRecord& r : merged) insert_record(insert, r);
      txn.commit();
      settle_records_store(db);
    } catch (const SqliteError& e) {
      throw_records_error(temp, e);
    }
  } catch (...) {  // closed above (WAL checkpointed); drop the partial file and its journal
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(temp + suffix, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(temp, output, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw UserError(UserErrorKind::kIO, output, "cannot move the merged database into place: " + ec.message(),
                    "check that the folder is writable");
  }
  return static_cast<int64_t>(merged.size());
}

}  // namespace kiln::tune
