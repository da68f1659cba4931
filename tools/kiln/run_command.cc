// `kiln run MODEL.onnx --executor reference [--input NAME=FILE.npy ...] [--fill random|zeros|ones]
//  [--seed N] [--bind NAME=FILE.npy ...] (--output FILE.npy ... | --output-dir DIR | --output-npz FILE |
//  --print-top K)`:
// imports a model, runs it on the chosen executor and writes each graph output as a .npy file
// (one --output per graph output, in order; or DIR/<output name>.npy), all of them into one .npz,
// or prints their largest entries. Inputs not given are made up (run_io.h) when no --input is
// given at all or --fill is. An artifact (.so) runs through run_artifact.cc instead.
#include <chrono>
#include <iostream>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "command.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/npy.h"
#include "kiln/ir/npz.h"
#include "kiln/ref/executor.h"
#include "kiln/support/error.h"
#include "run_artifact.h"
#include "run_io.h"

namespace kiln::cli {
namespace {

// A graph output name made safe as a file name.
std::string file_name_for(const std::string& output_name) {
  std::string out;
  for (char c : output_name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  if (out.empty() || out[0] == '.') out = "_" + out;
  return out + ".npy";
}

}  // namespace

void register_run(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("run", "Run a model on inputs from .npy files and write its outputs as .npy");
  struct Options {
    std::string model;
    std::string executor = "reference";
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    std::string output_dir;
    std::vector<std::string> input_shapes;
    std::vector<std::string> binds;
    int repeat = 1, warmup = 0, threads = -1;  // artifacts only (run_artifact.cc)
    bool profile = false;
    std::string fill;
    uint64_t seed = 0;
    int print_top = 0;
    std::string output_npz;
    std::string trace;  // artifacts only
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("model", opts->model, "ONNX model file, or an artifact (.so) from kiln compile")->required();
  cmd->add_option("--executor", opts->executor, "Executor: reference (plain C++ loops, the oracle)");
  cmd->add_option("--input", opts->inputs, "NAME=FILE.npy for each graph input (repeatable)");
  auto* out_opt = cmd->add_option("--output", opts->outputs, "FILE.npy for each graph output, in order (repeatable)");
  auto* dir_opt = cmd->add_option("--output-dir", opts->output_dir, "Write every output as DIR/<output name>.npy");
  out_opt->excludes(dir_opt);
  cmd->add_option("--input-shape", opts->input_shapes, "Fix an input's shape: NAME:D0,D1,... (repeatable)");
  cmd->add_option("--bind", opts->binds,
                  "Specialize graph input NAME to the constant in FILE.npy: NAME=FILE.npy (repeatable)");
  cmd->add_option("--repeat", opts->repeat, "Artifacts: timed runs; prints median (min/max) latency")->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", opts->warmup, "Artifacts: untimed runs before the timed ones")->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", opts->threads, "Artifacts: thread count (default $KILN_NUM_THREADS or one per core)")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--profile", opts->profile, "Artifacts: print per-kernel times over the timed runs");
  cmd->add_option("--fill", opts->fill,
                  "Make up the inputs not given by --input (all of them when none is): random (floats in "
                  "[-1, 1), integers 0..9; the default with no --input), zeros or ones")
      ->check(CLI::IsMember({"random", "zeros", "ones"}));
  cmd->add_option("--seed", opts->seed, "Seed of --fill random (default 0)");
  cmd->add_option("--print-top", opts->print_top, "Print the K largest entries of each output with their indices")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--output-npz", opts->output_npz, "Write every output into one numpy .npz (keys: output names)");
  cmd->add_option("--trace", opts->trace,
                  "Artifacts: write every kernel launch of the timed runs as Chrome trace-event JSON "
                  "(Perfetto, chrome://tracing)");
  cmd->callback([opts, &ctx] {
    // A compiled artifact (an ELF shared library) runs through libkiln_runtime instead.
    if (is_artifact_file(opts->model)) {
      if (!opts->binds.empty()) {
        throw UserError(UserErrorKind::kInvalidArgument, "--bind", "applies to ONNX models only; an artifact's inputs are fixed when it is compiled",
                        "pass --bind to kiln compile instead");
      }
      run_artifact(RunArtifactOptions{opts->model, opts->inputs, opts->outputs, opts->output_dir, opts->repeat,
                                      opts->warmup, opts->threads, opts->profile, opts->fill, opts->seed,
                                      opts->print_top, opts->output_npz, opts->trace},
                   std::cout);
      ctx.exit_code = 0;
      return;
    }
    if (opts->repeat != 1 || opts->warmup != 0 || opts->threads != -1 || opts->profile || !opts->trace.empty()) {
      throw UserError(UserErrorKind::kInvalidArgument, "kiln run " + opts->model,
                      "--repeat, --warmup, --threads, --profile and --trace apply to compiled artifacts only",
                      "compile the model first (kiln compile) and run the artifact");
    }
    if (opts->executor != "reference") {
      throw UserError(UserErrorKind::kInvalidArgument, "--executor " + opts->executor, "unknown executor",
                      "available: reference");
    }
    if (opts->outputs.empty() && opts->output_dir.empty() && opts->output_npz.empty() && opts->print_top == 0) {
      throw UserError(UserErrorKind::kInvalidArgument, "kiln run", "no output destination",
                      "pass --output FILE.npy per graph output, --output-dir DIR, --output-npz FILE or --print-top K");
    }
    frontend::OnnxImportOptions options;
    for (const auto& spec : opts->input_shapes) frontend::parse_input_shape_option(spec, &options.input_shapes);
    for (const auto& spec : opts->binds) frontend::parse_bind_option(spec, &options.constant_inputs);
    std::map<std::string, ir::NDArray> inputs;
    for (const auto& spec : opts->inputs) {
      auto eq = spec.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
        throw UserError(UserErrorKind::kInvalidArgument, "--input " + spec, "expected NAME=FILE.npy");
      }
      const std::string name = spec.substr(0, eq);
      if (inputs.count(name)) throw UserError(UserErrorKind::kInvalidArgument, "--input " + spec, "input '" + name + "' given twice");
      inputs[name] = ir::read_npy(spec.substr(eq + 1));
    }
    for (const auto& [name, array] : options.constant_inputs) {
      if (inputs.count(name)) {
        throw UserError(UserErrorKind::kInvalidArgument, "--input " + name, "input '" + name + "' is also bound with --bind",
                        "give it once: --bind makes it a constant, --input feeds it at run time");
      }
    }
    // Inputs given as .npy fix the shapes of dynamic inputs unless --input-shape does.
    for (const auto& [name, array] : inputs) {
      if (!options.input_shapes.count(name)) options.input_shapes[name] = array.shape();
    }
    ir::Graph graph;
    try {
      graph = frontend::import_onnx(opts->model, options);
    } catch (const UserError& e) {
      // An --input naming no model input is reported as such, not as an --input-shape problem.
      if (e.kind() == UserErrorKind::kNotFound && e.subject().rfind("--input-shape ", 0) == 0) {
        std::string name = e.subject().substr(14);
        throw UserError(UserErrorKind::kNotFound, "--input " + name, e.reason(), e.hint());
      }
      throw;
    }
    if (!opts->outputs.empty() && opts->outputs.size() != graph.outputs().size()) {
      std::string names;
      for (const auto& n : graph.output_names()) names += (names.empty() ? "" : ", ") + n;
      throw UserError(UserErrorKind::kInvalidArgument, "--output",
                      "given " + std::to_string(opts->outputs.size()) + " times; the model has " +
                          std::to_string(graph.outputs().size()) + " outputs (" + names + ")",
                      "pass one --output per graph output, in order, or --output-dir DIR");
    }
    // Inputs not given: made up with --fill, or when no --input is given at all.
    const bool fill = !opts->fill.empty() || opts->inputs.empty();
    const FillMode mode = opts->fill.empty() ? FillMode::kRandom : parse_fill_mode(opts->fill);
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      const ir::NodePtr& in = graph.inputs()[i];
      if (inputs.count(in->name())) continue;
      const ir::TensorType& t = in->as_input().type();
      if (!fill) {
        throw UserError(UserErrorKind::kInvalidArgument, "kiln run " + opts->model,
                        "no --input for '" + in->name() + "' (" + t.to_string() + ")",
                        "pass --input NAME=FILE.npy for each graph input, or --fill random|zeros|ones to make up "
                        "the others");
      }
      inputs[in->name()] = filled_input(t.dtype, static_sizes(t.shape), mode, opts->seed, i);
      std::cout << fill_note(in->name(), inputs[in->name()], mode, opts->seed);
    }
    auto start = std::chrono::steady_clock::now();
    std::vector<ir::NDArray> results = ref::run_graph(graph, inputs);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!opts->output_dir.empty()) std::filesystem::create_directories(opts->output_dir);
    for (size_t i = 0; i < results.size(); ++i) {
      std::string path = !opts->outputs.empty()     ? opts->outputs[i]
                         : !opts->output_dir.empty() ? (std::filesystem::path(opts->output_dir) /
                                                        file_name_for(graph.output_names()[i]))
                                                           .string()
                                                     : std::string();
      if (!path.empty()) ir::write_npy(path, results[i]);
      std::printf("%s: %s%s\n", graph.output_names()[i].c_str(), results[i].type().to_string().c_str(),
                  path.empty() ? "" : (" -> " + path).c_str());
    }
    if (!opts->output_npz.empty()) {
      ir::NamedArrays npz;
      for (size_t i = 0; i < results.size(); ++i) npz.emplace_back(graph.output_names()[i], results[i]);
      ir::write_npz(opts->output_npz, npz);
      std::printf("wrote %zu output%s -> %s\n", results.size(), results.size() == 1 ? "" : "s", opts->output_npz.c_str());
    }
    for (size_t i = 0; opts->print_top > 0 && i < results.size(); ++i) {
      std::fputs(top_k_text(graph.output_names()[i], results[i], opts->print_top).c_str(), stdout);
    }
    std::printf("ran %d calls on the reference executor in %.3f s\n", graph.num_calls(), seconds);
    ctx.exit_code = 0;
  });
}

}  // namespace kiln::cli
