// Lowering: a Schedule of tensor expressions -> a PrimFunc in loop IR, as a linear list of named
// steps. With KILN_LOG=tir=debug each step's result is printed (or "(unchanged)"):
//   1. schedule_ops        bound inference + loop-nest construction + inlining (TE-level IR)
//   2. storage_flatten     realized tensors -> Allocate; multi-dimensional accesses -> flat
//                          indices into typed buffers
//   3. simplify            constant folding, canonical index arithmetic, guard removal
//   4. partition_tails     split tails: a guard-free main loop and a guarded tail
//   5. vectorize_loops     vectorized loops -> Ramp/Broadcast vector code
//   6. unroll_loops        unrolled loops -> copies of their body
//   7. simplify            again, over the vector and unrolled code
//   8. check_parallel      no parallel loop nested in another (a UserError)
//   9. verify              the loop-IR contract holds (verify.h; an InternalError if not)
#ifndef KILN_TIR_LOWER_H_
#define KILN_TIR_LOWER_H_

#include <string>
#include <vector>

#include "kiln/tir/schedule.h"
#include "kiln/tir/stmt.h"

namespace kiln::tir {

// `args` are the kernel's parameters in order: every placeholder the schedule reads and every
// output (inputs first by convention). Throws UserError when an output or a read placeholder is
// missing from `args`, or an arg is an intermediate (non-output) compute.
PrimFunc lower(const Schedule& sched, const std::vector<Tensor>& args, const std::string& name);

}  // namespace kiln::tir

#endif  // KILN_TIR_LOWER_H_
