// The graph IR's text form: a printer and a parser that round-trip (print -> parse gives a graph
// structurally_equal to the original). Grammar and examples: docs/ir.md. In short:
//
//   graph(%x: f32[1, 3, 224, 224]) {
//     %w3 = constant @w3 {checksum = 0x8c2e5a1f00d3b7e4} : f32[64, 3, 7, 7]
//     %shape = constant [1, -1] : i64[2]
//     %0 = conv2d(%x, %w3, strides=[2, 2], pads=[3, 3, 3, 3]) : f32[1, 64, 112, 112]
//     %1, %2 = split(%0, axis=1, sizes=[32, 32]) : (f32[1, 32, 112, 112], f32[1, 32, 112, 112])
//     return %1 as "a", %2 as "b"
//   }
//
// Constants with more than `inline_constant_limit` elements print as `@name` plus a checksum; their
// data goes to the side table (name -> NDArray, sharing the graph's storage, never copied), which
// the parser takes back. Small constants print their values inline (flat, C order).
#ifndef KILN_IR_TEXT_H_
#define KILN_IR_TEXT_H_

#include <map>
#include <string>
#include <string_view>

#include "kiln/ir/graph.h"

namespace kiln::ir {

struct PrintOptions {
  int64_t inline_constant_limit = 16;
};

struct GraphText {
  std::string text;
  std::map<std::string, NDArray> side_table;
};

GraphText print_graph(const Graph& graph, const PrintOptions& options = {});
// The text alone (large constants by reference).
std::string graph_to_text(const Graph& graph, const PrintOptions& options = {});

// Parses the text form. `source` names the text in errors ("model.kir"). Errors are
// UserError(kParse) with subject "source:line:column" and what was expected; a constant reference
// missing from `side_table`, or whose type or checksum differs, is an error too.
Graph parse_graph(std::string_view text, const std::map<std::string, NDArray>& side_table = {},
                  const std::string& source = "<text>");

}  // namespace kiln::ir

#endif  // KILN_IR_TEXT_H_
