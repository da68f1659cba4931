// The layer choice points of the passes that have them (layer_choice.h), kept apart from the
// passes' own rules so each pass only calls one function at its decision:
//   - ConvertConvToWinograd: choose_winograd_tile for each candidate conv2d_nchwc (3x3, stride 1,
//     f32, groups 1, constant weights): 0 (direct), 2 or 4; the default is the shape rule's tile.
//   - AlterOpLayout: choose_conv_output_block for a groups-1 conv whose blocks no grouped conv
//     constrains: its default block, or one, two or four vectors of the target where that
//     divides the output channels (no padding).
#ifndef KILN_SRC_PASS_LAYER_CHOICE_HOOKS_H_
#define KILN_SRC_PASS_LAYER_CHOICE_HOOKS_H_

#include <cstdint>

#include "kiln/ir/graph.h"
#include "kiln/pass/pass.h"

namespace kiln::pass {

// `conv` is a conv2d_nchwc with data type `x` ([N, C/b, H, W, b]) and result type `y`.
int choose_winograd_tile(PassContext& ctx, const ir::CallNode& conv, const ir::TensorType& x,
                         const ir::TensorType& y, int rule_tile);

// `conv` is a conv2d (NCHW data `x`, OIHW weights `w`); `lanes` the target's f32 vector lanes.
int64_t choose_conv_output_block(PassContext& ctx, const ir::CallNode& conv, const ir::TensorType& x,
                                 const ir::TensorType& w, int64_t rule_block, int64_t lanes);

}  // namespace kiln::pass

#endif  // KILN_SRC_PASS_LAYER_CHOICE_HOOKS_H_
