// `kiln ir MODEL.onnx [--input-shape NAME:D0,D1,...]... [--bind NAME=FILE.npy]... [--dynamic [--dim NAME=LO..HI]...]`:
// imports an ONNX model and prints its graph IR in the text form (docs/ir.md); with --dynamic the
// dimensions the model leaves symbolic stay size variables (docs/dynamic.md). Large constants print as references with a checksum; with
// --side-table DIR their data is written there too, so the text parses back (ir::parse_graph with
// ir::read_side_table(DIR)) to the same graph.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "command.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/side_table.h"
#include "kiln/ir/text.h"
#include "kiln/support/error.h"

namespace kiln::cli {

void register_ir(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("ir", "Import a model and print its graph IR in the text form");
  struct Options {
    std::string model;
    std::vector<std::string> input_shapes;
    std::vector<std::string> binds;
    bool dynamic = false;
    std::vector<std::string> dims;
    int64_t inline_limit = 16;
    std::string side_table;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("model", opts->model, "ONNX model file")->required();
  cmd->add_option("--input-shape", opts->input_shapes, "Fix an input's shape: NAME:D0,D1,... (repeatable)");
  cmd->add_option("--bind", opts->binds,
                  "Specialize graph input NAME to the constant in FILE.npy: NAME=FILE.npy (repeatable)");
  cmd->add_flag("--dynamic", opts->dynamic,
               "Keep the model's symbolic dimensions as size variables (graph<batch: 1..65536, ...>) instead of refusing them");
  cmd->add_option("--dim", opts->dims, "With --dynamic, declare a size variable's range: NAME=LO..HI (repeatable)");
  cmd->add_option("--inline-limit", opts->inline_limit, "Print constants with at most this many elements inline (16)");
  cmd->add_option("--side-table", opts->side_table,
                  "Also write the data of constants printed by reference to DIR (index.tsv + .npy files)");
  cmd->callback([opts, &ctx] {
    frontend::OnnxImportOptions options;
    for (const auto& spec : opts->input_shapes) frontend::parse_input_shape_option(spec, &options.input_shapes);
    for (const auto& spec : opts->binds) frontend::parse_bind_option(spec, &options.constant_inputs);
    for (const auto& spec : opts->dims) frontend::parse_dim_option(spec, &options.dim_ranges);
    if (!opts->dims.empty() && !opts->dynamic) {
      throw UserError(UserErrorKind::kInvalidArgument, "--dim", "declares a size variable's range, which only --dynamic keeps",
                      "add --dynamic (or pin the dimension with --input-shape)");
    }
    options.symbolic_dims = opts->dynamic;
    ir::Graph graph = frontend::import_onnx(opts->model, options);
    ir::PrintOptions print;
    print.inline_constant_limit = opts->inline_limit;
    ir::GraphText text = ir::print_graph(graph, print);
    if (!opts->side_table.empty()) ir::write_side_table(opts->side_table, text.side_table);
    std::fputs(text.text.c_str(), stdout);
    ctx.exit_code = 0;
  });
}

}  // namespace kiln::cli
