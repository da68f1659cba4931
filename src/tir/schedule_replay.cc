// Replaying schedule steps from their text form (Schedule::apply).
#include <algorithm>

#include "kiln/support/error.h"
#include "kiln/tir/schedule.h"

namespace kiln::tir {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

[[noreturn]] void parse_error(std::string_view step, const std::string& reason) {
  throw UserError(UserErrorKind::kParse, "schedule step '" + std::string(step) + "'", reason,
                  "write steps as Schedule::to_string() prints them, e.g. split(C, i, factor=8)");
}

IterVar find_axis(Stage st, const std::string& name, std::string_view step) {
  IterVar found;
  for (const IterVar& iv : st.leaf_axes()) {
    if (iv.var().name() != name) continue;
    if (found.defined()) {
      throw UserError(UserErrorKind::kNotFound, "schedule step '" + std::string(step) + "'",
                      "stage '" + st.name() + "' has two loops named '" + name + "'", "give its axes distinct names");
    }
    found = iv;
  }
  if (!found.defined()) {
    throw UserError(UserErrorKind::kNotFound, "schedule step '" + std::string(step) + "'",
                    "stage '" + st.name() + "' has no loop named '" + name + "'", "");
  }
  return found;
}

int64_t parse_int(std::string_view step, const std::string& text) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) parse_error(step, "'" + text + "' is not an integer");
    return v;
  } catch (const std::logic_error&) {
    parse_error(step, "'" + text + "' is not an integer");
  }
}

}  // namespace

void Schedule::apply(std::string_view step) {
  std::string_view text = step.substr(0, step.find(" -> "));
  const size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    parse_error(step, "expected primitive(arguments)");
  }
  const std::string prim = trim(text.substr(0, open));
  std::vector<std::string> args;
  std::string_view rest = text.substr(open + 1, close - open - 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    args.push_back(trim(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (args.empty() || args[0].empty()) parse_error(step, "no stage named");
  auto stage = [&](const std::string& name) {
    StageNode* found = nullptr;
    for (const auto& s : stages_) {
      if (s->op.name() != name) continue;
      if (found) {
        throw UserError(UserErrorKind::kNotFound, "schedule step '" + std::string(step) + "'",
                        "two stages are named '" + name + "'", "give tensors distinct names");
      }
      found = s.get();
    }
    if (!found) {
      throw UserError(UserErrorKind::kNotFound, "schedule step '" + std::string(step) + "'",
                      "no stage named '" + name + "'", "");
    }
    return Stage(this, found);
  };
  auto want = [&](size_t n) {
    if (args.size() != n) {
      parse_error(step, prim + " takes " + std::to_string(n) + " arguments, got " + std::to_string(args.size()));
    }
  };
  Stage st = stage(args[0]);
  if (prim == "split") {
    want(3);
    const std::string& kv = args[2];
    if (kv.rfind("factor=", 0) == 0) {
      st.split(find_axis(st, args[1], step), parse_int(step, kv.substr(7)));
    } else if (kv.rfind("nparts=", 0) == 0) {
      st.split_nparts(find_axis(st, args[1], step), parse_int(step, kv.substr(7)));
    } else {
      parse_error(step, "expected factor=N or nparts=N");
    }
  } else if (prim == "fuse") {
    want(3);
    st.fuse(find_axis(st, args[1], step), find_axis(st, args[2], step));
  } else if (prim == "reorder") {
    std::vector<IterVar> order;
    for (size_t k = 1; k < args.size(); ++k) order.push_back(find_axis(st, args[k], step));
    st.reorder(order);
  } else if (prim == "vectorize" || prim == "unroll" || prim == "parallel") {
    want(2);
    const IterVar iv = find_axis(st, args[1], step);
    if (prim == "vectorize") st.vectorize(iv);
    if (prim == "unroll") st.unroll(iv);
    if (prim == "parallel") st.parallel(iv);
  } else if (prim == "prefetch") {
    if (args.size() != 5) want(4);
    if (args.size() == 5 && args[4].rfind("spread=", 0) != 0) parse_error(step, "expected spread=AXIS[+AXIS...]");
    if (args[3].rfind("offset=", 0) != 0) parse_error(step, "expected offset=N");
    Tensor tensor;
    for (const Tensor& t : tensors_read(st.node()->body)) {
      if (t.name() == args[1]) tensor = t;
    }
    if (!tensor.defined()) {
      throw UserError(UserErrorKind::kNotFound, "schedule step '" + std::string(step) + "'",
                      "stage '" + st.name() + "' reads no tensor named '" + args[1] + "'", "");
    }
    std::vector<IterVar> spread;  // spread=a+b: loop names joined by '+'
    for (std::string_view rest = args.size() == 5 ? std::string_view(args[4]).substr(7) : std::string_view(); !rest.empty();) {
      const size_t plus = rest.find('+');
      spread.push_back(find_axis(st, std::string(rest.substr(0, plus)), step));
      rest = plus == std::string_view::npos ? std::string_view() : rest.substr(plus + 1);
    }
    st.prefetch(tensor, find_axis(st, args[2], step), parse_int(step, args[3].substr(7)), spread);
  } else if (prim == "compute_at") {
    want(3);
    Stage consumer = stage(args[1]);
    st.compute_at(consumer, find_axis(consumer, args[2], step));
  } else if (prim == "compute_inline") {
    want(1);
    st.compute_inline();
  } else if (prim == "compute_root") {
    want(1);
    st.compute_root();
  } else if (prim == "cache_write") {
    want(2);
    MemoryScope scope;
    if (args[1] == "stack") {
      scope = MemoryScope::kStack;
    } else if (args[1] == "heap") {
      scope = MemoryScope::kHeap;
    } else {
      parse_error(step, "unknown memory scope '" + args[1] + "' (stack or heap)");
    }
    cache_write(st.node()->op, scope);
  } else {
    parse_error(step, "unknown primitive '" + prim + "'");
  }
}

}  // namespace kiln::tir
