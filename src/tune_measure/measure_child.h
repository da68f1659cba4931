// The child process of measure_artifact (measure_artifact.cc forks it): loads the artifact,
// fills its inputs from the seed, warms up, times runs, and writes one encoded MeasureResult
// (measure_wire.h; runs not yet filtered, seconds 0) to `fd`, then _exits -- it never returns,
// never runs the parent's atexit handlers or static destructors.
//
// Test hook, read only here (in the child): KILN_TUNE_MEASURE_TEST_FAULT=
//   segv      raise SIGSEGV after loading (a candidate that crashes)
//   hang      sleep forever after loading (a candidate that hangs)
//   exit:N    _exit(N) after loading (a candidate that exits)
//   sleep:S   sleep S seconds before measuring, then measure normally (a slow job)
// Nothing else reads it; production never sets it.
#ifndef KILN_SRC_TUNE_MEASURE_MEASURE_CHILD_H_
#define KILN_SRC_TUNE_MEASURE_MEASURE_CHILD_H_

#include <string>

#include "kiln/tune/measure.h"

namespace kiln::tune {

[[noreturn]] void run_measure_child(const std::string& artifact_path, const MeasureOptions& options, int fd);

}  // namespace kiln::tune

#endif  // KILN_SRC_TUNE_MEASURE_MEASURE_CHILD_H_
