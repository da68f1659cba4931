// The protobuf side of `kiln quantize` (kiln/frontend/onnx_qdq.h): reads a model's facts, adds
// graph outputs for calibration, and rewrites a model into the standard QDQ form (or its f32
// fake-quantized twin) from a QdqPlan computed elsewhere. No quantization decision is made here.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <utility>

#include "kiln/frontend/onnx_qdq.h"
#include "kiln/support/error.h"
#include "onnx_tensor_proto.h"

namespace kiln::frontend::qdq {
namespace {

using ir::DType;
using ir::NDArray;

onnx::ModelProto parse_model(const std::string& path) {
  onnx::ModelProto model;
  if (!model.ParseFromString(onnx_import::read_model_file(path)) || !model.has_graph()) {
    throw UserError(UserErrorKind::kParse, path, "not a valid ONNX model: protobuf parsing failed",
                    "check that the file is a complete .onnx model (e.g. load it with onnx.load)");
  }
  return model;
}

std::string model_dir(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

int onnx_elem_type(DType d) {
  switch (d) {
    case DType::kF32: return onnx::TensorProto::FLOAT;
    case DType::kU8: return onnx::TensorProto::UINT8;
    case DType::kI8: return onnx::TensorProto::INT8;
    case DType::kI32: return onnx::TensorProto::INT32;
    case DType::kI64: return onnx::TensorProto::INT64;
    default: KILN_IFAIL() << "onnx_qdq_writer: no ONNX type for " << ir::dtype_name(d);
  }
  return 0;
}

bool dtype_of_elem(int t, DType* out) {
  switch (t) {
    case onnx::TensorProto::FLOAT: *out = DType::kF32; return true;
    case onnx::TensorProto::UINT8: *out = DType::kU8; return true;
    case onnx::TensorProto::INT8: *out = DType::kI8; return true;
    case onnx::TensorProto::INT32: *out = DType::kI32; return true;
    case onnx::TensorProto::INT64: *out = DType::kI64; return true;
    case onnx::TensorProto::BOOL: *out = DType::kBool; return true;
    case onnx::TensorProto::FLOAT16: *out = DType::kF16; return true;
    case onnx::TensorProto::DOUBLE: *out = DType::kF64; return true;
    default: return false;
  }
}

// Gives the f32 initializers named in `values` their new values (same shape, checked).
void set_float_values(onnx::GraphProto* g, const std::map<std::string, NDArray>& values) {
  size_t found = 0;
  for (auto& t : *g->mutable_initializer()) {
    auto it = values.find(t.name());
    if (it == values.end()) continue;
    const NDArray& a = it->second;
    KILN_ICHECK(a.dtype() == DType::kF32 && t.data_type() == onnx::TensorProto::FLOAT && a.shape().size() == static_cast<size_t>(t.dims_size()))
        << "onnx_qdq_writer: new value of initializer '" << t.name() << "' does not match it";
    for (int d = 0; d < t.dims_size(); ++d) KILN_ICHECK(t.dims(d) == a.shape()[static_cast<size_t>(d)]) << t.name();
    t.clear_float_data();
    t.clear_external_data();
    t.clear_data_location();
    t.set_raw_data(a.raw_data(), a.nbytes());
    ++found;
  }
  KILN_ICHECK(found == values.size()) << "onnx_qdq_writer: a new f32 value names no initializer";
}

// Every name the graph (and its subgraphs) uses, to make fresh ones.
class NameSet {
 public:
  explicit NameSet(const onnx::GraphProto& g) { collect(g); }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

 private:
  void collect(const onnx::GraphProto& g) {
    for (const auto& v : g.input()) used_.insert(v.name());
    for (const auto& v : g.output()) used_.insert(v.name());
    for (const auto& t : g.initializer()) used_.insert(t.name());
    for (const auto& n : g.node()) {
      used_.insert(n.name());
      for (const auto& o : n.output()) used_.insert(o);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect(a.g());
        for (const auto& sg : a.graphs()) collect(sg);
      }
    }
  }
  std::set<std::string> used_;
};

// Names read by the nodes of `g` and of its subgraphs.
void collect_reads(const onnx::GraphProto& g, std::set<std::string>* out) {
  for (const auto& n : g.node()) {
    out->insert(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_reads(a.g(), out);
      for (const auto& sg : a.graphs()) collect_reads(sg, out);
    }
  }
}

// Builds the rewritten graph: new initializers and the new node list.
class Rewriter {
 public:
  Rewriter(onnx::GraphProto* g, QdqForm form) : g_(g), names_(*g), form_(form) {}

  std::string add_initializer(const std::string& base, const NDArray& a) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(names_.fresh(base));
    t->set_data_type(onnx_elem_type(a.dtype()));
    for (int64_t d : a.shape()) t->add_dims(d);
    t->set_raw_data(a.raw_data(), a.nbytes());
    return t->name();
  }
  std::string scalar(const std::string& base, DType d, double v) {
    return add_initializer(base, NDArray::scalar(d, v));
  }
  std::string vector_f32(const std::string& base, const std::vector<float>& v) {
    NDArray a = NDArray::empty(DType::kF32, {static_cast<int64_t>(v.size())});
    std::memcpy(a.mutable_raw_data(), v.data(), v.size() * sizeof(float));
    return add_initializer(base, a);
  }

  // Appends a node to `out`; returns its first output.
  std::string node(std::vector<onnx::NodeProto>& out, const std::string& op, const std::vector<std::string>& inputs,
                   const std::string& base, int n_outputs = 1, const std::string& output = "") {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(names_.fresh(base + "_" + op));
    for (const auto& i : inputs) n.add_input(i);
    for (int k = 0; k < n_outputs; ++k) {
      n.add_output(k == 0 && !output.empty() ? output : names_.fresh(base + "_" + op + "_Output" + (k ? std::to_string(k) : "")));
    }
    out.push_back(n);
    return out.back().output(0);
  }
  static void set_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  // kFakeQuantGated: a new f32 scalar graph input switching the quantization of `what`.
  std::string gate(const std::string& what) {
    auto* in = g_->add_input();
    in->set_name(names_.fresh("kiln_gate_" + what));
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    in->mutable_type()->mutable_tensor_type()->mutable_shape();  // rank 0
    gates_[what] = in->name();
    return in->name();
  }
  // x + g * (fq - x)
  std::string gated(std::vector<onnx::NodeProto>& out, const std::string& x, const std::string& fq, const std::string& what) {
    const std::string g = gate(what);
    return node(out, "Add", {x, node(out, "Mul", {node(out, "Sub", {fq, x}, what), g}, what)}, what);
  }
  const std::map<std::string, std::string>& gates() const { return gates_; }

  // T -> Q -> DQ (or its f32 emulation); returns the dequantized name.
  std::string activation(std::vector<onnx::NodeProto>& out, const std::string& t, const ActivationQuant& q) {
    const bool u8 = q.dtype == DType::kU8;
    if (form_ == QdqForm::kStandard) {
      const std::string s = scalar(t + "_scale", DType::kF32, q.scale);
      const std::string zp = scalar(t + "_zero_point", q.dtype, q.zero_point);
      const std::string qn = node(out, "QuantizeLinear", {t, s, zp}, t);
      return node(out, "DequantizeLinear", {qn, s, zp}, t);
    }
    const std::string s = scalar(t + "_scale", DType::kF32, q.scale);
    const std::string zp = scalar(t + "_zero_point", DType::kF32, q.zero_point);
    const std::string lo = scalar(t + "_qmin", DType::kF32, u8 ? 0 : -128);
    const std::string hi = scalar(t + "_qmax", DType::kF32, u8 ? 255 : 127);
    std::string v = node(out, "Div", {t, s}, t);
    v = node(out, "Round", {v}, t);
    v = node(out, "Add", {v, zp}, t);
    v = node(out, "Clip", {v, lo, hi}, t);
    v = node(out, "Sub", {v, zp}, t);
    v = node(out, "Mul", {v, s}, t);
    return form_ == QdqForm::kFakeQuantGated ? gated(out, t, v, t) : v;
  }

  // An integer initializer + DequantizeLinear (or its dequantized f32 values); returns the name.
  // `original`: the f32 initializer it replaces (read by the gated form).
  std::string initializer(std::vector<onnx::NodeProto>& out, const std::string& base, const QuantizedInitializer& q,
                          const std::string& original) {
    const NDArray& v = q.values;
    if (form_ == QdqForm::kFakeQuantF32) return add_initializer(base + "_fakequant", dequantized(q));
    if (form_ == QdqForm::kFakeQuantGated) return gated(out, original, add_initializer(base + "_fakequant", dequantized(q)), base);
    const std::string values = add_initializer(base + "_quantized", v);
    std::string scale, zp;
    if (q.axis < 0) {
      scale = scalar(base + "_scale", DType::kF32, q.scales.at(0));
      zp = scalar(base + "_zero_point", v.dtype(), 0);
    } else {
      scale = vector_f32(base + "_scale", q.scales);
      zp = add_initializer(base + "_zero_point",
                           NDArray::empty(v.dtype(), {static_cast<int64_t>(q.scales.size())}));  // zero-filled
    }
    const std::string r = node(out, "DequantizeLinear", {values, scale, zp}, base);
    if (q.axis >= 0) set_int(out.back(), "axis", q.axis);
    return r;
  }

  static NDArray dequantized(const QuantizedInitializer& q) {
    const NDArray& v = q.values;
    NDArray f = NDArray::empty(DType::kF32, v.shape());
    int64_t inner = 1;
    if (q.axis >= 0) {
      for (size_t d = static_cast<size_t>(q.axis) + 1; d < v.shape().size(); ++d) inner *= v.shape()[d];
    }
    const int64_t channels = static_cast<int64_t>(q.scales.size());
    for (int64_t i = 0; i < v.numel(); ++i) {
      const float s = q.axis < 0 ? q.scales[0] : q.scales[static_cast<size_t>((i / inner) % channels)];
      f.set_from_double(i, static_cast<float>(v.get_as_double(i)) * s);
    }
    return f;
  }

  // The dynamic-quantization subgraph of a MatMul/Gemm writing `output`.
  void dynamic(std::vector<onnx::NodeProto>& out, const std::string& x, const DynamicMatMul& d, const std::string& output,
               const std::string& base) {
    const bool has_bias = d.bias.defined();
    std::string y;
    if (form_ == QdqForm::kStandard) {
      const auto& q = d.weight;
      node(out, "DynamicQuantizeLinear", {x}, base, 3);
      const onnx::NodeProto dql = out.back();
      const std::string w = add_initializer(base + "_W_quantized", q.values);
      const std::string wzp =
          add_initializer(base + "_W_zero_point", NDArray::empty(DType::kI8, {static_cast<int64_t>(q.scales.size())}));
      std::string acc = node(out, "MatMulInteger", {dql.output(0), w, dql.output(2), wzp}, base);
      acc = node(out, "Cast", {acc}, base);
      set_int(out.back(), "to", onnx::TensorProto::FLOAT);
      const std::string s = node(out, "Mul", {dql.output(1), vector_f32(base + "_W_scale", q.scales)}, base);
      y = node(out, "Mul", {acc, s}, base, 1, has_bias ? "" : output);
    } else {
      const std::string zero = scalar(base + "_zero", DType::kF32, 0);
      std::string mn = node(out, "ReduceMin", {x}, base);
      set_int(out.back(), "keepdims", 0);
      std::string mx = node(out, "ReduceMax", {x}, base);
      set_int(out.back(), "keepdims", 0);
      mn = node(out, "Min", {mn, zero}, base);
      mx = node(out, "Max", {mx, zero}, base);
      std::string s = node(out, "Div", {node(out, "Sub", {mx, mn}, base), scalar(base + "_255", DType::kF32, 255)}, base);
      s = node(out, "Max", {s, scalar(base + "_tiny", DType::kF32, 1e-30)}, base);
      const std::string lo = scalar(base + "_qmin", DType::kF32, 0);
      const std::string hi = scalar(base + "_qmax", DType::kF32, 255);
      std::string zp = node(out, "Neg", {node(out, "Div", {mn, s}, base)}, base);
      zp = node(out, "Clip", {node(out, "Round", {zp}, base), lo, hi}, base);
      std::string v = node(out, "Round", {node(out, "Div", {x, s}, base)}, base);
      v = node(out, "Clip", {node(out, "Add", {v, zp}, base), lo, hi}, base);
      v = node(out, "Mul", {node(out, "Sub", {v, zp}, base), s}, base);
      y = node(out, "MatMul", {v, add_initializer(base + "_W_fakequant", dequantized(d.weight))}, base, 1,
               has_bias ? "" : output);
    }
    if (has_bias) node(out, "Add", {y, add_initializer(base + "_bias", d.bias)}, base, 1, output);
  }

 private:
  onnx::GraphProto* g_;
  NameSet names_;
  QdqForm form_;
  std::map<std::string, std::string> gates_;
};

}  // namespace

ModelFacts read_model_facts(const std::string& path) {
  const onnx::ModelProto model = parse_model(path);
  const onnx::GraphProto& g = model.graph();
  ModelFacts f;
  f.path = path;
  for (const auto& imp : model.opset_import()) {
    if (imp.domain().empty() || imp.domain() == "ai.onnx") f.opset = static_cast<int>(imp.version());
  }
  for (const auto& t : g.initializer()) {
    f.initializer_names.insert(t.name());
    if (t.data_type() == onnx::TensorProto::FLOAT) {
      f.float_initializers[t.name()] =
          onnx_import::onnx_tensor_to_ndarray(t, model_dir(path), path + ": initializer '" + t.name() + "'");
    }
  }
  for (const auto& vi : g.input()) {
    if (f.initializer_names.count(vi.name())) continue;
    ModelInput in;
    in.name = vi.name();
    if (vi.type().has_tensor_type()) {
      const auto& tt = vi.type().tensor_type();
      in.has_dtype = dtype_of_elem(tt.elem_type(), &in.dtype);
      for (const auto& d : tt.shape().dim()) in.dims.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : -1);
    }
    f.inputs.push_back(in);
  }
  for (const auto& vi : g.output()) f.outputs.push_back(vi.name());
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& p = g.node(i);
    ModelNode n;
    n.index = i;
    n.name = p.name();
    n.op_type = p.op_type();
    n.domain = p.domain() == "ai.onnx" ? "" : p.domain();
    n.inputs.assign(p.input().begin(), p.input().end());
    n.outputs.assign(p.output().begin(), p.output().end());
    for (const auto& a : p.attribute()) {
      if (a.type() == onnx::AttributeProto::INT) n.ints[a.name()] = a.i();
      if (a.type() == onnx::AttributeProto::FLOAT) n.floats[a.name()] = a.f();
      if (a.type() == onnx::AttributeProto::INTS) n.int_lists[a.name()].assign(a.ints().begin(), a.ints().end());
      if (a.type() == onnx::AttributeProto::STRING) n.strings[a.name()] = a.s();
      const bool one_element = std::all_of(a.t().dims().begin(), a.t().dims().end(), [](int64_t d) { return d == 1; });
      if (n.op_type == "Constant" && a.name() == "value" && a.has_t() && a.t().data_type() == onnx::TensorProto::FLOAT &&
          one_element && p.output_size() == 1) {
        const NDArray v = onnx_import::onnx_tensor_to_ndarray(a.t(), model_dir(path), path + ": Constant '" + p.name() + "'");
        if (v.numel() == 1) f.scalar_constants[p.output(0)] = v.get_as_double(0);
      }
      if (a.has_g() || a.graphs_size() > 0) n.has_subgraph = true;
    }
    f.nodes.push_back(std::move(n));
  }
  return f;
}

std::string model_bytes_with_outputs(const std::string& path, const std::vector<std::string>& tensors,
                                     const std::map<std::string, NDArray>& float_values) {
  onnx::ModelProto model = parse_model(path);
  set_float_values(model.mutable_graph(), float_values);
  std::set<std::string> present;
  for (const auto& vi : model.graph().output()) present.insert(vi.name());
  for (const auto& t : tensors) {
    if (present.insert(t).second) model.mutable_graph()->add_output()->set_name(t);
  }
  return model.SerializeAsString();
}

std::string write_qdq_model(const std::string& path, const QdqPlan& plan, QdqForm form,
                            const std::vector<std::string>& extra_outputs, std::map<std::string, std::string>* gates) {
  onnx::ModelProto model = parse_model(path);
  onnx::GraphProto* g = model.mutable_graph();
  for (auto& imp : *model.mutable_opset_import()) {
    if ((imp.domain().empty() || imp.domain() == "ai.onnx") && imp.version() < 13) {
      throw UserError(UserErrorKind::kUnsupported, path,
                      "opset " + std::to_string(imp.version()) + ": per-channel QuantizeLinear/DequantizeLinear need opset 13",
                      "export the model with opset 13 or newer (torch.onnx.export(..., opset_version=13))");
    }
  }
  set_float_values(g, plan.float_values);
  Rewriter rw(g, form);
  std::set<std::string> produced;
  for (const auto& n : g->node()) produced.insert(n.output().begin(), n.output().end());

  std::vector<onnx::NodeProto> nodes;
  std::map<std::string, std::string> renamed;  // activation -> its dequantized name
  for (const auto& [t, q] : plan.activations) {
    if (!produced.count(t)) renamed[t] = rw.activation(nodes, t, q);  // graph inputs
  }
  std::map<std::pair<int, int>, std::string> replaced;  // (node, input) -> dequantized initializer
  std::map<std::string, std::string> by_key;
  std::set<std::string> dropped;  // initializers replaced
  for (const auto& r : plan.replacements) {
    auto it = by_key.find(r.key);
    if (it == by_key.end()) it = by_key.emplace(r.key, rw.initializer(nodes, r.key, r.q, g->node(r.node).input(r.input))).first;
    replaced[{r.node, r.input}] = it->second;
    dropped.insert(g->node(r.node).input(r.input));
  }
  std::map<int, const DynamicMatMul*> dynamic;
  for (const auto& d : plan.dynamic) {
    dynamic[d.node] = &d;
    for (int i = 1; i < g->node(d.node).input_size(); ++i) dropped.insert(g->node(d.node).input(i));
  }

  for (int k = 0; k < g->node_size(); ++k) {
    onnx::NodeProto n = g->node(k);
    for (int j = 0; j < n.input_size(); ++j) {
      if (auto r = replaced.find({k, j}); r != replaced.end()) {
        n.set_input(j, r->second);
      } else if (plan.f32_reads.count({k, j})) {
        continue;  // an f32 node reading an f32-produced tensor: the original value
      } else if (auto a = renamed.find(n.input(j)); a != renamed.end()) {
        n.set_input(j, a->second);
      }
    }
    if (auto d = dynamic.find(k); d != dynamic.end()) {
      rw.dynamic(nodes, n.input(0), *d->second, n.output(0), n.name().empty() ? n.output(0) : n.name());
    } else {
      nodes.push_back(n);
    }
    for (const auto& o : g->node(k).output()) {
      if (auto q = plan.activations.find(o); q != plan.activations.end()) renamed[o] = rw.activation(nodes, o, q->second);
    }
  }
  g->clear_node();
  for (auto& n : nodes) *g->add_node() = std::move(n);

  std::set<std::string> outputs;
  for (const auto& vi : g->output()) outputs.insert(vi.name());
  for (const auto& t : extra_outputs) {
    if (outputs.insert(t).second) g->add_output()->set_name(t);
  }
  std::set<std::string> reads;
  collect_reads(*g, &reads);
  auto unused = [&](const std::string& name) { return dropped.count(name) && !reads.count(name) && !outputs.count(name); };
  auto* inits = g->mutable_initializer();
  inits->erase(std::remove_if(inits->begin(), inits->end(), [&](const onnx::TensorProto& t) { return unused(t.name()); }),
               inits->end());
  auto* ins = g->mutable_input();
  ins->erase(std::remove_if(ins->begin(), ins->end(), [&](const onnx::ValueInfoProto& v) { return unused(v.name()); }),
             ins->end());
  g->clear_value_info();  // shapes/types of renamed values would be stale
  if (gates) *gates = rw.gates();
  return model.SerializeAsString();
}

}  // namespace kiln::frontend::qdq
