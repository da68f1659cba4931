// Known integer values through the shape-computing ops (see known_values.h).
#include "known_values.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>

#include "kiln/support/error.h"
#include "kiln/tir/interval.h"

namespace kiln::frontend::onnx_import {
namespace {

using ir::Dim;
using ir::DType;
using Known = std::optional<KnownInts>;

// The elements of a scalar or vector input that must be constant (indices, axes, Slice bounds).
std::optional<std::vector<int64_t>> static_input(const ImportContext& ctx, size_t i) {
  Known k = ctx.known_input(i);
  if (!k || !k->is_static()) return std::nullopt;
  std::vector<int64_t> v;
  for (const Dim& d : k->elems) v.push_back(d.value());
  return v;
}

// a op b elementwise, numpy-broadcast between scalars, length-1 and length-n vectors. `op`
// returns nullopt when it cannot decide an element.
Known broadcast_binary(const KnownInts& a, const KnownInts& b, DType dtype,
                       const std::function<std::optional<Dim>(const Dim&, const Dim&)>& op) {
  const size_t na = a.elems.size(), nb = b.elems.size();
  if (na != nb && na != 1 && nb != 1) return std::nullopt;
  KnownInts out;
  out.dtype = dtype;
  out.scalar = a.scalar && b.scalar;
  const size_t n = std::max(na, nb);
  for (size_t i = 0; i < n; ++i) {
    std::optional<Dim> r = op(a.elems[na == 1 ? 0 : i], b.elems[nb == 1 ? 0 : i]);
    if (!r) return std::nullopt;
    out.elems.push_back(*r);
  }
  return out;
}

Known arithmetic(const ImportContext& ctx, const std::function<std::optional<Dim>(const Dim&, const Dim&)>& op) {
  Known a = ctx.known_input(0), b = ctx.known_input(1);
  if (!a || !b || a->dtype != b->dtype) return std::nullopt;
  return broadcast_binary(*a, *b, a->dtype, op);
}

// Integer Div truncates toward zero (C, ONNX Runtime); floordiv agrees where the dividend is
// provably non-negative and the divisor a positive constant.
std::optional<Dim> divide(const Dim& a, const Dim& b) {
  if (!b.is_static() || b.value() <= 0) return std::nullopt;
  if (a.is_static()) return Dim(a.value() / b.value());
  if (!provably_non_negative(a)) return std::nullopt;
  return ir::dim_floordiv(a, b);
}

// Integer Mod (fmod = 0) takes the divisor's sign: floormod, for a positive constant divisor.
std::optional<Dim> modulo(const Dim& a, const Dim& b) {
  if (!b.is_static() || b.value() <= 0) return std::nullopt;
  if (a.is_static()) return Dim(((a.value() % b.value()) + b.value()) % b.value());
  return Dim::of(tir::floormod(a.expr(), b.expr()));
}

Known shape_rule(const ImportContext& ctx) {
  const ir::Shape& shape = ctx.input(0).type().shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  KnownInts out;
  for (int64_t i = start; i < end; ++i) out.elems.push_back(shape[i]);
  return out;
}

Known size_rule(const ImportContext& ctx) {
  Dim n = 1;
  for (const Dim& d : ctx.input(0).type().shape) n = ir::dim_mul(n, d);
  return KnownInts{DType::kI64, true, {n}};
}

Known cast_rule(const ImportContext& ctx) {
  Known x = ctx.known_input(0);
  DType to;
  if (!x || !onnx_dtype(ctx.attr_int("to", 0), &to) || (to != DType::kI64 && to != DType::kI32)) return std::nullopt;
  x->dtype = to;
  return x;
}

Known gather_rule(const ImportContext& ctx) {
  Known data = ctx.known_input(0);
  Known indices = ctx.known_input(1);
  if (!data || data->scalar || !indices || !indices->is_static() || ctx.attr_int("axis", 0) != 0) return std::nullopt;
  const int64_t n = static_cast<int64_t>(data->elems.size());
  KnownInts out;
  out.dtype = data->dtype;
  out.scalar = indices->scalar;
  for (const Dim& i : indices->elems) {
    int64_t k = i.value();
    if (k < 0) k += n;
    if (k < 0 || k >= n) return std::nullopt;  // the converter reports the index
    out.elems.push_back(data->elems[k]);
  }
  return out;
}

// The axes of Unsqueeze/Squeeze: input 1 from opset 13, the attribute before.
std::optional<std::vector<int64_t>> axes_of(const ImportContext& ctx) {
  if (ctx.opset() >= 13) return ctx.has_input(1) ? static_input(ctx, 1) : std::vector<int64_t>{};
  return ctx.attr_ints("axes", {});
}

Known unsqueeze_rule(const ImportContext& ctx) {
  Known x = ctx.known_input(0);
  std::optional<std::vector<int64_t>> axes = axes_of(ctx);
  if (!x || !x->scalar || !axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
  x->scalar = false;
  return x;
}

Known squeeze_rule(const ImportContext& ctx) {
  Known x = ctx.known_input(0);
  std::optional<std::vector<int64_t>> axes = axes_of(ctx);
  if (!x || x->scalar || x->elems.size() != 1 || !axes || axes->size() > 1) return std::nullopt;
  if (axes->size() == 1 && (*axes)[0] != 0 && (*axes)[0] != -1) return std::nullopt;
  x->scalar = true;
  return x;
}

Known concat_rule(const ImportContext& ctx) {
  const int64_t axis = ctx.attr_int("axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  KnownInts out;
  for (size_t i = 0; i < ctx.node().inputs.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    Known x = ctx.known_input(i);
    if (!x || x->scalar || (i > 0 && x->dtype != out.dtype)) return std::nullopt;
    out.dtype = x->dtype;
    out.elems.insert(out.elems.end(), x->elems.begin(), x->elems.end());
  }
  return out;
}

Known reshape_rule(const ImportContext& ctx) {
  Known x = ctx.known_input(0);
  std::optional<std::vector<int64_t>> shape = static_input(ctx, 1);
  if (!x || !shape || shape->size() > 1) return std::nullopt;
  const int64_t n = static_cast<int64_t>(x->elems.size());
  if (shape->empty()) {
    if (n != 1) return std::nullopt;
    x->scalar = true;
    return x;
  }
  const int64_t want = (*shape)[0];
  if (want != -1 && want != n && !(want == 0 && !x->scalar)) return std::nullopt;
  x->scalar = false;
  return x;
}

Known slice_rule(const ImportContext& ctx) {
  Known x = ctx.known_input(0);
  std::optional<std::vector<int64_t>> starts = static_input(ctx, 1), ends = static_input(ctx, 2);
  if (!x || x->scalar || !starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  if (ctx.has_input(3)) {
    std::optional<std::vector<int64_t>> axes = static_input(ctx, 3);
    if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
  }
  int64_t step = 1;
  if (ctx.has_input(4)) {
    std::optional<std::vector<int64_t>> steps = static_input(ctx, 4);
    if (!steps || steps->size() != 1 || (*steps)[0] == 0) return std::nullopt;
    step = (*steps)[0];
  }
  const int64_t n = static_cast<int64_t>(x->elems.size());
  int64_t start = (*starts)[0], end = (*ends)[0];
  if (start < 0) start += n;
  if (end < 0) end += n;
  KnownInts out;
  out.dtype = x->dtype;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
    for (int64_t i = start; i < end; i += step) out.elems.push_back(x->elems[i]);
  } else {
    start = std::clamp<int64_t>(start, -1, n - 1);
    end = std::clamp<int64_t>(end, -1, n - 1);
    for (int64_t i = start; i > end; i += step) out.elems.push_back(x->elems[i]);
  }
  return out;
}

Known equal_rule(const ImportContext& ctx) {
  Known a = ctx.known_input(0), b = ctx.known_input(1);
  if (!a || !b) return std::nullopt;
  return broadcast_binary(*a, *b, DType::kBool, [](const Dim& x, const Dim& y) -> std::optional<Dim> {
    if (x == y) return Dim(1);
    // Sizes are never negative: `batch` differs from -1 (Where(Equal(shape, -1), 1, shape)).
    const Dim diff = ir::dim_sub(x, y);
    if (provably_non_negative(ir::dim_sub(diff, 1)) || provably_non_negative(ir::dim_sub(Dim(-1), diff))) return Dim(0);
    return std::nullopt;
  });
}

Known where_rule(const ImportContext& ctx) {
  Known c = ctx.known_input(0), x = ctx.known_input(1), y = ctx.known_input(2);
  if (!c || !x || !y || !c->is_static() || x->dtype != y->dtype) return std::nullopt;
  // The condition's length broadcasts with the pair's.
  Known xy = broadcast_binary(*x, *y, x->dtype, [](const Dim& a, const Dim&) { return std::optional<Dim>(a); });
  if (!xy) return std::nullopt;
  const size_t n = std::max(c->elems.size(), xy->elems.size());
  const size_t nc = c->elems.size(), nx = x->elems.size(), ny = y->elems.size();
  if ((nc != n && nc != 1) || (nx != n && nx != 1) || (ny != n && ny != 1)) return std::nullopt;
  KnownInts out;
  out.dtype = x->dtype;
  out.scalar = c->scalar && x->scalar && y->scalar;
  for (size_t i = 0; i < n; ++i) {
    const bool take_x = c->elems[nc == 1 ? 0 : i].value() != 0;
    out.elems.push_back(take_x ? x->elems[nx == 1 ? 0 : i] : y->elems[ny == 1 ? 0 : i]);
  }
  return out;
}

using Rule = std::function<Known(const ImportContext&)>;

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = {
      {"Shape", shape_rule},
      {"Size", size_rule},
      {"Identity", [](const ImportContext& ctx) { return ctx.known_input(0); }},
      {"Cast", cast_rule},
      {"Gather", gather_rule},
      {"Unsqueeze", unsqueeze_rule},
      {"Squeeze", squeeze_rule},
      {"Concat", concat_rule},
      {"Reshape", reshape_rule},
      {"Slice", slice_rule},
      {"Add", [](const ImportContext& ctx) { return arithmetic(ctx, [](const Dim& a, const Dim& b) { return std::optional<Dim>(ir::dim_add(a, b)); }); }},
      {"Sub", [](const ImportContext& ctx) { return arithmetic(ctx, [](const Dim& a, const Dim& b) { return std::optional<Dim>(ir::dim_sub(a, b)); }); }},
      {"Mul", [](const ImportContext& ctx) { return arithmetic(ctx, [](const Dim& a, const Dim& b) { return std::optional<Dim>(ir::dim_mul(a, b)); }); }},
      {"Div", [](const ImportContext& ctx) { return arithmetic(ctx, divide); }},
      {"Mod", [](const ImportContext& ctx) { return ctx.attr_int("fmod", 0) == 0 ? arithmetic(ctx, modulo) : std::nullopt; }},
      {"Max", [](const ImportContext& ctx) {
         return ctx.node().inputs.size() == 2 ? arithmetic(ctx, [](const Dim& a, const Dim& b) { return std::optional<Dim>(ir::dim_max(a, b)); }) : std::nullopt;
       }},
      {"Min", [](const ImportContext& ctx) {
         return ctx.node().inputs.size() == 2 ? arithmetic(ctx, [](const Dim& a, const Dim& b) { return std::optional<Dim>(ir::dim_min(a, b)); }) : std::nullopt;
       }},
      {"Equal", equal_rule},
      {"Where", where_rule},
  };
  return table;
}

}  // namespace

bool provably_non_negative(const Dim& d) {
  if (d.is_static()) return d.value() >= 0;
  tir::VarBounds bounds;
  for (const tir::Var& v : ir::dim_vars_of(d)) bounds[v.node()] = tir::Interval::range(0, int64_t{1} << 40);
  return tir::bound_of(d.expr(), bounds).lo >= 0;
}

std::optional<KnownInts> propagate_known(const ImportContext& ctx) {
  const OnnxNode& node = ctx.node();
  auto it = rules().find(node.op_type);
  if (it == rules().end() || node.outputs.size() != 1) return std::nullopt;
  // Only values computed at run time: where every input is a constant the converter folds the
  // node with the reference executor (ONNX's exact semantics, wrapping included).
  bool run_time = false;
  if (node.op_type == "Shape" || node.op_type == "Size") {
    for (const Dim& d : ctx.input(0).type().shape) run_time = run_time || d.is_symbolic();
  } else {
    for (size_t i = 0; i < node.inputs.size() && !run_time; ++i) {
      run_time = ctx.has_input(i) && ctx.input(i).node->kind() != ir::NodeKind::kConstant && ctx.known_input(i).has_value();
    }
  }
  if (!run_time) return std::nullopt;
  Known out = it->second(ctx);
  if (!out || out->elems.size() > kMaxKnownElements || (out->scalar && out->elems.size() != 1)) return std::nullopt;
  // The integer arithmetic of ONNX wraps: a static element must fit its type.
  if (out->dtype == DType::kI32) {
    for (const Dim& d : out->elems) {
      if (d.is_static() && (d.value() < INT32_MIN || d.value() > INT32_MAX)) return std::nullopt;
    }
  }
  return out;
}

ir::NDArray known_array(const KnownInts& k) {
  KILN_ICHECK(k.is_static()) << "known_array of a symbolic value";
  const std::vector<int64_t> shape = k.scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(k.elems.size())};
  ir::NDArray a = ir::NDArray::empty(k.dtype, shape);
  for (size_t i = 0; i < k.elems.size(); ++i) {
    const int64_t v = k.elems[i].value();
    switch (k.dtype) {
      case DType::kI64: a.mutable_data<int64_t>()[i] = v; break;
      default: a.set_from_double(static_cast<int64_t>(i), static_cast<double>(v)); break;
    }
  }
  return a;
}

}  // namespace kiln::frontend::onnx_import
