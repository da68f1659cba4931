// What `kiln run` does around a run, on either executor (run_command.cc for ONNX models,
// run_artifact.cc for artifacts):
//   - inputs it makes up when none is given (--fill random|zeros|ones, --seed): random floats are
//     uniform in [-1, 1), random integers uniform in 0..9 (valid indices for any table of ten or
//     more rows), random booleans 0 or 1; the same seed gives the same values on every machine
//     (a 64-bit generator of Kiln's own, not the C++ library's distributions);
//   - --print-top K: the K largest entries of each output, with their indices;
//   - --output-npz FILE: every output in one numpy .npz (kiln/ir/npz.h).
#ifndef KILN_TOOLS_KILN_RUN_IO_H_
#define KILN_TOOLS_KILN_RUN_IO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/ndarray.h"

namespace kiln::cli {

enum class FillMode { kRandom, kZeros, kOnes };

// "random", "zeros" or "ones" (the CLI checks the spelling first).
FillMode parse_fill_mode(const std::string& text);

// A made-up value for input number `input_index` of a run: its values depend on the mode, the
// seed and the index only.
ir::NDArray filled_input(ir::DType dtype, const std::vector<int64_t>& shape, FillMode mode, uint64_t seed,
                         size_t input_index);

// "filled input 'x' f32[1, 3, 224, 224] with random values (seed 0: floats in [-1, 1))\n"
std::string fill_note(const std::string& name, const ir::NDArray& value, FillMode mode, uint64_t seed);

// The K largest entries of `value` (all of them when it has fewer), largest first, ties in index
// order, NaN last; each with its full index, e.g.
//   top 3 of 'logits' f32[1, 1000]:
//     1  [0, 281]  14.2031
std::string top_k_text(const std::string& name, const ir::NDArray& value, int k);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_RUN_IO_H_
