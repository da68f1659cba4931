// Winograd minimal filtering F(m x m, 3 x 3) (Lavin & Gray 2015): for an alpha x alpha input tile d
// (alpha = m + 2) and a 3 x 3 filter g, the m x m valid correlation of d with g is
//     Y = A^T [ (G g G^T) ⊙ (B^T d B) ] A.
// The matrices for m = 2 (interpolation points 0, 1, -1, inf) and m = 4 (0, 1, -1, 2, -2, inf) are
// shared by the graph ops' reference implementations (conv2d_winograd.cc) and topi's computes
// (src/topi/conv2d_winograd.cc), row-major, as exact small rationals.
#ifndef KILN_SRC_IR_OPS_WINOGRAD_H_
#define KILN_SRC_IR_OPS_WINOGRAD_H_

#include <cstddef>
#include <vector>

namespace kiln::ir::ops {

struct WinogradMatrices {
  int m = 0;      // output tile (2 or 4)
  int alpha = 0;  // input tile = m + 2
  std::vector<double> at;  // A^T: m x alpha
  std::vector<double> g;   // G: alpha x 3
  std::vector<double> bt;  // B^T: alpha x alpha
  double AT(int i, int j) const { return at[static_cast<size_t>(i * alpha + j)]; }
  double G(int i, int j) const { return g[static_cast<size_t>(i * 3 + j)]; }
  double BT(int i, int j) const { return bt[static_cast<size_t>(i * alpha + j)]; }
};

// The matrices of F(m x m, 3 x 3); m must be 2 or 4 (an InternalError otherwise: the ops check
// their `tile` attribute first).
const WinogradMatrices& winograd_matrices(int m);

}  // namespace kiln::ir::ops

#endif  // KILN_SRC_IR_OPS_WINOGRAD_H_
