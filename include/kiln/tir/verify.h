// A checker of the loop-IR contract (docs/tir.md) for a lowered function, run as lowering's last
// step and available to code generators before they emit anything:
//  - no TE-level node (TensorLoad, Reduce, ProducerStore, ProducerRealize) remains;
//  - every Load/Store names a parameter or a buffer of an enclosing Allocate;
//  - every variable is bound by an enclosing For/Let/LetStmt, and no variable is bound twice on
//    one path (a loop inside a loop of the same variable);
//  - no parallel loop is nested in another.
// A violation is a bug in Kiln: it throws InternalError naming the node.
#ifndef KILN_TIR_VERIFY_H_
#define KILN_TIR_VERIFY_H_

#include "kiln/tir/stmt.h"

namespace kiln::tir {

void verify(const PrimFunc& f);

}  // namespace kiln::tir

#endif  // KILN_TIR_VERIFY_H_
