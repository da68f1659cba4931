// Blocked int8 convolution (contract in include/kiln/topi/int8.h; docs/int8.md, "Integer
// kernels"): the input repacked once per call into words of 4 channels (zero-point padded), the
// weights packed (at compile time when constant) into [M/ob, C/4, KH, KW, ob] words, the i32
// accumulator tile in registers and the requantize epilogue applied to it before the one store.
#include "kiln/support/error.h"
#include "kiln/topi/int8.h"
#include "topi/int8_words.h"

namespace kiln::topi::int8 {

using namespace tir;

namespace {

int64_t out_size(int64_t in, int64_t pad, int64_t k, int64_t dilation, int64_t stride) {
  return (in + pad - dilation * (k - 1) - 1) / stride + 1;
}

}  // namespace

Tensor pack_conv_weights(const Tensor& w, int64_t ob) {
  KILN_ICHECK(w->shape.size() == 4 && w->dtype == DType::kI8) << "pack_conv_weights takes s8 [M, C, KH, KW]";
  const int64_t m = w->shape[0], c = w->shape[1];
  KILN_ICHECK(m % ob == 0) << "pack_conv_weights: " << m << " output channels are not a multiple of " << ob;
  return compute({m / ob, (c + 3) / 4, w->shape[2], w->shape[3], ob}, [&](const std::vector<Var>& i) {
    std::vector<Expr> bytes;
    for (int b = 0; b < 4; ++b) {
      bytes.push_back(cast(Type(DType::kI32), read_or(w, {i[0] * ob + i[4], i[1] * 4 + b, i[2], i[3]}, make_const(Type(DType::kI8), 0))));
    }
    return word_of(bytes);
  }, "int8_conv_weights", {"mo", "c4", "kh", "kw", "o"});
}

Tensor conv_weight_sums(const Tensor& w) {
  IterVar c = reduce_axis(w->shape[1], "c"), kh = reduce_axis(w->shape[2], "kh"), kw = reduce_axis(w->shape[3], "kw");
  return compute({w->shape[0]}, [&](const std::vector<Var>& i) {
    return sum(cast(Type(DType::kI32), w(i[0], c, kh, kw)), {c, kh, kw});
  }, "int8_conv_colsum", {"m"});
}

Int8Conv2d int8_conv2d(const Tensor& x, const Tensor& packed_w, const Tensor& colsum, const Tensor& bias,
                       const Tensor& scale, int64_t kh, int64_t kw, const Conv2dGeometry& g, const Requantize& rq,
                       const ConvKnobs& knobs, const Residual& residual) {
  KILN_ICHECK(x->dtype == DType::kU8 && (x->shape.size() == 4 || x->shape.size() == 5)) << "int8_conv2d: x must be u8 NCHW or NCHWc";
  const bool blocked = x->shape.size() == 5;
  const int64_t n = x->shape[0], ib = blocked ? x->shape[4] : 1, c = blocked ? x->shape[1] * ib : x->shape[1];
  const int64_t h = x->shape[2], w = x->shape[3], c4 = (c + 3) / 4, ob = knobs.ob;
  KILN_ICHECK(packed_w->shape.size() == 5 && packed_w->shape[1] == c4 && packed_w->shape[2] == kh &&
              packed_w->shape[3] == kw && packed_w->shape[4] == ob)
      << "int8_conv2d: packed weights do not match C=" << c << ", kernel " << kh << "x" << kw << ", ob=" << ob;
  const int64_t mo = packed_w->shape[0];
  const int64_t oh = out_size(h, g.pad_top + g.pad_bottom, kh, g.dilation_h, g.stride_h);
  const int64_t ow = out_size(w, g.pad_left + g.pad_right, kw, g.dilation_w, g.stride_w);
  KILN_ICHECK(oh > 0 && ow > 0) << "int8_conv2d: empty output";
  KILN_ICHECK(!residual.tensor.defined() ||
              (residual.tensor->dtype == DType::kU8 && residual.tensor->shape == std::vector<int64_t>({n, mo, oh, ow, ob})))
      << "int8_conv2d: the residual must be u8 [" << n << ", " << mo << ", " << oh << ", " << ow << ", " << ob << "]";
  const Expr zp = make_const(Type(DType::kU8), rq.a_zero_point);
  Int8Conv2d r;
  IterVar rh = reduce_axis(kh, "kh"), rw = reduce_axis(kw, "kw");
  if (blocked && ib % 4 == 0) {
    // Words straight from the u8 blocks: word c4 of a pixel is the 4 bytes at block c4 / (ib/4),
    // offset 4 (c4 % (ib/4)), read as one i32 load (the 4 byte reads of word_of combine), so a
    // pixel's ib channels are contiguous for the reduction. The input is read in place when the
    // convolution has no padding, else from a zero-point padded u8 copy (vector copies of blocks).
    const int64_t wpb = ib / 4;
    Tensor src = x;
    if (g.pad_top + g.pad_bottom + g.pad_left + g.pad_right > 0) {
      r.x_words = compute({n, c / ib, h + g.pad_top + g.pad_bottom, w + g.pad_left + g.pad_right, ib},
                          [&](const std::vector<Var>& i) {
                            return read_or(x, {i[0], i[1], i[2] - g.pad_top, i[3] - g.pad_left, i[4]}, zp);
                          },
                          "int8_x_pad", {"n", "cb", "h", "w", "c"});
      src = r.x_words;
    }
    // Reduction (block, word in block): the block's wpb words are contiguous bytes of a pixel.
    IterVar rcb = reduce_axis(c / ib, "cb"), rj = reduce_axis(wpb, "c4");
    r.acc = compute({n, mo, oh, ow, ob}, [&](const std::vector<Var>& i) {
      const Expr y = i[2] * g.stride_h + rh * g.dilation_h, xx = i[3] * g.stride_w + rw * g.dilation_w;
      std::vector<Expr> bytes;
      for (int b = 0; b < 4; ++b) bytes.push_back(cast(Type(DType::kI32), src(i[0], rcb, y, xx, rj * 4 + b)));
      return sum(dot4_u8s8(word_of(bytes), packed_w(i[1], rcb * wpb + rj, rh, rw, i[4]), knobs.narrow),
                 {rcb, rj, rh, rw});
    }, "int8_conv_acc", {"n", "mo", "oh", "ow", "o"});
  } else {
    r.x_words = compute({n, c4, h + g.pad_top + g.pad_bottom, w + g.pad_left + g.pad_right}, [&](const std::vector<Var>& i) {
      std::vector<Expr> bytes;
      for (int b = 0; b < 4; ++b) {
        Expr ch = i[1] * 4 + b, y = i[2] - g.pad_top, xx = i[3] - g.pad_left;
        Expr v = blocked ? read_or(x, {i[0], ch / ib, y, xx, ch % ib}, zp) : read_or(x, {i[0], ch, y, xx}, zp);
        bytes.push_back(cast(Type(DType::kI32), v));
      }
      return word_of(bytes);
    }, "int8_x_words", {"n", "c4", "h", "w"});
    IterVar rc = reduce_axis(c4, "c4");
    r.acc = compute({n, mo, oh, ow, ob}, [&](const std::vector<Var>& i) {
      Expr a = r.x_words(i[0], rc, i[2] * g.stride_h + rh * g.dilation_h, i[3] * g.stride_w + rw * g.dilation_w);
      return sum(dot4_u8s8(a, packed_w(i[1], rc, rh, rw, i[4]), knobs.narrow), {rc, rh, rw});
    }, "int8_conv_acc", {"n", "mo", "oh", "ow", "o"});
  }
  r.out = compute({n, mo, oh, ow, ob}, [&](const std::vector<Var>& i) {
    Expr m = i[1] * ob + i[4];
    Expr y = r.acc(i[0], i[1], i[2], i[3], i[4]) - colsum(m) * i32_const(rq.a_zero_point) + bias(m);
    if (rq.dequantize) {
      KILN_ICHECK(!residual.tensor.defined()) << "int8_conv2d: a dequantized output takes no residual";
      return requantize_dequantized(y, scale(m), rq.out_zero_point, rq.lo, rq.hi, rq.dequantize_zero_point,
                                    rq.dequantize_scale);
    }
    Expr res = residual.tensor.defined() ? residual.tensor(i[0], i[1], i[2], i[3], i[4]) : Expr();
    return requantize_u8(y, scale(m), rq.out_zero_point, rq.lo, rq.hi, res, residual.zero_point, residual.scale);
  }, "int8_conv_out", {"n", "mo", "oh", "ow", "o"});
  return r;
}

void schedule_int8_conv2d(Schedule& s, const Int8Conv2d& conv, const ConvKnobs& knobs) {
  if (conv.x_words.defined()) {
    // (n, channel block or word, row) parallel: the stem's NCHW input has one channel word, so
    // (n, word) alone left its staging to one thread.
    Stage xw = s[conv.x_words];
    xw.parallel(xw.fuse(xw.fuse(xw.axis(0), xw.axis(1)), xw.axis(2)));
    if (conv.x_words.ndim() == 5) xw.vectorize(xw.axis(4));  // the padded u8 copy: a block a vector
  }
  Stage out = s[conv.out];
  auto [owo, owi] = out.split(out.axis(3), knobs.tile_ow);
  IterVar rows = out.fuse(out.fuse(out.axis(0), out.axis(1)), out.axis(2));
  out.parallel(rows);
  out.unroll(owi);
  out.vectorize(out.axis(4));
  Stage acc = s[conv.acc];
  acc.compute_at(out, owo);
  // Reduction (kh, kw, channel words) with the channel words innermost: the tap loops (constant
  // trip counts, unrolled by LLVM) stay outside one long loop whose body is one tile step, so
  // LLVM does not interleave unrolled taps (it reassociates the integer accumulator adds across
  // them, which needs more than the 16 ymm registers: spills in the innermost loop). Words read
  // from the u8 blocks: (kh, kw, block, word in block), the block's ib/4 words unrolled by LLVM
  // (a few spills per block on AVX2, cheaper than one fused word axis, whose block / word index
  // arithmetic cost ~10 scalar instructions per tile step: measured 6 % slower on ResNet-50).
  if (conv.acc->reduce_axis().size() == 4) {
    acc.reorder({acc.reduce_axis(2), acc.reduce_axis(3), acc.reduce_axis(0), acc.reduce_axis(1), acc.axis(3), acc.axis(4)});
  } else {
    acc.reorder({acc.reduce_axis(1), acc.reduce_axis(2), acc.reduce_axis(0), acc.axis(3), acc.axis(4)});
  }
  acc.unroll(acc.axis(3));
  acc.vectorize(acc.axis(4));
}

}  // namespace kiln::topi::int8
