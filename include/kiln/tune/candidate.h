// Candidate artifacts (issue 15): one tuning task built with given knobs as a small stand-alone
// artifact that measure_artifact (tune/measure.h, runtime-only) can load and time anywhere.
//
//   CandidateBuild b = build_candidate(task, knobs, target, "/tmp/kiln-tune-x/cand_17.so");
//   if (b.ok) measurer.measure({{"17", b.path, mo}});
//
// The artifact: every group input (activations, weights, the body's own constants) is an
// artifact INPUT ("in0", "in1", ... in the kernel's parameter order), every group output an
// artifact output ("out0", ...), and one kernel call. So the measurer fills all of them from its
// seed and two candidates of one task see the same data.
// Contract: knobs the template rejects (apply_schedule's UserError) or a failed lowering or link
// give ok = false with the error; build_candidate never throws a kiln::Error.
#ifndef KILN_TUNE_CANDIDATE_H_
#define KILN_TUNE_CANDIDATE_H_

#include <string>

#include "kiln/codegen/target.h"
#include "kiln/topi/schedule.h"
#include "kiln/tune/task.h"

namespace kiln::tune {

struct CandidateBuild {
  bool ok = false;
  std::string error;  // when !ok
  std::string path;
};

// Whether apply_schedule accepts `knobs` for the task's compute (no lowering, no code): the
// cheap filter the tuner runs on sampled candidates before building them.
bool knobs_accepted(const topi::GroupCompute& compute, const topi::Knobs& knobs, std::string* why = nullptr);

CandidateBuild build_candidate(const TuningTask& task, const topi::Knobs& knobs, const codegen::Target& target,
                               const std::string& path);

}  // namespace kiln::tune

#endif  // KILN_TUNE_CANDIDATE_H_
