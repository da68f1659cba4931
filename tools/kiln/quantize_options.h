// The quantization options shared by `kiln quantize` and `kiln compile --quantize int8`
// (quantize_command.cc).
#ifndef KILN_TOOLS_KILN_QUANTIZE_OPTIONS_H_
#define KILN_TOOLS_KILN_QUANTIZE_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "kiln/driver/quantize.h"

namespace kiln::cli {

struct QuantizeCliOptions {
  std::vector<std::string> calibration;
  std::string method = "minmax";
  double percentile = 99.99;
  std::vector<std::string> skip;
  std::vector<std::string> skip_op_types;
  bool dynamic = false;
  bool reduce_range = false;
  int report_samples = 4;
  double error_threshold = 0.05;
  bool auto_skip = false;
  bool equalize = false;
  bool bias_correction = false;
  int skip_sensitive = 0;
  std::string fake_quant_path;
};

void add_quantize_options(CLI::App* cmd, QuantizeCliOptions* options);

driver::QuantizeOptions to_quantize_options(const QuantizeCliOptions& o, const std::string& model, const std::string& output,
                                            const std::vector<std::string>& input_shapes, const std::string& target);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_KILN_QUANTIZE_OPTIONS_H_
