// ONNX -> graph IR converters for the transformer building blocks besides Attention:
//   RMSNormalization (23) -> rms_norm (axis resolved; stash_type 1 = float accumulation, which the
//     reference's double and the kernel's f32 both satisfy);
//   RotaryEmbedding (23) -> x * c + gather(x, partner columns) * s, with c/s built from the
//     cos/sin caches (gathered by position_ids when given): rotate-half or interleaved pairs,
//     partial rotation (rotary_embedding_dim: the rest concatenated unchanged), 4-D
//     [B, heads, S, head] or 3-D [B, S, hidden] input with num_heads;
//   SwiGLU (28) -> a * sigmoid(alpha * a) * b;
//   Size -> a constant (static shapes).
// All of them are elementwise/injective after the decomposition, so FuseOps makes them one or a
// few kernels.
#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::DType;
using ir::NDArray;
using ir::Shape;
using ir::Value;

Value reshape_to(ImportContext& ctx, const Value& x, const Shape& shape) {
  if (x.type().shape == shape) return x;
  return ctx.call1("reshape", {x}, Attrs().set("shape", std::vector<int64_t>(shape.begin(), shape.end())));
}

// x[..., begin:end] along `axis`.
Value slice_axis(ImportContext& ctx, const Value& x, int64_t axis, int64_t begin, int64_t end) {
  if (begin == 0 && end == x.type().shape[axis]) return x;
  return ctx.call1("strided_slice", {x},
                   Attrs().set("begins", std::vector<int64_t>{begin}).set("ends", std::vector<int64_t>{end}).set("axes", std::vector<int64_t>{axis}));
}

std::vector<Value> convert_rms_norm(ImportContext& ctx) {
  Value x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), x.type().rank(), "axis");
  const int64_t stash = ctx.attr_int("stash_type", 1);
  if (stash != 1) ctx.fail_attr("stash_type", "is " + std::to_string(stash) + "; only 1 (float32 accumulation) is supported");
  Value scale = ctx.input(1);
  if (scale.type().dtype != x.type().dtype) scale = ctx.call1("cast", {scale}, Attrs().set("dtype", x.type().dtype));
  return {ctx.call1("rms_norm", {x, scale}, Attrs().set("axis", axis).set("epsilon", ctx.attr_float("epsilon", 1e-5)))};
}

std::vector<Value> convert_rotary_embedding(ImportContext& ctx) {
  Value x = ctx.input(0);
  const Shape in = x.type().shape;
  const int64_t rank = x.type().rank();
  if (rank != 3 && rank != 4) ctx.fail_invalid("input has rank " + std::to_string(rank) + "; expected 3 or 4");
  const int64_t batch = in[0];
  // Work on [B, heads, S, head] (4-D) or [B, S, heads, head] (3-D); `seq_axis` is S's axis.
  int64_t head = in[3 % rank];
  if (rank == 3) {
    const int64_t heads = ctx.attr_int("num_heads", 0);
    if (heads <= 0) ctx.fail_attr("num_heads", "must be given and positive for a 3-D input");
    if (in[2] % heads != 0) ctx.fail_invalid("hidden size " + std::to_string(in[2]) + " is not a multiple of num_heads " + std::to_string(heads));
    head = in[2] / heads;
    x = reshape_to(ctx, x, {batch, in[1], heads, head});
  } else {
    head = in[3];
  }
  const int64_t seq = rank == 3 ? in[1] : in[2];
  int64_t rot = ctx.attr_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = head;
  if (rot < 0 || rot > head || rot % 2 != 0) {
    ctx.fail_attr("rotary_embedding_dim", "is " + std::to_string(rot) + "; expected an even number <= the head size " + std::to_string(head));
  }
  const int64_t half = rot / 2;
  Value cos = ctx.input(1), sin = ctx.input(2);
  if (ctx.has_input(3)) {
    cos = ctx.call1("gather", {cos, ctx.input(3)}, Attrs().set("axis", int64_t{0}));
    sin = ctx.call1("gather", {sin, ctx.input(3)}, Attrs().set("axis", int64_t{0}));
  }
  for (const Value* c : {&cos, &sin}) {
    const Shape& cs = c->type().shape;
    if (cs.size() != 3 || cs[2] != half || cs[1] != seq || (cs[0] != batch && cs[0] != 1)) {
      ctx.fail_invalid("cos/sin cache (after position_ids) has shape " + c->type().to_string() + "; expected [" + std::to_string(batch) +
                       ", " + std::to_string(seq) + ", " + std::to_string(half) + "]");
    }
  }
  if (cos.type().dtype != x.type().dtype) cos = ctx.call1("cast", {cos}, Attrs().set("dtype", x.type().dtype));
  if (sin.type().dtype != x.type().dtype) sin = ctx.call1("cast", {sin}, Attrs().set("dtype", x.type().dtype));
  const bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  // y[.., j] = x[.., j] * c[j] + x[.., partner(j)] * s[j] over the rotated columns j < rot, with
  // c = (cos, cos), s = (-sin, sin) and partner(j) = j +- half (rotate-half), or per pair
  // c = (cos_i, cos_i), s = (-sin_i, sin_i) and partner(2i) = 2i + 1, partner(2i + 1) = 2i
  // (interleaved). One gather of x by a constant column permutation and two multiplies: a single
  // elementwise kernel group, with c and s folded at import when the caches are constants.
  const int64_t cb = cos.type().shape[0];
  Value neg_sin = ctx.call1("neg", {sin});
  Value c, sn;
  if (interleaved) {
    const Shape col = {cb, seq, half, 1};
    auto pairs = [&](const Value& a, const Value& b) {
      Value p = ctx.call1("concat", {reshape_to(ctx, a, col), reshape_to(ctx, b, col)}, Attrs().set("axis", int64_t{3}));
      return reshape_to(ctx, p, {cb, seq, rot});
    };
    c = pairs(cos, cos);
    sn = pairs(neg_sin, sin);
  } else {
    c = ctx.call1("concat", {cos, cos}, Attrs().set("axis", int64_t{2}));
    sn = ctx.call1("concat", {neg_sin, sin}, Attrs().set("axis", int64_t{2}));
  }
  const Shape cache_shape = rank == 3 ? Shape{cb, seq, 1, rot} : Shape{cb, 1, seq, rot};
  c = reshape_to(ctx, c, cache_shape);
  sn = reshape_to(ctx, sn, cache_shape);
  auto partner_of = [&](int64_t j) { return interleaved ? (j % 2 == 0 ? j + 1 : j - 1) : (j < half ? j + half : j - half); };
  Value x_rot, swapped;
  if (rank == 3 && rot == head) {
    // Full rotation of a 3-D input: the partner columns gathered from the [B, S, hidden] input
    // itself (head h's column j reads h * head + partner(j)), so the reshaped view of x has one
    // consumer and is not copied.
    const Value x3 = ctx.input(0);
    NDArray partner = NDArray::empty(DType::kI64, {in[2]});
    for (int64_t j = 0; j < in[2]; ++j) partner.set_from_double(j, static_cast<double>(j / head * head + partner_of(j % head)));
    swapped = reshape_to(ctx, ctx.call1("gather", {x3, ctx.constant(partner, "rotary_partner")}, Attrs().set("axis", int64_t{2})), x.type().shape);
    x_rot = x;
  } else {
    NDArray partner = NDArray::empty(DType::kI64, {rot});
    for (int64_t j = 0; j < rot; ++j) partner.set_from_double(j, static_cast<double>(partner_of(j)));
    x_rot = slice_axis(ctx, x, 3, 0, rot);
    swapped = ctx.call1("gather", {x_rot, ctx.constant(partner, "rotary_partner")}, Attrs().set("axis", int64_t{3}));
  }
  Value y = ctx.call1("add", {ctx.call1("mul", {x_rot, c}), ctx.call1("mul", {swapped, sn})});
  if (rot < head) y = ctx.call1("concat", {y, slice_axis(ctx, x, 3, rot, head)}, Attrs().set("axis", int64_t{3}));
  return {reshape_to(ctx, y, in)};
}

std::vector<Value> convert_swiglu(ImportContext& ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (a.type() != b.type()) {
    ctx.fail_invalid("A " + a.type().to_string() + " and B " + b.type().to_string() + " must have the same shape and type");
  }
  const double alpha = ctx.attr_float("alpha", 1.0);
  Value arg = a;
  if (alpha != 1.0) arg = ctx.call1("mul", {a, ctx.constant(NDArray::scalar(a.type().dtype, alpha), "swiglu_alpha")});
  return {ctx.call1("mul", {ctx.call1("mul", {a, ctx.call1("sigmoid", {arg})}), b})};
}

}  // namespace

void add_transformer_converters(std::map<std::string, Converter>& table) {
  table["RMSNormalization"] = convert_rms_norm;
  table["RotaryEmbedding"] = convert_rotary_embedding;
  table["SwiGLU"] = convert_swiglu;
}

}  // namespace kiln::frontend::onnx_import
