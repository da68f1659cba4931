// Chrome trace-event JSON of the executor's kernel launches (see trace_json.h).
#include "trace_json.h"

#include <cstdio>

namespace kiln::runtime {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong forms,
// surrogates and code points past U+10FFFF included).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string tensor_text(const artifact::PlanTensor& t) {
  return t.name + ": " + artifact::dtype_text(t.dtype) + artifact::shape_text(t.shape);
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      ++i;
    } else if (const size_t n = utf8_length(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  return out + "\"";
}

std::string format_trace_json(const artifact::Plan& plan, const std::vector<TraceEvent>& events,
                              std::string_view process_name) {
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": " +
         json_string(process_name) + "}}";
  std::vector<uint64_t> named_threads;
  for (const TraceEvent& e : events) {
    bool named = false;
    for (uint64_t t : named_threads) named = named || t == e.thread_id;
    if (!named) {
      named_threads.push_back(e.thread_id);
      out += ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " + std::to_string(e.thread_id) +
             ", \"args\": {\"name\": \"kiln executor\"}}";
    }
  }
  for (const TraceEvent& e : events) {
    const bool is_run = e.kernel < 0 || static_cast<size_t>(e.kernel) >= plan.kernels.size();
    const std::string common = ", \"ph\": \"X\", \"ts\": " + number(e.start_us) + ", \"dur\": " +
                               number(e.duration_us) + ", \"pid\": 1, \"tid\": " + std::to_string(e.thread_id);
    if (is_run) {
      out += ",\n{\"name\": \"run " + std::to_string(e.run) + "\", \"cat\": \"run\"" + common +
             ", \"args\": {\"run\": " + std::to_string(e.run) + ", \"kernels\": " +
             std::to_string(plan.kernels.size()) + "}}";
      continue;
    }
    const artifact::KernelCall& call = plan.kernels[e.kernel];
    uint64_t bytes = 0;
    std::string tensors;
    for (int32_t id : call.args) {
      if (id < 0 || static_cast<size_t>(id) >= plan.tensors.size()) continue;
      bytes += plan.tensors[id].nbytes;
      tensors += (tensors.empty() ? "" : ", ") + json_string(tensor_text(plan.tensors[id]));
    }
    out += ",\n{\"name\": " + json_string(call.fused_ops.empty() ? call.symbol : call.fused_ops) +
           ", \"cat\": \"kernel\"" + common + ", \"args\": {\"symbol\": " + json_string(call.symbol) +
           ", \"step\": " + std::to_string(e.kernel + 1) + ", \"run\": " + std::to_string(e.run) +
           ", \"flops\": " + std::to_string(call.flops) + ", \"op_kind\": \"" +
           (call.op_kind == artifact::OpKind::kInt8 ? "int8" : "float") + "\", \"bytes\": " +
           std::to_string(bytes) + ", \"tensors\": [" + tensors + "]}}";
  }
  return out + "\n]}\n";
}

}  // namespace kiln::runtime
