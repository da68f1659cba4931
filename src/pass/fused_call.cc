// The `fused` operator (contract: kiln/pass/fused_call.h): a call of a sub-graph held as text in
// its `body` attribute. Type inference parses the body (cached) and checks the arguments; the
// reference implementation runs the body on the reference executor.
#include "kiln/pass/fused_call.h"

#include <limits>
#include <mutex>
#include <unordered_map>

#include "ir/ops/op_util.h"
#include "kiln/ir/op.h"
#include "kiln/ir/text.h"
#include "kiln/ref/executor.h"
#include "kiln/support/error.h"

namespace kiln::pass {
namespace {

constexpr const char* kOp = "fused";

std::vector<ir::TensorType> infer_fused(const std::vector<ir::TensorType>& in, const ir::Attrs& attrs) {
  auto body = parse_fused_body(attrs.get_string("body"));
  if (in.size() != body->inputs().size()) {
    throw UserError(UserErrorKind::kInvalidArgument, "fused call '" + attrs.get_string("label") + "'",
                    "has " + std::to_string(in.size()) + " arguments, its body takes " +
                        std::to_string(body->inputs().size()));
  }
  for (size_t i = 0; i < in.size(); ++i) {
    const ir::TensorType& want = body->inputs()[i]->as_input().type();
    if (in[i] != want) {
      throw UserError(UserErrorKind::kInvalidArgument, "fused call '" + attrs.get_string("label") + "'",
                      "argument " + std::to_string(i) + " has type " + in[i].to_string() + ", its body's input %" + body->inputs()[i]->name() +
                          " is " + want.to_string());
    }
  }
  std::vector<ir::TensorType> out;
  for (const auto& v : body->outputs()) out.push_back(v.type());
  return out;
}

std::vector<ir::NDArray> reference_fused(const std::vector<ir::NDArray>& in, const ir::Attrs& attrs,
                                         const std::vector<ir::TensorType>&) {
  return ref::run_graph(*parse_fused_body(attrs.get_string("body")), in);
}

}  // namespace

KILN_REGISTER_OP(fused) {
  ir::OpDef d;
  d.name = kOp;
  d.doc = "a fused group: runs the sub-graph in `body` (text form) on its arguments";
  d.min_inputs = 0;
  d.max_inputs = -1;
  d.attrs = {{"body", ir::AttrKind::kString, std::nullopt, "the group's sub-graph in the IR text form"},
             {"label", ir::AttrKind::kString, ir::AttrValue(std::string()), "a readable name of the group"}};
  d.infer_type = infer_fused;
  d.reference = reference_fused;
  d.pattern = ir::OpPattern::kOpaque;
  return ir::ops::with_arity_check(std::move(d));
}

const ir::OpDef& fused_op() {
  static const ir::OpDef& op = ir::OpRegistry::global().get(kOp);
  return op;
}

bool is_fused_call(const ir::Node& node) {
  return node.kind() == ir::NodeKind::kCall && &node.as_call().op() == &fused_op();
}

std::shared_ptr<const ir::Graph> parse_fused_body(const std::string& text) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const ir::Graph>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(text);
    if (it != cache.end()) return it->second;
  }
  auto body = std::make_shared<const ir::Graph>(ir::parse_graph(text, {}, "<fused body>"));
  for (const auto& node : body->topo_order()) {
    if (is_fused_call(*node)) {
      throw UserError(UserErrorKind::kInvalidArgument, "fused body", "contains a nested fused call",
                      "fused groups are flat");
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(text, std::move(body)).first->second;
}

std::shared_ptr<const ir::Graph> fused_body(const ir::CallNode& call) {
  KILN_ICHECK(&call.op() == &fused_op()) << "fused_body of a '" << call.op().name << "' call";
  return parse_fused_body(call.attrs().get_string("body"));
}

std::string fused_body_text(const ir::Graph& body) {
  ir::PrintOptions options;
  options.inline_constant_limit = std::numeric_limits<int64_t>::max();
  const std::string text = ir::print_graph(body, options).text;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;  // drop the indentation
    if (i + 1 < text.size()) out += ' ';
  }
  return out;
}

ir::NodePtr make_fused_call(const ir::Graph& body, std::vector<ir::Value> args, const std::string& label) {
  ir::Attrs attrs;
  attrs.set("body", fused_body_text(body)).set("label", label);
  return ir::make_call(fused_op(), std::move(args), attrs, label);
}

}  // namespace kiln::pass
