// `col2im` (ONNX Col2Im, any number of spatial dims): the inverse of im2col. Input
// [N, C * prod(block), L] holds, for every sliding-block position l (row-major over the per-axis
// counts (image + pads - dilation * (block - 1) - 1) / stride + 1), the block's C * prod(block)
// values (channel-major, then the block offsets row-major); the output image
// [N, C, image...] is the sum of every block value that lands on each pixel (padding dropped).
// Computes in double for floats (one rounding), int64 for integers.
#include "ir/ops/dtype_dispatch.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {
namespace {

struct Col2ImGeometry {
  std::vector<int64_t> image, block, dilations, pads, strides, counts;
};

Col2ImGeometry geometry(const std::string& op, const TensorType& x, const Attrs& attrs) {
  Col2ImGeometry g;
  g.image = attrs.get_ints("image_shape");
  g.block = attrs.get_ints("block_shape");
  const size_t s = g.image.size();
  if (s == 0 || g.block.size() != s) fail_attr(op, "block_shape", "must have one value per image dimension");
  g.dilations = attrs.get_ints("dilations");
  g.strides = attrs.get_ints("strides");
  g.pads = attrs.get_ints("pads");
  if (g.dilations.empty()) g.dilations.assign(s, 1);
  if (g.strides.empty()) g.strides.assign(s, 1);
  if (g.pads.empty()) g.pads.assign(2 * s, 0);
  if (g.dilations.size() != s || g.strides.size() != s || g.pads.size() != 2 * s) {
    fail_attr(op, "pads", "dilations and strides need one value per image dimension, pads two");
  }
  require_all_at_least(op, "block_shape", g.block, 1);
  require_all_at_least(op, "dilations", g.dilations, 1);
  require_all_at_least(op, "strides", g.strides, 1);
  int64_t blocks = 1, block_size = 1;
  for (size_t d = 0; d < s; ++d) {
    const int64_t span = g.image[d] + g.pads[d] + g.pads[d + s] - g.dilations[d] * (g.block[d] - 1) - 1;
    if (span < 0) fail_attr(op, "block_shape", "the dilated block does not fit in the padded image along axis " + std::to_string(d));
    g.counts.push_back(span / g.strides[d] + 1);
    blocks *= g.counts.back();
    block_size *= g.block[d];
  }
  if (x.rank() != 3 || x.shape[1] % block_size != 0 || x.shape[2] != blocks) {
    fail_input(op, 0, "x", "x must be [N, C * " + std::to_string(block_size) + ", " + std::to_string(blocks) + "] for this geometry, got " +
                               shape_to_string(x.shape));
  }
  return g;
}

}  // namespace

KILN_REGISTER_OP(col2im) {
  OpDef d;
  d.name = "col2im";
  d.doc = "sums sliding blocks back into an image (ONNX Col2Im)";
  d.attrs = {{"image_shape", AttrKind::kInts, std::nullopt, "the output's spatial shape"},
             {"block_shape", AttrKind::kInts, std::nullopt, "the sliding block's shape"},
             {"dilations", AttrKind::kInts, AttrValue(std::vector<int64_t>{}), "per spatial axis (empty: 1s)"},
             {"pads", AttrKind::kInts, AttrValue(std::vector<int64_t>{}), "[begins..., ends...] (empty: 0s)"},
             {"strides", AttrKind::kInts, AttrValue(std::vector<int64_t>{}), "per spatial axis (empty: 1s)"}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    require_dtype("col2im", 0, "x", in[0].dtype, DTypeSet::kNumeric);
    const Col2ImGeometry g = geometry("col2im", in[0], attrs);
    int64_t block_size = 1;
    for (int64_t b : g.block) block_size *= b;
    Shape out = {in[0].shape[0], in[0].shape[1] / block_size};
    out.insert(out.end(), g.image.begin(), g.image.end());
    return std::vector<TensorType>{{in[0].dtype, out}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>& out_types) {
    const Col2ImGeometry g = geometry("col2im", in[0].type(), attrs);
    const size_t s = g.image.size();
    const Shape& os = out_types[0].shape;
    int64_t block_size = 1, blocks = in[0].shape()[2], pixels = 1;
    for (size_t k = 0; k < s; ++k) {
      block_size *= g.block[k];
      pixels *= g.image[k];
    }
    const int64_t planes = os[0] * os[1];  // (n, c) pairs
    std::vector<double> acc(static_cast<size_t>(planes * pixels), 0.0);
    const std::vector<double> x = to_doubles(in[0]);
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t o = 0; o < block_size; ++o) {
        for (int64_t l = 0; l < blocks; ++l) {
          int64_t pixel = 0, orest = o, lrest = l;
          bool inside = true;
          std::vector<int64_t> off(s), pos(s);
          for (size_t k = s; k-- > 0;) {
            off[k] = orest % g.block[k];
            orest /= g.block[k];
            pos[k] = lrest % g.counts[k];
            lrest /= g.counts[k];
          }
          for (size_t k = 0; k < s; ++k) {
            const int64_t at = pos[k] * g.strides[k] - g.pads[k] + off[k] * g.dilations[k];
            inside = inside && at >= 0 && at < g.image[k];
            pixel = pixel * g.image[k] + at;
          }
          if (inside) acc[static_cast<size_t>(p * pixels + pixel)] += x[static_cast<size_t>((p * block_size + o) * blocks + l)];
        }
      }
    }
    NDArray out = NDArray::empty(out_types[0].dtype, os);
    for (int64_t i = 0; i < out.numel(); ++i) out.set_from_double(i, acc[static_cast<size_t>(i)]);
    return std::vector<NDArray>{out};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
