// Printer of the graph IR's text form (grammar: docs/ir.md; parser: parser.cc).
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "kiln/ir/text.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

bool is_plain_name(const std::string& name) {
  if (name.empty()) return false;
  bool all_digits = true;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
    if (!std::isdigit(static_cast<unsigned char>(c))) all_digits = false;
  }
  return !all_digits;  // bare digits are reserved for call results (%0, %1, ...)
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string value_name(const std::string& name) { return "%" + (is_plain_name(name) ? name : quote(name)); }

std::string format_element(const NDArray& a, int64_t i) {
  const double v = a.get_as_double(i);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  switch (a.dtype()) {
    case DType::kF64: std::snprintf(buf, sizeof(buf), "%.17g", v); break;
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16: std::snprintf(buf, sizeof(buf), "%.9g", v); break;
    case DType::kI64: std::snprintf(buf, sizeof(buf), "%" PRId64, a.data<int64_t>()[i]); break;
    case DType::kU64: std::snprintf(buf, sizeof(buf), "%" PRIu64, a.data<uint64_t>()[i]); break;
    default: std::snprintf(buf, sizeof(buf), "%" PRId64, static_cast<int64_t>(v)); break;
  }
  return buf;
}

std::string types_to_string(const std::vector<TensorType>& types) {
  if (types.size() == 1) return types[0].to_string();
  std::string out = "(";
  for (size_t i = 0; i < types.size(); ++i) out += (i ? ", " : "") + types[i].to_string();
  return out + ")";
}

}  // namespace

GraphText print_graph(const Graph& graph, const PrintOptions& options) {
  GraphText result;
  std::ostringstream os;
  std::unordered_map<const Node*, std::vector<std::string>> names;
  os << "graph";
  if (!graph.dim_vars().empty()) {
    os << "<";
    for (size_t i = 0; i < graph.dim_vars().size(); ++i) {
      const DimVar& v = graph.dim_vars()[i];
      os << (i ? ", " : "") << v.name() << ": " << v.lo << ".." << v.hi;
    }
    os << ">";
  }
  os << "(";
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Node& in = *graph.inputs()[i];
    names[&in] = {value_name(in.name())};
    os << (i ? ", " : "") << names[&in][0] << ": " << in.as_input().type().to_string();
  }
  os << ") {\n";
  int next_id = 0;
  for (const NodePtr& node : graph.topo_order()) {
    switch (node->kind()) {
      case NodeKind::kInput: break;
      case NodeKind::kConstant: {
        const ConstantNode& c = node->as_constant();
        names[node.get()] = {value_name(c.name())};
        os << "  " << names[node.get()][0] << " = constant ";
        if (c.data().numel() <= options.inline_constant_limit) {
          os << "[";
          for (int64_t i = 0; i < c.data().numel(); ++i) os << (i ? ", " : "") << format_element(c.data(), i);
          os << "]";
        } else {
          char sum[32];
          std::snprintf(sum, sizeof(sum), "0x%016" PRIx64, c.data().checksum());
          os << "@" << (is_plain_name(c.name()) ? c.name() : quote(c.name())) << " {checksum = " << sum << "}";
          result.side_table[c.name()] = c.data();
        }
        os << " : " << c.type().to_string() << "\n";
        break;
      }
      case NodeKind::kCall: {
        const CallNode& call = node->as_call();
        std::vector<std::string> outs;
        for (int i = 0; i < call.num_outputs(); ++i) outs.push_back("%" + std::to_string(next_id++));
        names[node.get()] = outs;
        os << "  ";
        for (size_t i = 0; i < outs.size(); ++i) os << (i ? ", " : "") << outs[i];
        os << " = " << call.op().name << "(";
        bool first = true;
        for (const Value& a : call.args()) {
          os << (first ? "" : ", ") << names.at(a.node.get()).at(a.index);
          first = false;
        }
        for (const auto& [key, value] : call.attrs().values()) {
          os << (first ? "" : ", ") << key << "=" << attr_value_to_string(value);
          first = false;
        }
        os << ") : " << types_to_string(call.output_types()) << "\n";
        break;
      }
    }
  }
  os << "  return ";
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const Value& v = graph.outputs()[i];
    os << (i ? ", " : "") << names.at(v.node.get()).at(v.index) << " as " << quote(graph.output_names()[i]);
  }
  os << "\n}\n";
  result.text = os.str();
  return result;
}

std::string graph_to_text(const Graph& graph, const PrintOptions& options) { return print_graph(graph, options).text; }

}  // namespace kiln::ir
