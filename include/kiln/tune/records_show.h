// The text `kiln tune --show FILE.db [--device current|all]` prints (issue 15).
//
//   std::cout << format_records(db, DeviceKey::of(host_target()).str(), /*all_devices=*/false);
//
// One table per device (only `device` unless all_devices), one row per task in the order the tasks
// were first recorded: label, trials, ok/failed, default time, best time, speedup (default / best),
// verified (the best record: "default" when it is the baseline, "yes" when checked against it) and
// the best knobs, then "N tasks, M tuned". Best is RecordDatabase::best(). A footer counts the
// records of other devices (not shown) so a user sees why a database tuned elsewhere applies
// nothing here.
#ifndef KILN_TUNE_RECORDS_SHOW_H_
#define KILN_TUNE_RECORDS_SHOW_H_

#include <string>

#include "kiln/tune/records.h"

namespace kiln::tune {

std::string format_records(const RecordDatabase& db, const std::string& device, bool all_devices);

// "812.3 us", "12.41 ms", "1.203 s" (also used by the tuner's progress display).
std::string format_seconds(double seconds);

}  // namespace kiln::tune

#endif  // KILN_TUNE_RECORDS_SHOW_H_
