// ImportContext: the converters' view of the model being imported (values by ONNX name, the
// current node's inputs and attributes, errors naming the node) and constant folding.
#include <algorithm>

#include "kiln/ref/executor.h"
#include "kiln/support/error.h"
#include "import_limits.h"
#include "onnx_node.h"

namespace kiln::frontend::onnx_import {

using ir::NDArray;
using ir::Value;

bool ImportContext::has(const std::string& name) const {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    if (s->values.count(name)) return true;
  }
  return false;
}

Value ImportContext::value(const std::string& name) const {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    auto it = s->values.find(name);
    if (it != s->values.end()) return it->second;
  }
  throw UserError(UserErrorKind::kParse, node_ ? node_subject() : model_name_ + ": graph",
                  "uses value '" + name + "', which no earlier node, input or initializer defines" +
                      (scopes_.size() > 1 ? " (in this subgraph or an enclosing graph)" : ""),
                  "check the model: every value a node reads must be a graph input, an initializer or a node output");
}

void ImportContext::enter_scope(std::string where) {
  scopes_.push_back(Scope{{}, std::move(where), node_});
}

void ImportContext::leave_scope() {
  KILN_ICHECK(scopes_.size() > 1) << "leave_scope without a matching enter_scope";
  node_ = scopes_.back().outer;
  scopes_.pop_back();
}

std::string ImportContext::node_subject() const {
  if (!node_) return model_name_;
  std::string s = model_name_ + ": node '" + node_->name + "' (" + node_->op_type + ")";
  // Innermost first: "node 'add' (Add) in body of node 'loop' (Loop), iteration 2".
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    if (!it->where.empty()) s += " in " + it->where;
  }
  return s;
}

bool ImportContext::has_input(size_t i) const { return i < node_->inputs.size() && !node_->inputs[i].empty(); }

Value ImportContext::input(size_t i) const {
  if (!has_input(i)) fail_invalid("input " + std::to_string(i) + " is required but missing");
  return value(node_->inputs[i]);
}

std::string run_time_origin(const Value& v) {
  if (v.node->kind() == ir::NodeKind::kInput) return "";
  std::set<const ir::Node*> seen;
  std::set<std::string> names;
  std::vector<const ir::Node*> stack{v.node.get()};
  while (!stack.empty()) {
    const ir::Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->kind() == ir::NodeKind::kInput) names.insert(n->name());
    if (n->kind() != ir::NodeKind::kCall) continue;
    for (const Value& a : n->as_call().args()) stack.push_back(a.node.get());
  }
  if (names.empty()) return "";
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
  return " (from graph input" + std::string(names.size() > 1 ? "s " : " ") + list + ")";
}

bool KnownInts::is_static() const {
  return std::all_of(elems.begin(), elems.end(), [](const ir::Dim& d) { return d.is_static(); });
}

namespace {
std::string dims_text(const std::vector<ir::Dim>& dims) {
  std::string s = "[";
  for (size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + dims[k].to_string();
  return s + "]";
}
}  // namespace

NDArray ImportContext::constant_input(size_t i, const std::string& what) const {
  Value v = input(i);
  if (v.node->kind() != ir::NodeKind::kConstant) {
    auto it = known_.find({v.node.get(), v.index});
    if (it != known_.end()) {
      throw UserError(UserErrorKind::kUnsupported, node_subject(),
                      "input " + std::to_string(i) + " (" + what + ", '" + node_->inputs[i] + "') is " +
                          dims_text(it->second.second.elems) +
                          ", computed from symbolic dimensions; this operator's import needs it constant",
                      "pin those dimensions with --input-shape (docs/dynamic.md lists the operators that "
                      "take symbolic values)");
    }
    throw UserError(UserErrorKind::kUnsupported, node_subject(),
                    "input " + std::to_string(i) + " (" + what + ", '" + node_->inputs[i] +
                        "') is computed at run time" + run_time_origin(v) +
                        "; Kiln compiles static shapes and needs it constant",
                    "export the model with constant " + what + " or fix the input shapes with --input-shape");
  }
  return v.node->as_constant().data();
}

std::vector<int64_t> ImportContext::constant_ints(size_t i, const std::string& what) const {
  NDArray a = constant_input(i, what);
  if (ir::is_float(a.dtype())) fail_invalid("input " + std::to_string(i) + " (" + what + ") must be an integer tensor");
  std::vector<int64_t> out;
  for (int64_t k = 0; k < a.numel(); ++k) {
    out.push_back(checked_integer_element(a, k, node_subject() + ": input " + std::to_string(i) + " (" + what + ")"));
  }
  return out;
}

std::optional<KnownInts> ImportContext::known_input(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  Value v = input(i);
  if (v.node->kind() == ir::NodeKind::kConstant) {
    const NDArray& a = v.node->as_constant().data();
    if (ir::is_float(a.dtype()) || a.shape().size() > 1) return std::nullopt;
    KnownInts k;
    k.dtype = a.dtype();
    k.scalar = a.shape().empty();
    for (int64_t e = 0; e < a.numel(); ++e) {
      k.elems.push_back(checked_integer_element(a, e, node_subject() + ": input " + std::to_string(i)));
    }
    return k;
  }
  auto it = known_.find({v.node.get(), v.index});
  if (it == known_.end()) return std::nullopt;
  return it->second.second;
}

std::vector<ir::Dim> ImportContext::dims_input(size_t i, const std::string& what) const {
  if (has_input(i) && input(i).node->kind() == ir::NodeKind::kConstant) {
    const std::vector<int64_t> v = constant_ints(i, what);
    return std::vector<ir::Dim>(v.begin(), v.end());
  }
  if (std::optional<KnownInts> k = known_input(i)) return k->elems;
  constant_ints(i, what);  // throws: the input is computed at run time and not known
  KILN_IFAIL() << "input " << i << " (" << what << ") of " << node_subject() << " is neither constant nor known";
  return {};
}

void ImportContext::set_known(const Value& v, KnownInts known) {
  known_[{v.node.get(), v.index}] = {v.node, std::move(known)};
}

std::vector<double> ImportContext::constant_floats(size_t i, const std::string& what) const {
  NDArray a = constant_input(i, what);
  std::vector<double> out;
  for (int64_t k = 0; k < a.numel(); ++k) out.push_back(a.get_as_double(k));
  return out;
}

namespace {
const OnnxAttr* find_attr(const OnnxNode& node, const std::string& name) {
  auto it = node.attrs.find(name);
  return it == node.attrs.end() ? nullptr : &it->second;
}
}  // namespace

bool ImportContext::has_attr(const std::string& name) const { return find_attr(*node_, name) != nullptr; }

int64_t ImportContext::attr_int(const std::string& name, int64_t fallback) const {
  const OnnxAttr* a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->kind != OnnxAttr::kInt) fail_attr(name, "must be an int");
  return a->i;
}

double ImportContext::attr_float(const std::string& name, double fallback) const {
  const OnnxAttr* a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->kind == OnnxAttr::kInt) return static_cast<double>(a->i);
  if (a->kind != OnnxAttr::kFloat) fail_attr(name, "must be a float");
  return a->f;
}

std::string ImportContext::attr_string(const std::string& name, const std::string& fallback) const {
  const OnnxAttr* a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->kind != OnnxAttr::kString) fail_attr(name, "must be a string");
  return a->s;
}

std::vector<int64_t> ImportContext::attr_ints(const std::string& name, std::vector<int64_t> fallback) const {
  const OnnxAttr* a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->kind != OnnxAttr::kInts) fail_attr(name, "must be a list of ints");
  return a->ints;
}

std::vector<double> ImportContext::attr_floats(const std::string& name, std::vector<double> fallback) const {
  const OnnxAttr* a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->kind != OnnxAttr::kFloats) fail_attr(name, "must be a list of floats");
  return a->floats;
}

std::vector<std::string> ImportContext::attr_strings(const std::string& name, std::vector<std::string> fallback) const {
  const OnnxAttr* a = find_attr(*node_, name);
  if (!a) return fallback;
  if (a->kind != OnnxAttr::kStrings) fail_attr(name, "must be a list of strings");
  return a->strings;
}

const NDArray* ImportContext::attr_tensor(const std::string& name) const {
  const OnnxAttr* a = find_attr(*node_, name);
  if (!a) return nullptr;
  if (a->kind != OnnxAttr::kTensor) fail_attr(name, "must be a tensor");
  return &a->tensor;
}

const OnnxGraph& ImportContext::attr_graph(const std::string& name) const {
  const OnnxAttr* a = find_attr(*node_, name);
  if (!a) fail_attr(name, "is required but missing");
  if (a->kind != OnnxAttr::kGraph || !a->graph) fail_attr(name, "must be a graph");
  return *a->graph;
}

std::vector<Value> ImportContext::call(const std::string& op, std::vector<Value> args, const ir::Attrs& attrs) {
  const ir::OpDef* def = ir::OpRegistry::global().find(op);
  KILN_ICHECK(def != nullptr) << "the ONNX importer maps to unregistered op '" << op << "'";
  ir::NodePtr node;
  try {
    node = ir::make_call(*def, args, attrs, node_ ? node_->name : "");
  } catch (const UserError& e) {
    throw UserError(e.kind(), node_subject(), e.reason() + " [as " + op + "]", e.hint());
  }
  std::vector<Value> outs;
  bool all_constant = true;
  for (const Value& a : args) all_constant = all_constant && a.node->kind() == ir::NodeKind::kConstant;
  // An output of symbolic shape (an expand of a constant to [seq]) is computed at run time.
  for (const ir::TensorType& t : node->output_types()) all_constant = all_constant && t.is_static();
  if (!all_constant || !def->reference) {
    for (int i = 0; i < node->num_outputs(); ++i) outs.push_back(node->output(i));
    return outs;
  }
  // Folding allocates the outputs: a tiny model (Expand/ConstantOfShape/Tile of a constant to a
  // huge shape) must be refused here with a message, not with std::bad_alloc or the OOM killer.
  for (const ir::TensorType& t : node->output_types()) {
    onnx_import::checked_tensor_size(t.dtype, t.shape, node_subject() + " (evaluating " + op + " at import)");
  }
  std::vector<NDArray> arrays;
  for (const Value& a : args) arrays.push_back(a.node->as_constant().data());
  std::vector<NDArray> folded = ref::evaluate_call(node->as_call(), arrays);
  const std::string base = node_ && !node_->outputs.empty() && !node_->outputs[0].empty() ? node_->outputs[0] : op;
  for (auto& f : folded) outs.push_back(constant(std::move(f), base));
  return outs;
}

Value ImportContext::constant(NDArray data, const std::string& name_hint) {
  return ir::make_constant(unique_name(name_hint), std::move(data))->output();
}

std::string ImportContext::unique_name(const std::string& base) {
  std::string name = base.empty() ? "const" : base;
  // Suffixes continue where the last name from `base` stopped (unrolled loops make many).
  for (int& k = next_suffix_[base]; used_names_.count(name);) name = base + "." + std::to_string(++k);
  used_names_.insert(name);
  return name;
}

void ImportContext::fail_attr(const std::string& attr, const std::string& reason, const std::string& hint) const {
  throw UserError(UserErrorKind::kUnsupported, node_subject(), "attribute '" + attr + "' " + reason, hint);
}

void ImportContext::fail_unsupported(const std::string& reason, const std::string& hint) const {
  throw UserError(UserErrorKind::kUnsupported, node_subject(), reason, hint);
}

void ImportContext::fail_invalid(const std::string& reason, const std::string& hint) const {
  throw UserError(UserErrorKind::kInvalidArgument, node_subject(), reason, hint);
}

int64_t ImportContext::normalize_axis(int64_t axis, int64_t rank, const std::string& what) const {
  if (axis < -rank || axis >= rank) {
    fail_invalid(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace kiln::frontend::onnx_import
