// Private to lowering: the first steps from a Schedule to loop IR.
//   schedule_ops: bound inference and loop-nest construction (with inlining) -> TE-level IR
//                 (ProducerRealize / ProducerStore / TensorLoad).
//   storage_flatten: TE-level IR -> Allocate / Store / Load on flat Buffers.
#ifndef KILN_SRC_TIR_SCHEDULE_OPS_H_
#define KILN_SRC_TIR_SCHEDULE_OPS_H_

#include <utility>
#include <vector>

#include "kiln/tir/schedule.h"

namespace kiln::tir::detail {

// Builds the loop nests of every non-inlined stage: outputs and root stages in dependency order,
// attached stages inside their consumer's loop, realizing the region that loop's inner
// iterations read. Splits that do not divide, and attached regions that may run past a tensor's
// end, are guarded with IfThenElse (the simplifier removes the guards it can prove).
Stmt schedule_ops(const Schedule& sched);

// Replaces TE-level nodes by flat buffer accesses. `params` binds kernel arguments (placeholders
// and outputs) to their buffers; a tensor that is read but neither bound nor realized is a
// UserError.
Stmt storage_flatten(const Stmt& s, const std::vector<std::pair<const OperationNode*, Buffer>>& params);

}  // namespace kiln::tir::detail

#endif  // KILN_SRC_TIR_SCHEDULE_OPS_H_
