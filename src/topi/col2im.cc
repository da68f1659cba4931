// col2im (src/ir/ops/col2im.cc) as one injective compute: each output pixel sums, over the block
// offsets (unrolled: prod(block_shape) terms), the input value of the block position that puts
// that offset on the pixel, when the position is whole (divisible by the stride) and in range
// (read_or with 0 otherwise). Sums in the compute type (f32 for f16/bf16).
#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

ComputeResult col2im_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>& out,
                             const LayoutHints&) {
  const Tensor x = in[0];
  const std::vector<int64_t> image = attrs.get_ints("image_shape"), block = attrs.get_ints("block_shape");
  const size_t s = image.size();
  std::vector<int64_t> dil = attrs.get_ints("dilations"), strides = attrs.get_ints("strides"), pads = attrs.get_ints("pads");
  if (dil.empty()) dil.assign(s, 1);
  if (strides.empty()) strides.assign(s, 1);
  if (pads.empty()) pads.assign(2 * s, 0);
  std::vector<int64_t> counts;
  int64_t block_size = 1;
  for (size_t k = 0; k < s; ++k) {
    counts.push_back((image[k] + pads[k] + pads[k + s] - dil[k] * (block[k] - 1) - 1) / strides[k] + 1);
    block_size *= block[k];
  }
  const DType acc = compute_dtype(x.dtype());
  return injective_result(tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        Expr sum = constant(acc, 0.0);
        for (int64_t o = 0; o < block_size; ++o) {
          std::vector<int64_t> off(s);
          for (size_t k = s, rest = static_cast<size_t>(o); k-- > 0;) {
            off[k] = static_cast<int64_t>(rest) % block[k];
            rest /= static_cast<size_t>(block[k]);
          }
          Expr valid = tir::make_bool(true), l = Expr(int64_t{0});
          for (size_t k = 0; k < s; ++k) {
            // Block position p with p * stride - pad + off * dilation = pixel.
            const Expr t = Expr(i[2 + k]) + (pads[k] - off[k] * dil[k]);
            const Expr p = tir::floordiv(t, Expr(strides[k]));
            valid = valid && t >= Expr(int64_t{0}) && tir::floormod(t, Expr(strides[k])) == Expr(int64_t{0}) && p < Expr(counts[k]);
            l = l * counts[k] + tir::min(tir::max(p, Expr(int64_t{0})), Expr(counts[k] - 1));
          }
          const Expr channel = Expr(i[1]) * block_size + o;
          const Expr v = cast_to(acc, x({i[0], channel, l}));
          sum = sum + tir::select(valid, v, constant(acc, 0.0));
        }
        return cast_to(x.dtype(), sum);
      },
      "col2im"));
}
KILN_REGISTER_COMPUTE(col2im, "col2im", col2im_compute);

}  // namespace
}  // namespace kiln::topi
