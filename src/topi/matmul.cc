// matmul (numpy semantics: 1-D promotion, batch broadcasting) and gemm. With a 2-D (or batched)
// right operand, B is packed into panels of n_block columns, Bp[batch.., N/nb, K, nb] (zero past
// N), so the register tile reads one contiguous vector per k; the product accumulates in f32 for
// f32/f16/bf16 and in the element type for integers (wrapping as the reference's int64 sum does
// modulo 2^bits). A 1-D operand has no tile to block: it uses the plain reduction schedule.
// Remainder tiles (issue 18): the blocked product (the "anchor") is computed over whole register
// tiles, rows padded to a multiple of tile_m (A's row index clamped to M - 1: the extra rows
// recompute the last one) and columns to whole panels (the zero columns of Bp), so every tile runs
// the full-width kernel without bounds guards; only the output stage, [.., M, N], stores less
// (the vectorizer versions its one partial panel, tir/loop_transforms.cc). The row tile is chosen
// here (layout "row_tile", the default of the schedule knob tile_m) from the rows' count.
#include "kiln/topi/compute.h"
#include "topi/topi_util.h"

namespace kiln::topi {
namespace {

using ir::DType;

int64_t n_block_for(int64_t n, const LayoutHints& hints) {
  const int64_t lanes = hints.vector_lanes_f32;
  const int64_t nb = lanes * (hints.num_vector_regs >= 32 ? 4 : 2);
  const int64_t rounded = (n + lanes - 1) / lanes * lanes;
  return std::min(nb, rounded);
}

// Rows of the register tile: the tile with the best useful-row rate over the rows padded to a
// multiple of it, a tile step costing max(rows, 4) cycles (two FMA units on two vectors per row;
// four cycles of FMA latency below 4 rows); ties to the first of 6, 4, 5, 3. That keeps an exact
// divisor where one is as fast (BERT's M = 128: 4, which ran 7% faster than 6) and a tall tile
// with a short tail where the divisor is thin (ViT-B/16's M = 197: 6, 401 ms vs 426 with 4;
// M = 129: 6, not 3). 8 with 32 registers when it divides M; M <= 6: M itself.
int64_t row_tile(int64_t m, const LayoutHints& hints) {
  if (hints.num_vector_regs >= 32 && m % 8 == 0) return 8;
  if (m <= 6) return m;
  int64_t best = 6;
  double best_rate = 0;
  for (int64_t t : {6, 4, 5, 3}) {
    const double rate = static_cast<double>(m) / static_cast<double>((m + t - 1) / t * std::max<int64_t>(t, 4));
    if (rate > best_rate + 1e-9) {
      best = t;
      best_rate = rate;
    }
  }
  return best;
}

// Rows up to which a product with a run-time B reads B unpacked.
constexpr int64_t kDirectMaxM = 8;

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// The anchor's shape: the output's with rows rounded up to tile_m and columns to whole panels.
ir::Shape padded_shape(const ir::Shape& oshape, size_t row_axis, int64_t tile_m, int64_t nb) {
  ir::Shape p = oshape;
  p[row_axis] = round_up(p[row_axis], tile_m);
  p.back() = round_up(p.back(), nb);
  return p;
}

// A row index of the padded anchor as a row of A: clamped to M - 1 when rows were padded.
Expr clamp_row(const Expr& i, int64_t m, int64_t padded_m) {
  return padded_m > m ? tir::min(i, Expr(m - 1)) : i;
}

// The output [.., M, N] of a padded anchor: its top-left corner, cast to dt.
Tensor unpad_output(const Tensor& prod, const ir::Shape& oshape, DType dt, const char* name) {
  return tir::compute(oshape, [&](const std::vector<Var>& i) { return cast_to(dt, prod(as_exprs(i))); }, name);
}

// Panels of B: bp[batch.., jo, k, jj] = B[batch.., k, jo*nb + jj] (or B[.., jo*nb + jj, k] when
// transposed), zero past N.
Tensor pack_b(const Tensor& b, int64_t K, int64_t N, int64_t nb, bool trans_b) {
  const size_t rank = b.shape().size();
  ir::Shape shape(b.shape().begin(), b.shape().end() - 2);
  shape.push_back((N + nb - 1) / nb);
  shape.push_back(K);
  shape.push_back(nb);
  return tir::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(i.begin(), i.begin() + static_cast<long>(rank - 2));
        const Expr j = i[rank - 2] * nb + i[rank];
        const Expr k = i[rank - 1];
        if (trans_b) {
          idx.push_back(j);
          idx.push_back(k);
        } else {
          idx.push_back(k);
          idx.push_back(j);
        }
        return tir::read_or(b, idx, constant(b.dtype(), 0));
      },
      "pack_b", {});
}

ComputeResult matmul_compute(const std::vector<Tensor>& in, const ir::Attrs&, const std::vector<ir::TensorType>& out,
                             const LayoutHints& hints) {
  const Tensor a = in[0], b = in[1];
  const DType dt = out[0].dtype, ct = compute_dtype(dt);
  const size_t ra = a.shape().size(), rb = b.shape().size();
  const ir::Shape& oshape = out[0].shape;
  const size_t nbatch = oshape.size() - (ra >= 2 ? 1 : 0) - (rb >= 2 ? 1 : 0);
  const int64_t K = a.shape().back();
  const bool blocked = ra >= 2 && rb >= 2;
  const int64_t N = rb >= 2 ? b.shape().back() : 1;
  const int64_t nb = blocked ? n_block_for(N, hints) : 0;
  const int64_t M = blocked ? static_cast<int64_t>(oshape[nbatch]) : 1;
  const int64_t tile_m = blocked ? row_tile(M, hints) : 1;
  // Few rows (M <= kDirectMaxM): each element of B is used by at most that many FMAs, so packing it
  // (a read and a write of all of B, and a buffer as large, in every call) would cost as much as
  // the product: the tile reads B's rows directly (contiguous along N), columns not padded (the
  // vectorizer versions the partial panel's guard).
  const bool packed = blocked && M > kDirectMaxM;
  const ir::Shape pshape = blocked ? padded_shape(oshape, nbatch, tile_m, packed ? nb : 1) : oshape;
  Tensor bp = packed ? pack_b(b, K, N, nb, false) : Tensor();
  tir::IterVar k = tir::reduce_axis(K, "k");
  Tensor prod = tir::compute(
      pshape,
      [&](const std::vector<Var>& i) {
        const std::vector<Expr> batch(i.begin(), i.begin() + static_cast<long>(nbatch));
        std::vector<Expr> ia, ib;
        if (ra >= 2) {
          ir::Shape abatch(a.shape().begin(), a.shape().end() - 2);
          ia = broadcast_indices(batch, abatch);
          ia.push_back(blocked ? clamp_row(i[nbatch], M, pshape[nbatch]) : Expr(i[nbatch]));
        }
        ia.push_back(k);
        const Expr j = rb >= 2 ? Expr(i.back()) : Expr(0);
        Expr vb;
        if (packed) {
          ir::Shape bbatch(b.shape().begin(), b.shape().end() - 2);
          ib = broadcast_indices(batch, bbatch);
          ib.push_back(tir::floordiv(j, Expr(nb)));
          ib.push_back(k);
          ib.push_back(tir::floormod(j, Expr(nb)));
          vb = bp(ib);
        } else if (rb >= 2) {
          ir::Shape bbatch(b.shape().begin(), b.shape().end() - 2);
          ib = broadcast_indices(batch, bbatch);
          ib.push_back(k);
          ib.push_back(j);
          vb = b(ib);
        } else {
          vb = b(Expr(k));
        }
        return tir::sum(cast_to(ct, a(ia)) * cast_to(ct, vb), {k});
      },
      "matmul_acc");
  ComputeResult r;
  r.schedule = blocked ? ScheduleKind::kMatmul : ScheduleKind::kReduction;
  r.parts["anchor"] = prod;
  if (packed) r.parts["pack_b"] = bp;
  if (blocked) {
    r.layout["n_block"] = nb;
    r.layout["row_tile"] = tile_m;
  }
  r.outputs = {ct == dt && pshape == oshape ? prod : unpad_output(prod, oshape, dt, "matmul")};
  return r;
}
KILN_REGISTER_COMPUTE(matmul, "matmul", matmul_compute);

// gemm: alpha * A' B' + beta * C (C broadcast to [M, N]).
ComputeResult gemm_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs, const std::vector<ir::TensorType>& out,
                           const LayoutHints& hints) {
  const Tensor a = in[0], b = in[1];
  const bool ta = attrs.get_int("trans_a") != 0, tb = attrs.get_int("trans_b") != 0;
  const double alpha = attrs.get_float("alpha"), beta = attrs.get_float("beta");
  const DType dt = out[0].dtype, ct = compute_dtype(dt);
  const int64_t K = ta ? a.shape()[0] : a.shape()[1];
  const int64_t N = out[0].shape[1];
  const int64_t nb = n_block_for(N, hints);
  const int64_t M = out[0].shape[0], tile_m = row_tile(M, hints);
  const ir::Shape pshape = padded_shape(out[0].shape, 0, tile_m, nb);
  Tensor bp = pack_b(b, K, N, nb, tb);
  tir::IterVar k = tir::reduce_axis(K, "k");
  Tensor prod = tir::compute(
      pshape,
      [&](const std::vector<Var>& i) {
        const Expr row = clamp_row(i[0], M, pshape[0]);
        const Expr va = ta ? a(Expr(k), row) : a(row, Expr(k));
        const Expr vb = bp(tir::floordiv(i[1], Expr(nb)), Expr(k), tir::floormod(i[1], Expr(nb)));
        return tir::sum(cast_to(ct, va) * cast_to(ct, vb), {k});
      },
      "gemm_acc");
  ComputeResult r;
  r.schedule = ScheduleKind::kMatmul;
  r.parts["anchor"] = prod;
  r.parts["pack_b"] = bp;
  r.layout["n_block"] = nb;
  r.layout["row_tile"] = tile_m;
  r.outputs = {tir::compute(
      out[0].shape,
      [&](const std::vector<Var>& i) {
        Expr v = prod(as_exprs(i));
        if (alpha != 1.0) v = v * alpha;
        if (in.size() > 2 && beta != 0.0) {
          const Tensor c = in[2];
          v = v + cast_to(ct, c(broadcast_indices(i, c.shape()))) * beta;
        }
        return cast_to(dt, v);
      },
      "gemm")};
  return r;
}
KILN_REGISTER_COMPUTE(gemm, "gemm", gemm_compute);

// pack_matmul_b: the panels as a graph op (folded at compile time for constant weights).
ComputeResult pack_matmul_b_compute(const std::vector<Tensor>& in, const ir::Attrs& attrs,
                                    const std::vector<ir::TensorType>& out, const LayoutHints&) {
  const bool tb = attrs.get_int("trans_b") != 0;
  const Tensor b = in[0];
  const int64_t K = out[0].shape[1], nb = out[0].shape[2];
  const int64_t N = tb ? b.shape()[0] : b.shape()[1];
  return injective_result(pack_b(b, K, N, nb, tb));
}
KILN_REGISTER_COMPUTE(pack_matmul_b, "pack_matmul_b", pack_matmul_b_compute);

// A matrix-vector product (M = 1) has one accumulator per panel: a chain of dependent FMAs over
// all of K. With K split into kSplitK interleaved slices the product is computed as
// partial[.., s, j] = sum over slice s, which the matmul schedule tiles like kSplitK rows
// (kSplitK independent accumulators per panel, panels parallel, each panel streamed once), then
// summed per column. The slices are K / kSplitK long; the K % kSplitK last terms (a K tail) are a
// short reduction of their own added to the sum, so the streaming loop has no guard or clamp.
constexpr int64_t kSplitK = 4;
constexpr int64_t kSplitMinK = 256;

ComputeResult matrix_vector(const Tensor& a, const Tensor& bp, const ir::Shape& oshape, DType dt, DType ct) {
  const size_t nbatch = oshape.size() - 2;
  const int64_t K = a.shape().back(), nb = bp.shape()[2];
  const int64_t slice = K / kSplitK, rem = K % kSplitK;
  const int64_t np = bp.shape()[0] * nb;
  auto term = [&](const std::vector<Var>& i, const Expr& k) {
    std::vector<Expr> ia(i.begin(), i.begin() + static_cast<long>(nbatch));
    ia.push_back(Expr(int64_t{0}));
    ia.push_back(k);
    const Expr j = i.back();
    return cast_to(ct, a(ia)) * cast_to(ct, bp(tir::floordiv(j, Expr(nb)), k, tir::floormod(j, Expr(nb))));
  };
  ir::Shape pshape = oshape;
  pshape[nbatch] = kSplitK;
  pshape.back() = np;
  tir::IterVar kr = tir::reduce_axis(slice, "kr");
  Tensor partial = tir::compute(
      pshape, [&](const std::vector<Var>& i) { return tir::sum(term(i, Expr(i[nbatch]) * slice + kr.var()), {kr}); },
      "matmul_acc");
  Tensor tail;
  if (rem > 0) {
    ir::Shape tshape = oshape;
    tshape.back() = np;
    tir::IterVar kt = tir::reduce_axis(rem, "kt");
    tail = tir::compute(
        tshape, [&](const std::vector<Var>& i) { return tir::sum(term(i, Expr(kSplitK * slice) + kt.var()), {kt}); },
        "matmul_ktail");
  }
  tir::IterVar s = tir::reduce_axis(kSplitK, "s");
  Tensor total = tir::compute(
      oshape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx = as_exprs(i);
        idx[nbatch] = s.var();
        return tir::sum(partial(idx), {s});
      },
      "matmul_sum");
  ComputeResult r;
  r.schedule = ScheduleKind::kMatmul;
  r.parts["anchor"] = partial;
  r.layout["n_block"] = nb;
  r.layout["row_tile"] = kSplitK;
  r.layout["k_split"] = kSplitK;  // the anchor's rows are slices of K: no epilogue on its tile
  if (rem > 0) {
    r.outputs = {tir::compute(
        oshape, [&](const std::vector<Var>& i) { return cast_to(dt, total(as_exprs(i)) + tail(as_exprs(i))); },
        "matmul_packed")};
  } else {
    r.outputs = {ct == dt ? total : unpad_output(total, oshape, dt, "matmul_packed")};
  }
  return r;
}

// matmul_packed: the blocked product of matmul_compute on panels that are already packed (no
// pack stage in the kernel); n_block is the panels' width. M = 1: matrix_vector.
ComputeResult matmul_packed_compute(const std::vector<Tensor>& in, const ir::Attrs&,
                                    const std::vector<ir::TensorType>& out, const LayoutHints& hints) {
  const Tensor a = in[0], bp = in[1];
  const DType dt = out[0].dtype, ct = compute_dtype(dt);
  const ir::Shape& oshape = out[0].shape;
  const size_t nbatch = oshape.size() - 2;
  const int64_t K = a.shape().back(), nb = bp.shape()[2];
  const int64_t M = oshape[nbatch];
  if (M == 1 && K >= kSplitMinK) return matrix_vector(a, bp, oshape, dt, ct);
  const int64_t tile_m = row_tile(M, hints);
  const ir::Shape pshape = padded_shape(oshape, nbatch, tile_m, nb);
  tir::IterVar k = tir::reduce_axis(K, "k");
  Tensor prod = tir::compute(
      pshape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> ia(i.begin(), i.begin() + static_cast<long>(nbatch));
        ia.push_back(clamp_row(i[nbatch], M, pshape[nbatch]));
        ia.push_back(k);
        const Expr j = i.back();
        const Expr vb = bp(tir::floordiv(j, Expr(nb)), Expr(k), tir::floormod(j, Expr(nb)));
        return tir::sum(cast_to(ct, a(ia)) * cast_to(ct, vb), {k});
      },
      "matmul_acc");
  ComputeResult r;
  r.schedule = ScheduleKind::kMatmul;
  r.parts["anchor"] = prod;
  r.layout["n_block"] = nb;
  r.layout["row_tile"] = tile_m;
  r.outputs = {ct == dt && pshape == oshape ? prod : unpad_output(prod, oshape, dt, "matmul_packed")};
  return r;
}
KILN_REGISTER_COMPUTE(matmul_packed, "matmul_packed", matmul_packed_compute);

}  // namespace
}  // namespace kiln::topi
