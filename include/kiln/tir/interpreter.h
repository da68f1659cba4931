// A reference interpreter for the lowered loop IR: runs a PrimFunc on NDArrays. Slow, simple and
// strict, it is the oracle that tests of lowering and schedules compare against before (and
// besides) code generation:
//  - every Load/Store index is bounds-checked against its buffer (InternalError naming the buffer,
//    the index and the size);
//  - Allocate'd float buffers start as NaN (integers as a 0x5A byte pattern) so reads of
//    uninitialized storage show up in results;
//  - parallel loops run their iterations in reverse order, exposing order dependences;
//  - f32/f16/bf16 arithmetic is rounded to float after each operation, stores round to the
//    buffer's dtype (nearest even); integers wrap to their width.
// TE-level nodes (TensorLoad, Reduce, ProducerStore, ProducerRealize) are rejected.
#ifndef KILN_TIR_INTERPRETER_H_
#define KILN_TIR_INTERPRETER_H_

#include <vector>

#include "kiln/ir/ndarray.h"
#include "kiln/tir/stmt.h"

namespace kiln::tir {

// Runs `f` with args[i] bound to f->params[i]. The arrays' storage is written in place (outputs).
// Throws UserError when the number, dtype or shape of args does not match the params.
void interpret(const PrimFunc& f, const std::vector<ir::NDArray>& args);

}  // namespace kiln::tir

#endif  // KILN_TIR_INTERPRETER_H_
