// Computes of the int8 Winograd ops (src/ir/ops/int8_winograd.cc; docs/int8.md, "Winograd
// F(2x2, 3x3) in integers"), scheduled by the Winograd template (kConv2dWinograd,
// schedule_winograd.cc) like the f32 kernel:
//   "input"   v[e, nu, P, q] i32 = two s16 halves (B^T (d - x_zp) B)[e, nu] of channels lo(q) and
//             hi(q) (the low and high halves of a channel block: each half one contiguous load of
//             ib/2 bytes), d the 4x4 window of tile p read with x_zp outside the input;
//             |value| <= 4 * 255 fits s16;
//   "anchor"  mt[e, nu, M/ob, P, ob] = sum_q dot2_s16(v[e, nu, p, q], u[e, nu, mo, q, o]): 16
//             batched i16 products with i32 sums (vpmaddwd / vpdpwssd);
//   output    (A^T mt A) >> 2 (exactly the direct sum: the weights carry 2G on both sides) plus
//             bias, requantized (or dequantized) as int8_conv2d does; elementwise consumers of the
//             fused group inlined after it.
//   int8_winograd_weight_transform   the transform as an injective kernel (normally folded at
//             compile time: AlterInt8Layout makes it only for constant weights).
// Bit-exact to the ops' references (every step is integer arithmetic; i32 wrap-around cancels
// because the final value fits i32).
#include "ir/ops/winograd.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/int8.h"
#include "topi/int8_attrs.h"
#include "topi/int8_words.h"
#include "topi/topi_util.h"
#include "topi/winograd_exprs.h"

namespace kiln::topi {
namespace {

using ir::DType;
using ir::ops::WinogradMatrices;
using tir::Type;
using winograd::select_on;
using winograd::with_lets;

// Channel of half `half` of word q in blocks of ib channels (the op's pairing).
Expr channel_block(const Expr& q, int64_t ib) { return tir::floordiv(q, Expr(ib / 2)); }
Expr channel_in_block(const Expr& q, int half, int64_t ib) { return tir::floormod(q, Expr(ib / 2)) + Expr(half * (ib / 2)); }

// (lo & 0xFFFF) | (hi << 16): two s16 values (held in i32) as one word.
Expr halves_word(const Expr& lo, const Expr& hi) {
  return tir::bit_or(tir::bit_and(lo, int8::i32_const(0xFFFF)), tir::shift_left(hi, int8::i32_const(16)));
}

ComputeResult int8_winograd_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                    const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const WinogradMatrices& wm = ir::ops::winograd_matrices(2);
  const int a = wm.alpha, m = wm.m;
  const std::vector<int64_t>& pads = attrs.get_ints("pads");
  const Tensor x = in[0], u = in[1], bias = in[2], scale = in[3];
  const Type i32(DType::kI32);
  const ir::Shape& xs = x.shape();
  const ir::Shape& os = out[0].shape;
  const int64_t n = xs[0], ib = xs[4], q_count = xs[1] * ib / 2;
  const int64_t mb = os[1], oh = os[2], ow = os[3], ob = os[4];
  const int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m, tiles = n * th * tw;
  const int32_t zp = static_cast<int32_t>(attrs.get_int("x_zero_point"));
  const Expr zp_u8 = make_const(Type(DType::kU8), zp);

  const Tensor v = tir::compute(
      {a, a, tiles, q_count},
      [&](const std::vector<Var>& i) {
        const winograd::TileIndex t = winograd::tile_index(i[2], th, tw);
        // B^T (d - zp) B of one half of the word.
        auto transformed = [&](int half) {
          std::vector<Expr> loads;
          for (int r = 0; r < a; ++r) {
            for (int s = 0; s < a; ++s) {
              const Expr xv = tir::read_or(x, {t.n, channel_block(i[3], ib), t.row * m + r - pads[0], t.col * m + s - pads[1],
                                               channel_in_block(i[3], half, ib)},
                                           zp_u8);
              loads.push_back(tir::cast(i32, xv) - int8::i32_const(zp));
            }
          }
          return with_lets(loads, half == 0 ? "dl" : "dh",
                           [&](const std::vector<Expr>& dv) { return winograd::input_transform(wm, i[0], i[1], dv, DType::kI32); });
        };
        return halves_word(transformed(0), transformed(1));
      },
      "int8_wino_input", {"e", "nu", "p", "q"});

  tir::IterVar rq = tir::reduce_axis(q_count, "rq");
  const Tensor mt = tir::compute(
      {a, a, mb, tiles, ob},
      [&](const std::vector<Var>& i) { return tir::sum(tir::dot2_s16(v(i[0], i[1], i[3], Expr(rq)), u(i[0], i[1], i[2], Expr(rq), i[4])), {rq}); },
      "int8_wino_product", {"e", "nu", "mo", "p", "o"});

  const int8::Requantize requant = int8::requantize_of(attrs);
  const Tensor y = tir::compute(
      os,
      [&](const std::vector<Var>& i) {
        const Expr ch = i[1] * Expr(ob) + i[4];
        return with_lets(winograd::tile_products(mt, i, th, tw, m, a), "m", [&](const std::vector<Expr>& mv) {
          const Expr four_acc = winograd::output_transform(wm, i[2], i[3], mv, DType::kI32);
          const Expr acc = tir::shift_right(four_acc, int8::i32_const(2)) + bias(ch);
          if (requant.dequantize) {
            return int8::requantize_dequantized(acc, scale(ch), requant.out_zero_point, requant.lo, requant.hi,
                                                requant.dequantize_zero_point, requant.dequantize_scale);
          }
          return int8::requantize_u8(acc, scale(ch), requant.out_zero_point, requant.lo, requant.hi);
        });
      },
      "int8_conv2d_winograd", {"n", "mo", "oh", "ow", "o"});

  // ic_block: words per channel block, the input stage's vector
  return winograd::result(v, mt, y, m, ib / 2);
}
KILN_REGISTER_COMPUTE(int8_conv2d_winograd, "int8_conv2d_winograd", int8_winograd_compute);

ComputeResult weight_transform_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                       const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const WinogradMatrices& wm = ir::ops::winograd_matrices(2);
  const Tensor w = in[0];
  const int64_t ob = attrs.get_int("ob"), ib = attrs.get_int("ib");
  const Type i32(DType::kI32);
  // 2G as a select table over (row, tap).
  auto g2 = [&](const Expr& row, int k) { return select_on(row, wm.alpha, [&](int e) { return constant(DType::kI32, 2 * wm.G(e, k)); }); };
  const Tensor uu = tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        const Expr ch = i[2] * Expr(ob) + i[4];
        auto transformed = [&](int half) {
          const Expr c = channel_block(i[3], ib) * Expr(ib) + channel_in_block(i[3], half, ib);
          Expr sum;
          for (int kh = 0; kh < 3; ++kh) {
            for (int kw = 0; kw < 3; ++kw) {
              const Expr t = g2(i[0], kh) * tir::cast(i32, w(ch, c, Expr(kh), Expr(kw))) * g2(i[1], kw);
              sum = sum.defined() ? sum + t : t;
            }
          }
          return sum;
        };
        return halves_word(transformed(0), transformed(1));
      },
      "int8_winograd_weight_transform");
  return injective_result(uu);
}
KILN_REGISTER_COMPUTE(int8_winograd_weight_transform, "int8_winograd_weight_transform", weight_transform_compute);

}  // namespace
}  // namespace kiln::topi
