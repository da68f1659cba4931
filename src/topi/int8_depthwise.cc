// Int8 depthwise convolution on NCHW[b]c u8 data (contract in include/kiln/topi/int8.h; docs/int8.md,
// "Integer kernels"), a tile of output columns x the channel block in registers, the requantize
// epilogue on it. Two forms:
//   - tap pairs (dilation_w 1, stride_w 1 or 2): the zero-point padded input as i32 words of two
//     16-bit halves (columns j*s and j*s + 1), computed per block of kRowBlock output rows (in
//     cache; the rows the block's taps read), and each pair of horizontal taps one dot2_s16
//     (vpmaddwd) with the weight pair: 6 multiply-adds per output for a 3x3 instead of 9;
//   - otherwise the zero-point padded input copied once, products in i16 summed in i32 over the
//     taps.
#include "kiln/support/error.h"
#include "kiln/topi/int8.h"
#include "topi/int8_words.h"

namespace kiln::topi::int8 {

using namespace tir;

Tensor pack_depthwise_weights(const Tensor& w, int64_t b) {
  KILN_ICHECK(w->dtype == DType::kI8 && w->shape.size() == 4 && w->shape[1] == 1 && w->shape[0] % b == 0)
      << "pack_depthwise_weights: weights must be s8 [C, 1, KH, KW] with C a multiple of " << b;
  return compute({w->shape[0] / b, w->shape[2], w->shape[3], b}, [&](const std::vector<Var>& i) {
    return w(i[0] * b + i[3], make_int(0), i[1], i[2]);
  }, "int8_dw_weights", {"cb", "kh", "kw", "c"});
}

Int8Depthwise int8_depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& colsum, const Tensor& bias,
                                    const Tensor& scale, const Conv2dGeometry& g, const Requantize& rq) {
  KILN_ICHECK(x->dtype == DType::kU8 && x->shape.size() == 5) << "int8_depthwise_conv2d: x must be u8 NCHW[b]c";
  const int64_t n = x->shape[0], cb = x->shape[1], h = x->shape[2], wd = x->shape[3], b = x->shape[4];
  KILN_ICHECK(w->dtype == DType::kI8 && w->shape.size() == 4 && w->shape[0] == cb && w->shape[3] == b)
      << "int8_depthwise_conv2d: packed weights must be s8 [C/b, KH, KW, b] with C/b = " << cb << ", b = " << b;
  const int64_t kh = w->shape[1], kw = w->shape[2];
  const int64_t hp = h + g.pad_top + g.pad_bottom, wp = wd + g.pad_left + g.pad_right;
  const int64_t oh = (hp - g.dilation_h * (kh - 1) - 1) / g.stride_h + 1;
  const int64_t ow = (wp - g.dilation_w * (kw - 1) - 1) / g.stride_w + 1;
  KILN_ICHECK(oh > 0 && ow > 0) << "int8_depthwise_conv2d: empty output";
  Int8Depthwise r;
  const Expr zp = make_const(Type(DType::kU8), rq.a_zero_point);
  const Type i16(DType::kI16), i32(DType::kI32);
  if (g.dilation_w == 1 && (g.stride_w == 1 || g.stride_w == 2)) {
    // Tap pairs: word j of a row holds the padded input's columns j*s (low half) and j*s + 1
    // (high half); taps 2t and 2t+1 of output column o read word o + t * (2 / s).
    const int64_t s = g.stride_w, step = 2 / s, pairs = (kw + 1) / 2, words = ow + (pairs - 1) * step;
    auto padded = [&](const std::vector<Var>& i, const Expr& col) {
      return cast(i32, read_or(x, {i[0], i[1], i[2] - g.pad_top, col - g.pad_left, i[4]}, zp));
    };
    r.pad = compute({n, cb, hp, words, b}, [&](const std::vector<Var>& i) {
      return bit_or(padded(i, i[3] * s), shift_left(padded(i, i[3] * s + 1), i32_const(16)));
    }, "int8_dw_pairs", {"n", "cb", "h", "j", "c"});
    r.wpairs = compute({cb, kh, pairs, b}, [&](const std::vector<Var>& i) {
      auto tap = [&](int k) { return cast(i32, read_or(w, {i[0], i[1], i[2] * 2 + k, i[3]}, make_const(Type(DType::kI8), 0))); };
      return bit_or(bit_and(tap(0), i32_const(0xFFFF)), shift_left(tap(1), i32_const(16)));
    }, "int8_dw_weight_pairs", {"cb", "kh", "t", "c"});
    IterVar rh = reduce_axis(kh, "kh"), rt = reduce_axis(pairs, "t");
    r.acc = compute({n, cb, oh, ow, b}, [&](const std::vector<Var>& i) {
      Expr xv = r.pad(i[0], i[1], i[2] * g.stride_h + rh * g.dilation_h, i[3] + rt * step, i[4]);
      return sum(dot2_s16(xv, r.wpairs(i[1], rh, rt, i[4])), {rh, rt});
    }, "int8_dw_acc", {"n", "cb", "oh", "ow", "c"});
  } else {
    r.pad = compute({n, cb, hp, wp, b}, [&](const std::vector<Var>& i) {
      return read_or(x, {i[0], i[1], i[2] - g.pad_top, i[3] - g.pad_left, i[4]}, zp);
    }, "int8_dw_pad", {"n", "cb", "h", "w", "c"});
    IterVar rh = reduce_axis(kh, "kh"), rw = reduce_axis(kw, "kw");
    r.acc = compute({n, cb, oh, ow, b}, [&](const std::vector<Var>& i) {
      Expr xv = r.pad(i[0], i[1], i[2] * g.stride_h + rh * g.dilation_h, i[3] * g.stride_w + rw * g.dilation_w, i[4]);
      Expr wv = w(i[1], rh, rw, i[4]);
      return sum(cast(i32, cast(i16, xv) * cast(i16, wv)), {rh, rw});
    }, "int8_dw_acc", {"n", "cb", "oh", "ow", "c"});
  }
  r.out = compute({n, cb, oh, ow, b}, [&](const std::vector<Var>& i) {
    Expr c = i[1] * b + i[4];
    Expr y = r.acc(i[0], i[1], i[2], i[3], i[4]) - colsum(c) * i32_const(rq.a_zero_point) + bias(c);
    return requantize_u8(y, scale(c), rq.out_zero_point, rq.lo, rq.hi);
  }, "int8_dw_out", {"n", "cb", "oh", "ow", "c"});
  return r;
}

void schedule_int8_depthwise(Schedule& s, const Int8Depthwise& dw, int64_t tile_ow) {
  Stage out = s[dw.out];
  auto [owo, owi] = out.split(out.axis(3), tile_ow);
  Stage pad = s[dw.pad];
  if (dw.wpairs.defined()) {
    // Pair words per block of output rows: (n, channel block, row block) parallel, the block's
    // input rows' words computed inside it (in cache), then its rows.
    constexpr int64_t kRowBlock = 8;
    auto [oho, ohi] = out.split(out.axis(2), kRowBlock);
    const IterVar blocks = out.fuse(out.fuse(out.axis(0), out.axis(1)), oho);
    out.parallel(blocks);
    pad.compute_at(out, blocks);
    pad.vectorize(pad.axis(4));
    Stage wp = s[dw.wpairs];
    wp.vectorize(wp.axis(3));
    (void)ohi;
  } else {
    pad.parallel(pad.fuse(pad.axis(0), pad.axis(1)));
    pad.vectorize(pad.axis(4));
    out.parallel(out.fuse(out.fuse(out.axis(0), out.axis(1)), out.axis(2)));
  }
  out.unroll(owi);
  out.vectorize(out.axis(4));
  Stage acc = s[dw.acc];
  acc.compute_at(out, owo);
  acc.reorder({acc.reduce_axis(0), acc.reduce_axis(1), acc.axis(3), acc.axis(4)});
  acc.unroll(acc.axis(3));
  acc.vectorize(acc.axis(4));
}

}  // namespace kiln::topi::int8
