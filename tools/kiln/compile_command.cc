// `kiln compile MODEL.onnx [-o OUT.so] [--target T] [-O N] [--input-shape NAME:D0,D1,...] [--bind NAME=FILE.npy]
//  [--dump-ir-after=PASS|all] [--records FILE.db] [--quantize int8 --calibration ... (the options of kiln quantize)]`
// (or `--example NAME` instead of MODEL): builds one artifact and prints what it did
// (src/driver/compile.cc, docs/compile.md). Without -o the artifact is MODEL's path with the
// extension .so (model.onnx -> model.so, beside it), or NAME.so in the current directory for
// --example NAME. With --quantize int8 the model is first quantized
// into OUT's stem + .int8.onnx (quantize_command.cc, docs/int8.md) and that model is compiled.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/npy.h"
#include "kiln/driver/quantize.h"
#include "kiln/support/error.h"
#include "kiln/support/progress.h"
#include "quantize_options.h"

namespace kiln::cli {
namespace {

// Where `kiln compile` writes without -o (see the header comment).
std::string default_artifact_path(const std::string& model, const std::string& example) {
  if (model.empty()) return example + ".so";
  std::filesystem::path p(model);
  p.replace_extension(".so");
  if (p == std::filesystem::path(model)) {
    throw UserError(UserErrorKind::kInvalidArgument, "kiln compile " + model,
                    "the default artifact path (the model's with .so) is the model itself",
                    "name the artifact with -o OUT.so");
  }
  return p.string();
}

}  // namespace

void register_compile(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("compile", "Compile an ONNX model (or a built-in example) into one artifact (.so)");
  struct Options {
    std::string model;
    std::string example;
    std::string output;
    std::string target = "llvm";
    int opt_level = 3;
    std::vector<std::string> input_shapes;
    std::vector<std::string> binds;
    std::string dump_ir_after;
    std::vector<std::string> disabled_passes;
    std::string quantize;
    QuantizeCliOptions q;
    std::string records;
    int jobs = 0;
    bool no_kernel_cache = false;
    bool quiet = false;
  };
  auto opts = std::make_shared<Options>();
  auto* model_opt = cmd->add_option("model", opts->model, "ONNX model file");
  auto* example_opt = cmd->add_option("--example", opts->example,
                                      "Compile a built-in example model instead (tiny-cnn); also writes "
                                      "OUT_input.npy, an input for kiln run");
  model_opt->excludes(example_opt);
  cmd->add_option("-o,--output", opts->output,
                  "Artifact to write (a shared library; default: the model's path with .so, e.g. model.onnx -> model.so)");
  cmd->add_option("--target", opts->target, "Target: llvm (this machine), 'llvm -mcpu=znver4', 'llvm -mattr=+avx2,+fma', 'llvm -vector-width=256', ... (docs/codegen.md)");
  cmd->add_option("-j,--jobs", opts->jobs,
                  "Threads for LLVM code generation (default: one per core within the available memory, or "
                  "$KILN_COMPILE_THREADS)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("-q,--quiet", opts->quiet, "No progress line on the terminal (it is never shown when stderr is not one)");
  cmd->add_flag("--no-kernel-cache", opts->no_kernel_cache,
                "Compile every kernel module anew, neither reading nor writing the kernel cache "
                "($KILN_CACHE_DIR, default ~/.cache/kiln; $KILN_CACHE=off does the same)");
  cmd->add_option("-O,--opt-level", opts->opt_level, "Optimization level 0..3 (default 3)")->check(CLI::Range(0, 3));
  cmd->add_option("--input-shape", opts->input_shapes, "Fix an input's shape: NAME:D0,D1,... (repeatable)");
  cmd->add_option("--bind", opts->binds,
                  "Specialize graph input NAME to the constant in FILE.npy: NAME=FILE.npy (repeatable)");
  cmd->add_option("--dump-ir-after", opts->dump_ir_after, "Print the graph IR after pass PASS (or all) to stderr");
  cmd->add_option("--disable-pass", opts->disabled_passes, "Skip a pass by name (repeatable)");
  cmd->add_option("--quantize", opts->quantize, "Quantize first (int8: kiln quantize into OUT_STEM.int8.onnx, then compile that)")
      ->check(CLI::IsMember({"int8"}));
  add_quantize_options(cmd, &opts->q);
  cmd->add_option("--records", opts->records,
                  "Tuning records (kiln tune, docs/tuning.md): settle layer choices and build each kernel "
                  "with its best record for this device");
  cmd->callback([opts, &ctx] {
    if (opts->model.empty() && opts->example.empty()) {
      throw UserError(UserErrorKind::kInvalidArgument, "kiln compile", "no model given",
                      "pass MODEL.onnx or --example NAME (available: tiny-cnn)");
    }
    const std::string output = opts->output.empty() ? default_artifact_path(opts->model, opts->example) : opts->output;
    if (opts->output.empty()) std::cout << "no -o given: writing " << output << "\n";
    driver::CompileOptions options;
    options.target = opts->target;
    options.opt_level = opts->opt_level;
    options.dump_ir_after = opts->dump_ir_after;
    options.disabled_passes = opts->disabled_passes;
    options.records = opts->records;
    options.codegen_threads = opts->jobs;
    options.use_kernel_cache = !opts->no_kernel_cache;
    for (const auto& spec : opts->input_shapes) frontend::parse_input_shape_option(spec, &options.input_shapes);
    for (const auto& spec : opts->binds) frontend::parse_bind_option(spec, &options.constant_inputs);
    Progress progress = Progress::on_terminal("kiln compile", !opts->quiet);
    options.progress = &progress;
    driver::CompileReport report;
    if (!opts->example.empty()) {
      const ir::Graph graph = driver::example_model(opts->example);
      options.artifact.producer = "example " + opts->example;
      report = driver::compile_graph(graph, output, options);
      // An input for `kiln run`: a fixed pattern.
      for (const ir::NodePtr& in : graph.inputs()) {
        const ir::TensorType& t = in->as_input().type();
        ir::NDArray a = ir::NDArray::empty(t.dtype, t.shape);
        for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, std::cos(0.01 * static_cast<double>(i)));
        std::filesystem::path p(output);
        const std::string file = (p.parent_path() / (p.stem().string() + "_" + in->name() + ".npy")).string();
        ir::write_npy(file, a);
        Progress::erase_for_output();
        std::cout << "example input: " << in->name() << "=" << file << "\n";
      }
    } else if (!opts->quantize.empty()) {
      std::filesystem::path p(output);
      const std::string qmodel = (p.parent_path() / (p.stem().string() + ".int8.onnx")).string();
      driver::QuantizeOptions qo = to_quantize_options(opts->q, opts->model, qmodel, opts->input_shapes, opts->target);
      qo.progress = &progress;
      const driver::QuantizeReport q = driver::quantize_model(qo);
      Progress::erase_for_output();
      std::cout << q.summary() << std::flush;
      report = driver::compile_onnx(qmodel, output, options);
    } else {
      if (!opts->q.calibration.empty() || opts->q.dynamic) {
        throw UserError(UserErrorKind::kInvalidArgument, "kiln compile", "quantization options given without --quantize int8",
                        "add --quantize int8 (or use kiln quantize)");
      }
      report = driver::compile_onnx(opts->model, output, options);
    }
    progress.finish();
    std::cout << report.summary();
    ctx.exit_code = 0;
  });
}

}  // namespace kiln::cli
