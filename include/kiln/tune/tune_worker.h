// `kiln-tune-worker` (and `kiln tune-worker`): a measurement worker on a device (issue 15).
// Runtime-side like measure.h: lives in kiln_tune_measure, needs libkiln_runtime and hiredis only.
//
//   kiln-tune-worker --redis HOST:PORT [--prefix P] [--name N] [--once]
//
// Joins the consumer group on the stream <P>:jobs (created with MKSTREAM if missing), registers
// itself in the hash <P>:workers with its CPU features and a heartbeat each second, then loops:
// take a job (XREADGROUP, or XCLAIM of a job whose worker died: docs/tuning.md), write its
// artifact to a private temp file, measure_artifact, XADD the result to the job's reply stream,
// XACK and XDEL the job. --once: stop after one job. SIGINT/SIGTERM: finish the current job,
// unregister, exit 0. Exit 2 on bad arguments, 1 when the broker cannot be reached or is lost.
#ifndef KILN_TUNE_TUNE_WORKER_H_
#define KILN_TUNE_TUNE_WORKER_H_

#include <string>
#include <vector>

namespace kiln::tune {

struct WorkerOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string prefix = "kiln-tune";
  std::string name;   // default: <hostname>-<pid>
  bool once = false;
};

// Runs the worker until stopped; returns the process exit code. Progress goes to stderr.
int run_tune_worker(const WorkerOptions& options);

// Parses the command line above (args without the program name) and runs the worker.
int tune_worker_main(const std::vector<std::string>& args);

}  // namespace kiln::tune

#endif  // KILN_TUNE_TUNE_WORKER_H_
