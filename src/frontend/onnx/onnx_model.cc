// Reading ONNX protobuf: the model file, its opset, tensors (raw, typed fields, external data),
// graph inputs with their shapes, and the walk over the nodes that hands each one to its
// converter (onnx_ops_*.cc). The only file of the importer that includes protobuf/onnx headers.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include "kiln/frontend/onnx.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "external_data.h"
#include "import_limits.h"
#include "node_order.h"
#include "onnx_tensor_proto.h"
#include "onnx_node.h"
#include "size_variables.h"

namespace kiln::frontend {
namespace {

using ir::DType;
using ir::NDArray;
using onnx_import::ImportContext;
using onnx_import::OnnxAttr;
using onnx_import::OnnxNode;
using onnx_import::onnx_type_name;

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw UserError(UserErrorKind::kNotFound, path, "no such file", "check the path");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(UserErrorKind::kIO, path, "cannot open the file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool dtype_from_onnx(int t, DType* out) {
  switch (t) {
    case 1: *out = DType::kF32; return true;
    case 2: *out = DType::kU8; return true;
    case 3: *out = DType::kI8; return true;
    case 5: *out = DType::kI16; return true;
    case 6: *out = DType::kI32; return true;
    case 7: *out = DType::kI64; return true;
    case 9: *out = DType::kBool; return true;
    case 10: *out = DType::kF16; return true;
    case 11: *out = DType::kF64; return true;
    case 16: *out = DType::kBF16; return true;
    case 4: *out = DType::kU16; return true;
    case 12: *out = DType::kU32; return true;
    case 13: *out = DType::kU64; return true;
    default: return false;
  }
}

DType require_dtype(int t, const std::string& subject) {
  DType d;
  if (!dtype_from_onnx(t, &d)) {
    throw UserError(UserErrorKind::kUnsupported, subject, std::string("element type ") + onnx_type_name(t) + " is not supported",
                    "Kiln supports FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64 "
                    "and BOOL");
  }
  return d;
}

// Converts a TensorProto; `model_dir` resolves external data (confined to it: external_data.h).
// The data the file really holds is checked against the shape before the tensor is allocated, so
// a corrupt or hostile shape cannot make the importer allocate more than the file provides.
NDArray tensor_to_ndarray(const onnx::TensorProto& t, const std::string& model_dir, const std::string& subject) {
  DType dtype = require_dtype(t.data_type(), subject);
  ir::Shape shape(t.dims().begin(), t.dims().end());
  const onnx_import::TensorSize size = onnx_import::checked_tensor_size(dtype, shape, subject);
  const int64_t n = size.numel;
  const size_t nbytes = size.nbytes;
  auto size_error = [&](const std::string& where, size_t have) {
    throw UserError(UserErrorKind::kParse, subject,
                    where + " holds " + std::to_string(have) + " bytes/values, its type " +
                        ir::TensorType{dtype, shape}.to_string() + " needs " + std::to_string(nbytes) + " bytes (" +
                        std::to_string(n) + " values)",
                    "the file is truncated or corrupt");
  };
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    onnx_import::ExternalDataRef ref;
    for (const auto& kv : t.external_data()) {
      try {
        if (kv.key() == "location") ref.location = kv.value();
        if (kv.key() == "offset") ref.offset = std::stoll(kv.value());
        if (kv.key() == "length") ref.length = std::stoll(kv.value());
      } catch (const std::exception&) {
        throw UserError(UserErrorKind::kParse, subject, "external data " + kv.key() + " '" + kv.value() + "' is not a number");
      }
    }
    const std::string file = onnx_import::check_external_data(model_dir, ref, nbytes, subject);
    NDArray a = NDArray::empty(dtype, shape);
    onnx_import::read_external_data(file, ref, a.mutable_raw_data(), nbytes, subject);
    return a;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != nbytes) size_error("raw_data", t.raw_data().size());
    NDArray a = NDArray::empty(dtype, shape);
    std::memcpy(a.mutable_raw_data(), t.raw_data().data(), nbytes);  // ONNX raw data is little-endian
    return a;
  }
  const int typed = dtype == DType::kF32   ? t.float_data_size()
                    : dtype == DType::kF64 ? t.double_data_size()
                    : dtype == DType::kI64 ? t.int64_data_size()
                    : (dtype == DType::kU32 || dtype == DType::kU64) ? t.uint64_data_size()
                                                                     : t.int32_data_size();
  if (typed != n) size_error("the typed data field", typed);
  NDArray a = NDArray::empty(dtype, shape);
  auto check = [&](int have) {
    if (have != n) size_error("the typed data field", have);
  };
  switch (dtype) {
    case DType::kF32:
      check(t.float_data_size());
      std::copy(t.float_data().begin(), t.float_data().end(), a.mutable_data<float>().begin());
      break;
    case DType::kF64:
      check(t.double_data_size());
      std::copy(t.double_data().begin(), t.double_data().end(), a.mutable_data<double>().begin());
      break;
    case DType::kI64:
      check(t.int64_data_size());
      std::copy(t.int64_data().begin(), t.int64_data().end(), a.mutable_data<int64_t>().begin());
      break;
    case DType::kF16:
    case DType::kBF16:
      check(t.int32_data_size());
      for (int64_t i = 0; i < n; ++i) a.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(t.int32_data(i));
      break;
    case DType::kU32:
    case DType::kU64:  // uint32 and uint64 travel in uint64_data
      check(t.uint64_data_size());
      for (int64_t i = 0; i < n; ++i) {
        if (dtype == DType::kU32) a.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(t.uint64_data(i));
        else a.mutable_data<uint64_t>()[i] = t.uint64_data(i);
      }
      break;
    default:  // i32, i16, u16, i8, u8, bool travel in int32_data
      check(t.int32_data_size());
      for (int64_t i = 0; i < n; ++i) a.set_from_double(i, t.int32_data(i));
      break;
  }
  return a;
}

// A sparse tensor (a Constant's sparse_value) made dense: values [NNZ] at indices [NNZ] (linear)
// or [NNZ, rank] (coordinates) into a tensor of `dims`, zeros elsewhere.
NDArray sparse_to_ndarray(const onnx::SparseTensorProto& sp, const std::string& model_dir, const std::string& subject) {
  NDArray values = tensor_to_ndarray(sp.values(), model_dir, subject + " values");
  NDArray indices = tensor_to_ndarray(sp.indices(), model_dir, subject + " indices");
  ir::Shape dims(sp.dims().begin(), sp.dims().end());
  onnx_import::checked_tensor_size(values.dtype(), dims, subject + " (dense)");
  NDArray dense = NDArray::empty(values.dtype(), dims);
  const int64_t nnz = values.numel(), total = dense.numel();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const bool linear = indices.shape().size() == 1;
  if (ir::is_float(indices.dtype()) || indices.numel() != (linear ? nnz : nnz * rank)) {
    throw UserError(UserErrorKind::kParse, subject, "sparse tensor indices " + indices.type().to_string() + " do not fit " +
                                                        std::to_string(nnz) + " values of a rank-" + std::to_string(rank) + " tensor");
  }
  // An index outside [0, 2^63) reads as -1 (refused below): the cast of such a double is undefined.
  auto index_at = [&](int64_t i) -> int64_t {
    const double v = indices.get_as_double(i);
    return v >= 0.0 && v < 0x1p63 ? static_cast<int64_t>(v) : -1;
  };
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t flat = 0;
    if (linear) {
      flat = index_at(k);
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t idx = index_at(k * rank + d);
        if (idx < 0 || idx >= dims[d]) {
          flat = -1;  // out of range
          break;
        }
        flat = flat * dims[d] + idx;
      }
    }
    if (flat < 0 || flat >= total) throw UserError(UserErrorKind::kParse, subject, "sparse tensor index out of range");
    dense.set_from_double(flat, values.get_as_double(k));
  }
  return dense;
}

std::shared_ptr<const onnx_import::OnnxGraph> decode_graph(const onnx::GraphProto& g, const std::string& model_dir,
                                                           const std::string& subject);
std::vector<std::string> outer_names(const onnx_import::OnnxGraph& g);

OnnxNode decode_node(const onnx::NodeProto& p, const std::string& model_dir, int index) {
  OnnxNode node;
  node.op_type = p.op_type();
  node.domain = p.domain();
  // Empty or repeated names are made unique by prepare_nodes; errors while decoding use the name
  // an empty one will get.
  node.name = p.name().empty() ? p.op_type() + "_" + std::to_string(index) : p.name();
  node.inputs.assign(p.input().begin(), p.input().end());
  node.outputs.assign(p.output().begin(), p.output().end());
  for (const auto& a : p.attribute()) {
    OnnxAttr attr;
    switch (a.type()) {
      case onnx::AttributeProto::INT: attr.kind = OnnxAttr::kInt; attr.i = a.i(); break;
      case onnx::AttributeProto::FLOAT: attr.kind = OnnxAttr::kFloat; attr.f = a.f(); break;
      case onnx::AttributeProto::STRING: attr.kind = OnnxAttr::kString; attr.s = a.s(); break;
      case onnx::AttributeProto::INTS: attr.kind = OnnxAttr::kInts; attr.ints.assign(a.ints().begin(), a.ints().end()); break;
      case onnx::AttributeProto::FLOATS:
        attr.kind = OnnxAttr::kFloats;
        attr.floats.assign(a.floats().begin(), a.floats().end());
        break;
      case onnx::AttributeProto::STRINGS:
        attr.kind = OnnxAttr::kStrings;
        attr.strings.assign(a.strings().begin(), a.strings().end());
        break;
      case onnx::AttributeProto::TENSOR:
        attr.kind = OnnxAttr::kTensor;
        attr.tensor = tensor_to_ndarray(a.t(), model_dir, "node '" + node.name + "' (" + node.op_type + ") attribute '" + a.name() + "'");
        break;
      case onnx::AttributeProto::SPARSE_TENSOR:
        attr.kind = OnnxAttr::kTensor;
        attr.tensor = sparse_to_ndarray(a.sparse_tensor(), model_dir, "node '" + node.name + "' (" + node.op_type + ") attribute '" + a.name() + "'");
        break;
      case onnx::AttributeProto::GRAPH:
        attr.kind = OnnxAttr::kGraph;
        attr.graph = decode_graph(a.g(), model_dir, "node '" + node.name + "' (" + node.op_type + ") attribute '" + a.name() + "'");
        for (const std::string& name : outer_names(*attr.graph)) node.implicit_inputs.push_back(name);
        break;
      default:
        // Older writers leave `type` unset; infer it from the field that is present.
        if (a.type() == onnx::AttributeProto::UNDEFINED) {
          if (a.has_f()) { attr.kind = OnnxAttr::kFloat; attr.f = a.f(); break; }
          if (a.has_i()) { attr.kind = OnnxAttr::kInt; attr.i = a.i(); break; }
          if (a.has_s()) { attr.kind = OnnxAttr::kString; attr.s = a.s(); break; }
        }
        attr.kind = OnnxAttr::kOther;  // graphs, sparse tensors, strings lists: rejected if used
        break;
    }
    node.attrs[a.name()] = std::move(attr);
  }
  return node;
}

struct UnknownDim {
  std::string input;
  int axis;  // -1: the whole shape (rank) is unknown
  std::string dim_param;
  int rank;
};

// One error for every graph input dimension that is symbolic or missing, with an example command.
[[noreturn]] void throw_unknown_dims(const std::string& display_name, const onnx::GraphProto& g,
                                     const std::set<std::string>& initializers, const std::vector<UnknownDim>& unknown) {
  std::string list, example;
  for (const auto& u : unknown) {
    list += "\n  input '" + u.input + "' " +
            (u.axis < 0 ? std::string("has an unknown rank and shape")
                        : "axis " + std::to_string(u.axis) + (u.dim_param.empty() ? " (no name)" : " ('" + u.dim_param + "')"));
  }
  for (const auto& vi : g.input()) {
    if (initializers.count(vi.name())) continue;
    bool listed = false;
    for (const auto& u : unknown) listed = listed || u.input == vi.name();
    if (!listed) continue;
    std::string dims;
    if (vi.type().tensor_type().has_shape()) {
      const auto& shape = vi.type().tensor_type().shape();
      for (int i = 0; i < shape.dim_size(); ++i) {
        const auto& d = shape.dim(i);
        dims += (i ? "," : "") + (d.has_dim_value() && d.dim_value() >= 0 ? std::to_string(d.dim_value()) : std::string("1"));
      }
    } else {
      dims = "D0,D1,...";
    }
    example += " --input-shape " + vi.name() + ":" + dims;
  }
  throw UserError(UserErrorKind::kInvalidArgument, display_name,
                  std::to_string(unknown.size()) + " input dimension" + (unknown.size() == 1 ? " is" : "s are") +
                      " symbolic or unknown; Kiln compiles static shapes:" + list,
                  "fix every one with --input-shape, e.g. kiln compile " + display_name + example +
                      " -o model.so (1 stands for each unknown dimension; put your sizes)");
}

onnx_import::OnnxGraphValue decode_graph_value(const onnx::ValueInfoProto& vi) {
  onnx_import::OnnxGraphValue v;
  v.name = vi.name();
  if (!vi.has_type()) return v;
  const auto& t = vi.type();
  if (t.has_tensor_type()) {
    v.kind = onnx_import::OnnxGraphValue::kTensor;
    DType d;
    if (t.tensor_type().has_elem_type() && dtype_from_onnx(t.tensor_type().elem_type(), &d)) v.dtype = d;
  } else if (t.has_sequence_type()) {
    v.kind = onnx_import::OnnxGraphValue::kSequence;
  } else if (t.has_optional_type()) {
    v.kind = onnx_import::OnnxGraphValue::kOptional;
  } else if (t.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
    v.kind = onnx_import::OnnxGraphValue::kOtherType;
  }
  return v;
}

// The values a subgraph reads from the graphs around it: names its nodes (and their own subgraphs)
// read that neither its inputs, its initializers nor its nodes define. Its node must come after
// their producers in the enclosing graph (prepare_nodes).
std::vector<std::string> outer_names(const onnx_import::OnnxGraph& g) {
  std::set<std::string> local;
  for (const auto& v : g.inputs) local.insert(v.name);
  for (const auto& init : g.initializers) local.insert(init.first);
  for (const auto& n : g.nodes) local.insert(n.outputs.begin(), n.outputs.end());
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& n : g.nodes) {
    for (const auto* names : {&n.inputs, &n.implicit_inputs}) {
      for (const std::string& name : *names) {
        if (!name.empty() && !local.count(name) && seen.insert(name).second) out.push_back(name);
      }
    }
  }
  return out;
}

// A subgraph (an If branch, a Loop or Scan body): its formals, initializers and nodes, recursively.
std::shared_ptr<const onnx_import::OnnxGraph> decode_graph(const onnx::GraphProto& g, const std::string& model_dir,
                                                           const std::string& subject) {
  auto out = std::make_shared<onnx_import::OnnxGraph>();
  out->name = g.name();
  for (const auto& vi : g.input()) out->inputs.push_back(decode_graph_value(vi));
  for (const auto& vi : g.output()) out->outputs.push_back(decode_graph_value(vi));
  for (const auto& t : g.initializer()) {
    out->initializers.emplace_back(t.name(), tensor_to_ndarray(t, model_dir, subject + ": initializer '" + t.name() + "'"));
  }
  for (int i = 0; i < g.node_size(); ++i) {
    out->nodes.push_back(decode_node(g.node(i), model_dir, i));
    if (g.node(i).name().empty()) out->nodes.back().name.clear();
  }
  std::set<std::string> defined;
  for (const auto& v : out->inputs) defined.insert(v.name);
  for (const auto& init : out->initializers) defined.insert(init.first);
  onnx_import::prepare_nodes(out->nodes, defined, subject);
  return out;
}

}  // namespace

std::vector<std::string> onnx_supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : onnx_import::converters()) out.push_back(name);
  return out;
}

ir::Graph import_onnx(const std::string& path, const OnnxImportOptions& options) {
  std::string bytes = read_file(path);
  std::string dir = std::filesystem::path(path).parent_path().string();
  return import_onnx_bytes(bytes, dir.empty() ? "." : dir, options, path);
}

ir::Graph import_onnx_bytes(const std::string& bytes, const std::string& model_dir, const OnnxImportOptions& options,
                            const std::string& display_name) {
  const std::string hint = "check that the file is a complete .onnx model (e.g. load it with onnx.load)";
  onnx::ModelProto model;
  if (bytes.empty()) throw UserError(UserErrorKind::kParse, display_name, "the file is empty, not an ONNX model", hint);
  if (!model.ParseFromString(bytes)) {
    throw UserError(UserErrorKind::kParse, display_name, "not a valid ONNX model: protobuf parsing failed (not ONNX, or truncated)", hint);
  }
  if (model.ir_version() <= 0 || !model.has_graph() || model.opset_import_size() == 0) {
    throw UserError(UserErrorKind::kParse, display_name,
                    "not an ONNX model: it lacks an IR version, a graph or an opset import", hint);
  }
  int opset = -1;
  for (const auto& imp : model.opset_import()) {
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = static_cast<int>(imp.version());
  }
  if (opset < 0) {
    throw UserError(UserErrorKind::kUnsupported, display_name, "imports no ai.onnx opset",
                    "the model's opset_import must list the default domain (\"\" or ai.onnx)");
  }
  if (opset < kOnnxMinOpset) {
    throw UserError(UserErrorKind::kUnsupported, display_name,
                    "uses ai.onnx opset " + std::to_string(opset) + "; Kiln reads opsets " + std::to_string(kOnnxMinOpset) + ".." +
                        std::to_string(kOnnxMaxOpset) + " (opsets 1-6 predate ONNX's broadcasting rules and are not read)",
                    "re-export the model at opset " + std::to_string(kOnnxMinOpset) +
                        " or newer (e.g. torch.onnx.export(..., opset_version=13)), or upgrade it once with "
                        "onnx.version_converter.convert_version(model, 13)");
  }
  if (opset > kOnnxMaxOpset) {
    throw UserError(UserErrorKind::kUnsupported, display_name,
                    "uses ai.onnx opset " + std::to_string(opset) + ", newer than the newest Kiln reads (" +
                        std::to_string(kOnnxMaxOpset) + ")",
                    "export the model at opset " + std::to_string(kOnnxMaxOpset) + " or older");
  }
  const onnx::GraphProto& g = model.graph();
  ImportContext ctx(opset, display_name);

  // Initializers (weights): constants, each converted once.
  std::set<std::string> initializer_names;
  for (int i = 0; i < g.initializer_size(); ++i) {
    onnx::TensorProto* t = model.mutable_graph()->mutable_initializer(i);
    NDArray data = tensor_to_ndarray(*t, model_dir, display_name + ": initializer '" + t->name() + "'");
    ctx.define(t->name(), ctx.constant(std::move(data), t->name()));
    initializer_names.insert(t->name());
    // The NDArray now holds the only copy Kiln keeps; drop protobuf's to halve peak memory.
    t->clear_raw_data();
    t->clear_float_data();
  }

  // Graph inputs that are not initializers. An initializer also listed as a graph input (older IR
  // versions list every weight there) is the constant: Kiln compiles weights in.
  std::vector<ir::NodePtr> inputs;
  std::vector<UnknownDim> unknown_dims;  // symbolic dims without --input-shape, all reported at once
  onnx_import::SizeVariables size_vars(options.dim_ranges);  // ... or kept, with symbolic_dims
  std::set<std::string> input_names;
  for (const auto& vi : g.input()) {
    if (initializer_names.count(vi.name())) continue;
    const std::string subject = display_name + ": input '" + vi.name() + "'";
    if (vi.name().empty()) throw UserError(UserErrorKind::kParse, display_name, "a graph input has no name", "the file is corrupt");
    if (input_names.count(vi.name())) throw UserError(UserErrorKind::kParse, subject, "is listed twice", "the file is corrupt");
    input_names.insert(vi.name());
    if (!vi.type().has_tensor_type()) {
      throw UserError(UserErrorKind::kUnsupported, subject,
                      vi.type().has_sequence_type() || vi.type().has_optional_type()
                          ? "is a sequence or optional: sequence and optional types are not supported (Kiln compiles tensors only)"
                          : "is not a tensor");
    }
    const auto& tt = vi.type().tensor_type();
    DType dtype = require_dtype(tt.elem_type(), subject);
    auto bound = options.constant_inputs.find(vi.name());
    if (bound != options.constant_inputs.end()) {
      if (bound->second.dtype() != dtype) {
        throw UserError(UserErrorKind::kInvalidArgument, subject,
                        std::string("is ") + ir::dtype_name(dtype) + ", the value bound to it is " + bound->second.type().to_string(),
                        std::string("bind an array of element type ") + ir::dtype_name(dtype));
      }
      // The bound value must fit the declared shape: same rank, the dimensions the model fixes.
      if (tt.has_shape()) {
        const ir::Shape& given = bound->second.shape();
        bool fits = tt.shape().dim_size() == static_cast<int>(given.size());
        std::string declared = "[";
        for (int i = 0; i < tt.shape().dim_size(); ++i) {
          const auto& d = tt.shape().dim(i);
          declared += (i ? ", " : "") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param().empty() ? "?" : d.dim_param());
          if (fits && d.has_dim_value() && d.dim_value() != given[i]) fits = false;
        }
        declared += "]";
        if (!fits) {
          throw UserError(UserErrorKind::kInvalidArgument, subject,
                          "has shape " + declared + ", the value bound to it is " + bound->second.type().to_string(),
                          "bind an array of the input's rank and fixed dimensions");
        }
      }
      ctx.define(vi.name(), ctx.constant(bound->second, vi.name()));
      continue;
    }
    auto fixed = options.input_shapes.find(vi.name());
    ir::Shape shape;
    if (fixed != options.input_shapes.end()) {
      shape = fixed->second;
      if (tt.has_shape()) {
        bool fits = tt.shape().dim_size() == static_cast<int>(shape.size());
        for (int i = 0; fits && i < tt.shape().dim_size(); ++i) {
          const auto& d = tt.shape().dim(i);
          if (d.has_dim_value() && d.dim_value() != shape[i]) fits = false;
        }
        if (!fits) {
          std::string model_shape = "[";
          for (int i = 0; i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            model_shape += (i ? ", " : "") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param().empty() ? "?" : d.dim_param());
          }
          model_shape += "]";
          throw UserError(UserErrorKind::kInvalidArgument, "--input-shape " + vi.name(),
                          "shape " + ir::shape_to_string(shape) + " does not fit the model's input shape " + model_shape,
                          "give the same rank and the dimensions the model fixes");
        }
      }
    } else {
      if (!tt.has_shape()) {
        unknown_dims.push_back({vi.name(), -1, "", 0});
        continue;
      }
      bool known = true;
      for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        if (!d.has_dim_value() || d.dim_value() < 0) {
          if (options.symbolic_dims) {
            shape.push_back(size_vars.dim(vi.name(), i, d.dim_param()));
            continue;
          }
          unknown_dims.push_back({vi.name(), i, d.dim_param(), tt.shape().dim_size()});
          known = false;
        }
        shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
      }
      if (!known) continue;
    }
    if (shape.is_static()) onnx_import::checked_tensor_size(dtype, shape, display_name + ": input '" + vi.name() + "'");
    ctx.unique_name(vi.name());
    ir::NodePtr node = ir::make_input(vi.name(), {dtype, shape});
    inputs.push_back(node);
    ctx.define(vi.name(), node->output());
  }
  if (!unknown_dims.empty()) throw_unknown_dims(display_name, g, initializer_names, unknown_dims);
  for (const auto& [name, array] : options.constant_inputs) {
    if (!input_names.count(name)) {
      std::string names;
      for (const auto& n : input_names) names += (names.empty() ? "" : ", ") + n;
      throw UserError(UserErrorKind::kNotFound, "--bind " + name, "the model has no input of that name",
                      "the model's inputs: " + (names.empty() ? std::string("(none)") : names));
    }
  }
  for (const auto& [name, shape] : options.input_shapes) {
    if (!input_names.count(name)) {
      std::string names;
      for (const auto& n : input_names) names += (names.empty() ? "" : ", ") + n;
      throw UserError(UserErrorKind::kNotFound, "--input-shape " + name, "the model has no input of that name",
                      "its inputs: " + names);
    }
  }

  // Nodes, decoded and put in topological order (exporters do not always sort them).
  std::vector<OnnxNode> nodes;
  nodes.reserve(g.node_size());
  for (int i = 0; i < g.node_size(); ++i) {
    nodes.push_back(decode_node(g.node(i), model_dir, i));
    if (g.node(i).name().empty()) nodes.back().name.clear();
    model.mutable_graph()->mutable_node(i)->clear_attribute();  // the decoded copy is the one kept
  }
  std::set<std::string> defined = initializer_names;
  for (const auto& vi : g.input()) defined.insert(vi.name());
  onnx_import::prepare_nodes(nodes, defined, display_name);
  for (OnnxNode& node : nodes) {
    onnx_import::convert_node(ctx, node);
    node.attrs.clear();  // constants (and subgraphs) hold their data now
  }
  ctx.begin_node(nullptr);

  std::vector<ir::Value> outputs;
  std::vector<std::string> output_names;
  for (const auto& vi : g.output()) {
    if (vi.name().empty()) throw UserError(UserErrorKind::kParse, display_name, "a graph output has no name", "the file is corrupt");
    if (std::find(output_names.begin(), output_names.end(), vi.name()) != output_names.end()) {
      throw UserError(UserErrorKind::kParse, display_name + ": output '" + vi.name() + "'", "is listed twice", "the file is corrupt");
    }
    outputs.push_back(ctx.value(vi.name()));
    output_names.push_back(vi.name());
    DType declared;
    if (vi.type().has_tensor_type() && dtype_from_onnx(vi.type().tensor_type().elem_type(), &declared) &&
        declared != outputs.back().type().dtype) {
      throw UserError(UserErrorKind::kInvalidArgument, display_name + ": output '" + vi.name() + "'",
                      std::string("is declared ") + ir::dtype_name(declared) + " but computes " +
                          outputs.back().type().to_string());
    }
  }
  if (outputs.empty()) throw UserError(UserErrorKind::kParse, display_name, "the graph has no outputs");
  ir::Graph graph(std::move(inputs), std::move(outputs), std::move(output_names), size_vars.finish());
  ir::verify_graph_in_debug(graph, "ONNX import of " + display_name);
  KILN_LOG(frontend, kInfo) << display_name << ": imported " << graph.num_calls() << " calls (opset " << opset << ")";
  return graph;
}

std::vector<std::string> onnx_op_types(const std::string& path) {
  onnx::ModelProto model;
  if (!model.ParseFromString(read_file(path))) {
    throw UserError(UserErrorKind::kParse, path, "not a valid ONNX model: protobuf parsing failed (not ONNX, or truncated)");
  }
  std::set<std::string> ops;
  std::function<void(const onnx::GraphProto&)> walk = [&](const onnx::GraphProto& g) {
    for (const auto& n : g.node()) {
      ops.insert(n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type());
      for (const auto& a : n.attribute()) {
        if (a.has_g()) walk(a.g());
        for (const auto& sub : a.graphs()) walk(sub);
      }
    }
  };
  walk(model.graph());
  return {ops.begin(), ops.end()};
}

std::vector<std::string> onnx_input_names(const std::string& path) {
  onnx::ModelProto model;
  if (!model.ParseFromString(read_file(path))) {
    throw UserError(UserErrorKind::kParse, path, "not a valid ONNX model: protobuf parsing failed (not ONNX, or truncated)");
  }
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> names;
  for (const auto& vi : model.graph().input()) {
    if (!initializers.count(vi.name())) names.push_back(vi.name());
  }
  return names;
}

NDArray read_onnx_tensor(const std::string& path) {
  std::string bytes = read_file(path);
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) throw UserError(UserErrorKind::kParse, path, "not a serialized onnx.TensorProto");
  std::string dir = std::filesystem::path(path).parent_path().string();
  return tensor_to_ndarray(t, dir.empty() ? "." : dir, path);
}

void parse_input_shape_option(const std::string& spec, std::map<std::string, ir::Shape>* out) {
  const std::string hint = "write NAME:D0,D1,... e.g. --input-shape input:1,3,224,224";
  auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw UserError(UserErrorKind::kInvalidArgument, "--input-shape " + spec, "expected NAME:D0,D1,...", hint);
  }
  std::string name = spec.substr(0, colon);
  std::string dims = spec.substr(colon + 1);
  ir::Shape shape;
  std::stringstream ss(dims);
  std::string item;
  while (!dims.empty() && std::getline(ss, item, ',')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < 0) {
      throw UserError(UserErrorKind::kInvalidArgument, "--input-shape " + spec,
                      "dimension '" + item + "' is not a non-negative integer", hint);
    }
    shape.push_back(v);
  }
  if (out->count(name)) throw UserError(UserErrorKind::kInvalidArgument, "--input-shape " + spec, "input '" + name + "' given twice");
  (*out)[name] = shape;
}

}  // namespace kiln::frontend

namespace kiln::frontend::onnx_import {

NDArray onnx_tensor_to_ndarray(const onnx::TensorProto& t, const std::string& model_dir, const std::string& subject) {
  return tensor_to_ndarray(t, model_dir, subject);
}

std::string read_model_file(const std::string& path) { return read_file(path); }

bool onnx_dtype(int64_t t, DType* out) {
  return t >= 0 && t <= std::numeric_limits<int>::max() && dtype_from_onnx(static_cast<int>(t), out);
}

const char* onnx_type_name(int t) {
  switch (t) {
    case 1: return "FLOAT"; case 2: return "UINT8"; case 3: return "INT8"; case 4: return "UINT16";
    case 5: return "INT16"; case 6: return "INT32"; case 7: return "INT64"; case 8: return "STRING";
    case 9: return "BOOL"; case 10: return "FLOAT16"; case 11: return "DOUBLE"; case 12: return "UINT32";
    case 13: return "UINT64"; case 14: return "COMPLEX64"; case 15: return "COMPLEX128"; case 16: return "BFLOAT16";
    case 17: return "FLOAT8E4M3FN"; case 18: return "FLOAT8E4M3FNUZ"; case 19: return "FLOAT8E5M2";
    case 20: return "FLOAT8E5M2FNUZ"; case 21: return "UINT4"; case 22: return "INT4"; case 23: return "FLOAT4E2M1";
    case 24: return "FLOAT8E8M0"; case 25: return "UINT2"; case 26: return "INT2";
    default: return "UNDEFINED";
  }
}

}  // namespace kiln::frontend::onnx_import
