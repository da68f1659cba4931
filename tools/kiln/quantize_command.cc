// `kiln quantize MODEL.onnx --calibration FILE.npy|DIR|NAME=FILE.npy ... -o MODEL.int8.onnx
//  [--method minmax|percentile|entropy] [--percentile P] [--skip NODE ...] [--skip-op TYPE ...] [--dynamic] [--reduce-range]
//  [--input-shape NAME:D0,...] [--report-samples N] [--error-threshold X] [--auto-skip]
//  [--equalize] [--bias-correction] [--skip-sensitive N]`: post-training
// quantization into a standard QDQ ONNX model (src/driver/quantize.cc, docs/int8.md). Also the
// quantization options `kiln compile --quantize int8` shares (add_quantize_options).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "kiln/driver/quantize.h"
#include "kiln/frontend/onnx.h"
#include "kiln/support/progress.h"
#include "quantize_options.h"

namespace kiln::cli {

void add_quantize_options(CLI::App* cmd, QuantizeCliOptions* o) {
  cmd->add_option("--calibration", o->calibration,
                  "Calibration samples: FILE.npy (stacked on axis 0), a directory of .npy files, or NAME=FILE.npy per input (repeatable)");
  cmd->add_option("--method", o->method, "Calibration: minmax (default), percentile, entropy (KL divergence)")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}));
  cmd->add_option("--percentile", o->percentile, "For --method percentile: the share of values kept, in percent (default 99.99)")
      ->check(CLI::Range(50.0, 100.0));
  cmd->add_option("--skip", o->skip, "Keep these nodes (ONNX node names) in f32 (repeatable)");
  cmd->add_option("--skip-op", o->skip_op_types, "Keep every node of these ONNX op types (e.g. Add) in f32 (repeatable)");
  cmd->add_flag("--dynamic", o->dynamic, "Dynamic quantization of MatMul/Gemm (DynamicQuantizeLinear + MatMulInteger); no calibration needed");
  cmd->add_flag("--reduce-range", o->reduce_range, "7-bit weights (for u8 x s8 kernels that saturate 16-bit sums)");
  cmd->add_option("--report-samples", o->report_samples, "Samples the per-layer error report runs (default 4; 0: no report)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--write-fake-quant", o->fake_quant_path,
                  "Also write the fake-quantized f32 twin of the QDQ model (same numerics in f32 ops) to this file");
  cmd->add_option("--error-threshold", o->error_threshold, "Flag layers that add more relative L2 error than this (default 0.05)");
  cmd->add_flag("--auto-skip", o->auto_skip, "Keep the layers the error report flags in f32 and quantize again");
  cmd->add_flag("--equalize", o->equalize,
                "Cross-layer equalization: rescale Conv -> [Relu] -> Conv pairs (an exact f32 rewrite) before calibration");
  cmd->add_option("--skip-sensitive", o->skip_sensitive,
                  "Sensitivity search: quantize each node alone on the report samples and keep the N whose output cosine "
                  "drops most in f32, then quantize again")
      ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--bias-correction", o->bias_correction,
                "Correct Conv/Gemm biases by the mean output error of weight quantization (measured on the calibration data)");
}

driver::QuantizeOptions to_quantize_options(const QuantizeCliOptions& o, const std::string& model, const std::string& output,
                                            const std::vector<std::string>& input_shapes, const std::string& target) {
  driver::QuantizeOptions q;
  q.model_path = model;
  q.output_path = output;
  for (const auto& spec : o.calibration) q.calibration.push_back(driver::parse_calibration_option(spec));
  q.method = driver::parse_calibration_method(o.method);
  q.percentile = o.percentile;
  q.skip = o.skip;
  q.skip_op_types = o.skip_op_types;
  q.dynamic = o.dynamic;
  q.reduce_range = o.reduce_range;
  q.report_samples = o.report_samples;
  q.error_threshold = o.error_threshold;
  q.auto_skip = o.auto_skip;
  q.equalize = o.equalize;
  q.bias_correction = o.bias_correction;
  q.skip_sensitive = o.skip_sensitive;
  q.target = target;
  q.fake_quant_path = o.fake_quant_path;
  for (const auto& spec : input_shapes) frontend::parse_input_shape_option(spec, &q.input_shapes);
  return q;
}

void register_quantize(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("quantize", "Post-training int8 quantization of an ONNX model into a standard QDQ ONNX model");
  struct Options {
    std::string model;
    std::string output;
    std::vector<std::string> input_shapes;
    std::string target = "llvm";
    QuantizeCliOptions q;
    bool quiet = false;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("model", opts->model, "f32 ONNX model file")->required();
  cmd->add_option("-o,--output", opts->output, "Quantized ONNX model to write (e.g. model.int8.onnx)")->required();
  cmd->add_option("--input-shape", opts->input_shapes, "Fix an input's shape: NAME:D0,D1,... (repeatable)");
  cmd->add_option("--target", opts->target, "Target of the calibration artifacts (default: this machine)");
  add_quantize_options(cmd, &opts->q);
  cmd->add_flag("-q,--quiet", opts->quiet, "No progress line on the terminal (it is never shown when stderr is not one)");
  cmd->callback([opts, &ctx] {
    Progress progress = Progress::on_terminal("kiln quantize", !opts->quiet);
    driver::QuantizeOptions q = to_quantize_options(opts->q, opts->model, opts->output, opts->input_shapes, opts->target);
    q.progress = &progress;
    const driver::QuantizeReport report = driver::quantize_model(q);
    progress.finish();
    std::cout << report.summary();
    ctx.exit_code = 0;
  });
}

}  // namespace kiln::cli
