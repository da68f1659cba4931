// Measuring candidates on many devices through a Redis broker (issue 15; docs/tuning.md,
// "Tuning on many devices (Redis)"). On each device, `kiln-tune-worker --redis HOST:PORT` pulls
// jobs and measures them with measure_artifact (kiln/tune/tune_worker.h).
//
//   RedisOptions r; r.host = "10.0.0.5"; r.port = 6379;
//   std::unique_ptr<Measurer> m = make_redis_measurer(r);   // UserError if the broker is down
//   std::vector<MeasureResult> results = m->measure(jobs);  // in the jobs' order
//
// Contract (beyond Measurer's):
//   - One stream entry per job on <prefix>:jobs: the artifact's bytes, the options, the CPU
//     features the artifact requires and this measurer's reply stream <prefix>:results:<tuner-id>,
//     read with XREAD BLOCK; and the time a worker may hold it (hold_ms = the measurement's
//     timeout_seconds + reclaim_margin_seconds) in the hash <prefix>:holds. Results come back in
//     job order.
//   - A job held past hold_ms (its worker died) is re-delivered to another worker; one delivered
//     more than 3 times comes back failed. A job with no answer while no result at all has arrived
//     for job_timeout_seconds is a result with ok = false, "no worker answered within N s"
//     (and is withdrawn from the stream).
//   - Jobs are only sent when a live worker has every CPU feature the artifact requires; otherwise
//     the result is ok = false naming the missing features. A worker lacking one answers failed.
//   - The broker unreachable (at construction or later): UserError naming host:port and the fix.
//     No live worker within wait_for_workers_seconds: UserError saying how to start one.
#ifndef KILN_TUNE_REDIS_MEASURER_H_
#define KILN_TUNE_REDIS_MEASURER_H_

#include <memory>
#include <string>

#include "kiln/tune/measure.h"

namespace kiln::tune {

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string prefix = "kiln-tune";  // the workers' --prefix: one prefix per kind of device
  // Give up on unanswered jobs when no result has arrived for this long; 0: 2 x the longest hold
  // time of the batch + 10 s (room for one re-delivery).
  double job_timeout_seconds = 0;
  // How much longer than its measurement timeout a worker may hold a job before it is re-delivered.
  double reclaim_margin_seconds = 5;
  double wait_for_workers_seconds = 10;
};

std::unique_ptr<Measurer> make_redis_measurer(const RedisOptions& options);

}  // namespace kiln::tune

#endif  // KILN_TUNE_REDIS_MEASURER_H_
