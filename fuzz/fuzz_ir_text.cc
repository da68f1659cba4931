// libFuzzer target: the graph IR's text parser (kiln::ir::parse_graph). Any text must either be
// refused with a kiln::UserError, or parse into a graph that the IR verifier accepts and that
// round-trips: print_graph -> parse_graph gives a graph structurally_equal to the first, and
// printing that gives the same text. Nothing else: no crash, no InternalError, no leak.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_ir_text: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KILN_MAX_TENSOR_BYTES", "67108864", /*overwrite=*/0);  // 64 MiB per tensor
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::ir::Graph graph;
  try {
    graph = kiln::ir::parse_graph(std::string_view(reinterpret_cast<const char*>(data), size), {}, "fuzz.kir");
  } catch (const kiln::UserError&) {
    return 0;
  }
  const std::vector<std::string> problems = kiln::ir::verify_graph(graph);
  if (!problems.empty()) {
    std::string all;
    for (const std::string& p : problems) all += "  " + p + "\n";
    fail("the parser returned a graph the verifier rejects:", all);
  }
  const kiln::ir::GraphText printed = kiln::ir::print_graph(graph);
  kiln::ir::Graph again;
  try {
    again = kiln::ir::parse_graph(printed.text, printed.side_table, "printed.kir");
  } catch (const kiln::UserError& e) {
    fail("the printed text does not parse again:", std::string(e.what()) + "\n" + printed.text);
  }
  std::string why;
  if (!kiln::ir::structurally_equal(graph, again, &why)) {
    fail("print -> parse is not the same graph:", why + "\n" + printed.text);
  }
  if (kiln::ir::print_graph(again).text != printed.text) fail("printing twice differs:", printed.text);
  return 0;
}
