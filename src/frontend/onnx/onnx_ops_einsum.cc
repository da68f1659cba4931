// ONNX Einsum, decomposed at import into graph ops that compile to fast kernels (the way
// einsum is computed by every BLAS-backed implementation):
//   1. per operand, repeated labels (diagonals, traces) are taken with a transpose of the two
//      axes to the end, a reshape to n*n and a strided_slice of step n + 1;
//   2. labels of size 1 where another operand has n are expanded (ellipsis broadcasting);
//   3. labels that no other operand and not the output use are summed out (reduce_sum);
//   4. operands are contracted left to right: each pair becomes one batched `matmul`
//      [batch, left, contracted] x [batch, contracted, right] around transposes and reshapes
//      (batch = labels both have and something later needs; contracted = both have, nothing later
//      needs);
//   5. a last reduce_sum and transpose give the output's label order.
// The equation may use "..." and may omit "->" (implicit output: the labels used once, sorted,
// after the ellipsis dims).
#include <algorithm>
#include <functional>
#include <map>

#include "kiln/support/error.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Attrs;
using ir::Shape;
using ir::Value;

// Labels are ints: letters 0..51, ellipsis dimensions 100 + their position in the broadcast
// ellipsis (right-aligned).
using Labels = std::vector<int>;
constexpr int kEllipsisBase = 100;

struct Operand {
  Value value;
  Labels labels;
};

int letter_label(ImportContext& ctx, char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  ctx.fail_attr("equation", std::string("contains '") + c + "', expected letters, ',', '...' and '->'");
}

// One term's letters, with -1 standing for the ellipsis.
Labels parse_term(ImportContext& ctx, const std::string& term) {
  Labels out;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == ' ') continue;
    if (term[i] == '.') {
      if (term.compare(i, 3, "...") != 0 || ellipsis) ctx.fail_attr("equation", "has a malformed or repeated '...' in \"" + term + "\"");
      ellipsis = true;
      out.push_back(-1);
      i += 2;
      continue;
    }
    out.push_back(letter_label(ctx, term[i]));
  }
  return out;
}

// Replaces the ellipsis of a term by the labels of the last `dims` of `ellipsis_rank` ellipsis dims.
Labels expand_ellipsis(const Labels& term, int64_t dims, int64_t ellipsis_rank) {
  Labels out;
  for (int l : term) {
    if (l != -1) {
      out.push_back(l);
      continue;
    }
    for (int64_t j = ellipsis_rank - dims; j < ellipsis_rank; ++j) out.push_back(kEllipsisBase + static_cast<int>(j));
  }
  return out;
}

Value reshape_to(ImportContext& ctx, Value x, const Shape& shape) {
  if (x.type().shape == shape) return x;
  return ctx.call1("reshape", {x}, Attrs().set("shape", shape));
}

Value transpose_to(ImportContext& ctx, Value x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return ctx.call1("transpose", {x}, Attrs().set("perm", perm));
}

// Puts the operand's axes in the order `order` (a permutation of its labels).
Operand permute(ImportContext& ctx, const Operand& op, const Labels& order) {
  std::vector<int64_t> perm;
  for (int l : order) perm.push_back(std::find(op.labels.begin(), op.labels.end(), l) - op.labels.begin());
  return {transpose_to(ctx, op.value, perm), order};
}

// Takes the diagonal of every repeated label.
Operand take_diagonals(ImportContext& ctx, Operand op) {
  for (;;) {
    size_t p = 0, q = 0;
    for (size_t i = 0; i < op.labels.size() && q == 0; ++i) {
      for (size_t j = i + 1; j < op.labels.size(); ++j) {
        if (op.labels[i] == op.labels[j]) {
          p = i;
          q = j;
          break;
        }
      }
    }
    if (q == 0) return op;
    const Shape& s = op.value.type().shape;
    if (s[p] != s[q]) ctx.fail_invalid("a repeated label has sizes " + std::to_string(s[p]) + " and " + std::to_string(s[q]));
    const int64_t n = s[p];
    Labels order;
    for (size_t i = 0; i < op.labels.size(); ++i) {
      if (i != p && i != q) order.push_back(op.labels[i]);
    }
    std::vector<int64_t> perm;
    for (size_t i = 0; i < op.labels.size(); ++i) {
      if (i != p && i != q) perm.push_back(static_cast<int64_t>(i));
    }
    perm.push_back(static_cast<int64_t>(p));
    perm.push_back(static_cast<int64_t>(q));
    Value t = transpose_to(ctx, op.value, perm);
    Shape flat;
    for (size_t i = 0; i + 2 < perm.size(); ++i) flat.push_back(s[perm[i]]);
    flat.push_back(n * n);
    const int64_t last = static_cast<int64_t>(flat.size()) - 1;
    Value d = ctx.call1("strided_slice", {reshape_to(ctx, t, flat)},
                        Attrs().set("begins", std::vector<int64_t>{0}).set("ends", std::vector<int64_t>{n * n})
                            .set("axes", std::vector<int64_t>{last}).set("steps", std::vector<int64_t>{n + 1}));
    order.push_back(op.labels[p]);
    op = {d, order};
  }
}

// Sums out the operand's labels that `keep` does not contain.
Operand sum_out(ImportContext& ctx, const Operand& op, const std::function<bool(int)>& keep) {
  std::vector<int64_t> axes;
  Labels rest;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (keep(op.labels[i])) {
      rest.push_back(op.labels[i]);
    } else {
      axes.push_back(static_cast<int64_t>(i));
    }
  }
  if (axes.empty()) return op;
  Value r = ctx.call1("reduce_sum", {op.value}, Attrs().set("axes", axes).set("keepdims", int64_t{0}));
  return {r, rest};
}

bool contains(const Labels& labels, int l) { return std::find(labels.begin(), labels.end(), l) != labels.end(); }

std::vector<Value> convert_einsum(ImportContext& ctx) {
  const std::string equation = ctx.attr_string("equation", "");
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Labels> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(ctx, lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const size_t n_in = ctx.node().inputs.size();
  if (terms.size() != n_in) {
    ctx.fail_attr("equation", "has " + std::to_string(terms.size()) + " operand terms for " + std::to_string(n_in) + " inputs");
  }
  // Ellipsis ranks.
  std::vector<int64_t> ell_dims(n_in, 0);
  int64_t ell_rank = 0;
  std::vector<Operand> ops;
  for (size_t i = 0; i < n_in; ++i) {
    const Value v = ctx.input(i);
    const int64_t explicit_labels = std::count_if(terms[i].begin(), terms[i].end(), [](int l) { return l != -1; });
    const bool has_ell = contains(terms[i], -1);
    const int64_t rank = v.type().rank();
    if ((!has_ell && rank != explicit_labels) || (has_ell && rank < explicit_labels)) {
      ctx.fail_invalid("input " + std::to_string(i) + " has rank " + std::to_string(rank) + ", its equation term has " +
                       std::to_string(explicit_labels) + " labels");
    }
    ell_dims[i] = has_ell ? rank - explicit_labels : 0;
    ell_rank = std::max(ell_rank, ell_dims[i]);
  }
  for (size_t i = 0; i < n_in; ++i) ops.push_back({ctx.input(i), expand_ellipsis(terms[i], ell_dims[i], ell_rank)});
  // Output labels.
  Labels out;
  if (arrow != std::string::npos) {
    const Labels t = parse_term(ctx, equation.substr(arrow + 2));
    out = expand_ellipsis(t, ell_rank, ell_rank);  // ellipsis dims it leaves out are summed
  } else {
    std::map<int, int> count;
    for (const Operand& o : ops) {
      for (int l : o.labels) ++count[l];
    }
    for (int64_t j = 0; j < ell_rank; ++j) out.push_back(kEllipsisBase + static_cast<int>(j));
    for (const auto& [l, c] : count) {
      if (c == 1 && l < kEllipsisBase) out.push_back(l);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::count(out.begin(), out.end(), out[i]) > 1) ctx.fail_attr("equation", "repeats a label in the output");
  }
  // Diagonals, then label sizes (broadcast 1 -> n).
  std::map<int, int64_t> size;
  for (Operand& o : ops) {
    o = take_diagonals(ctx, o);
    for (size_t d = 0; d < o.labels.size(); ++d) {
      const int64_t n = o.value.type().shape[d];
      auto [it, fresh] = size.emplace(o.labels[d], n);
      if (!fresh && it->second != n) {
        if (it->second != 1 && n != 1) {
          ctx.fail_invalid("label sizes " + std::to_string(it->second) + " and " + std::to_string(n) + " do not broadcast");
        }
        it->second = std::max(it->second, n);
      }
    }
  }
  for (int l : out) {
    if (!size.count(l)) ctx.fail_attr("equation", "has an output label that no input uses");
  }
  for (Operand& o : ops) {
    Shape target;
    for (int l : o.labels) target.push_back(size[l]);
    if (target != o.value.type().shape) o.value = ctx.call1("expand", {o.value}, Attrs().set("shape", target));
  }
  // Contract left to right.
  auto needed_after = [&](size_t k, int l) {
    if (contains(out, l)) return true;
    for (size_t j = k + 1; j < ops.size(); ++j) {
      if (contains(ops[j].labels, l)) return true;
    }
    return false;
  };
  Operand acc = sum_out(ctx, ops[0], [&](int l) { return needed_after(0, l); });
  for (size_t k = 1; k < ops.size(); ++k) {
    Operand b = ops[k];
    acc = sum_out(ctx, acc, [&](int l) { return contains(b.labels, l) || needed_after(k, l); });
    b = sum_out(ctx, b, [&](int l) { return contains(acc.labels, l) || needed_after(k, l); });
    Labels batch, left, contracted, right;
    for (int l : acc.labels) {
      if (!contains(b.labels, l)) {
        left.push_back(l);
      } else if (needed_after(k, l)) {
        batch.push_back(l);
      } else {
        contracted.push_back(l);
      }
    }
    for (int l : b.labels) {
      if (!contains(acc.labels, l)) right.push_back(l);
    }
    auto prod = [&](const Labels& ls) {
      int64_t p = 1;
      for (int l : ls) p *= size[l];
      return p;
    };
    auto cat = [](std::initializer_list<Labels> parts) {
      Labels r;
      for (const Labels& p : parts) r.insert(r.end(), p.begin(), p.end());
      return r;
    };
    Operand a3 = permute(ctx, acc, cat({batch, left, contracted}));
    Operand b3 = permute(ctx, b, cat({batch, contracted, right}));
    Value av = reshape_to(ctx, a3.value, {prod(batch), prod(left), prod(contracted)});
    Value bv = reshape_to(ctx, b3.value, {prod(batch), prod(contracted), prod(right)});
    Value m = ctx.call1("matmul", {av, bv});
    Shape result;
    const Labels labels = cat({batch, left, right});
    for (int l : labels) result.push_back(size[l]);
    acc = {reshape_to(ctx, m, result), labels};
  }
  acc = sum_out(ctx, acc, [&](int l) { return contains(out, l); });
  return {permute(ctx, acc, out).value};
}

}  // namespace

void add_einsum_converters(std::map<std::string, Converter>& table) { table["Einsum"] = convert_einsum; }

}  // namespace kiln::frontend::onnx_import
