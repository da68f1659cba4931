// kiln quantize end to end (src/driver/quantize*.cc) on the models of make_quantize_cases.py:
//   - the digits CNN trained by the fixture, quantized with 500 training images (minmax, entropy,
//     percentile): the int8 numerics (the fake-quantized f32 twin of the written QDQ model, compiled
//     by Kiln: the same Q/DQ arithmetic in f32; and, for minmax, the QDQ model itself compiled by
//     Kiln into integer kernels) lose at most 0.5 points of test accuracy against the f32 model
//     compiled by Kiln; the written model is standard QDQ (QuantizeLinear, DequantizeLinear).
//   - the MLP with --dynamic: DynamicQuantizeLinear + MatMulInteger, output cosine >= 0.999 against f32.
//   - bad input: wrong dtype/shape, NaN, empty set, directory without .npy, unknown input, --skip
//     of a missing node: each a UserError naming the problem.
// Skips when the fixture could not run (no torch/onnx/sklearn).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "driver/quantize_parts.h"
#include "driver/quantize_test_util.h"
#include "kiln/driver/quantize.h"
#include "kiln/ir/npy.h"
#include "kiln/support/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using driver::quantize_detail::CompiledModel;

using quantize_test::kCases;
using quantize_test::tmp;
#define SKIP_IF_NO_CASES() KILN_SKIP_IF_NO_QUANTIZE_CASE("digits.onnx")

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
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
    if (method == driver::CalibrationMethod::kMinMax) {
      // The QDQ model itself, imported and compiled by Kiln into integer kernels.
      const double qdq = accuracy(written, out);
      std::cout << "digits test accuracy of the QDQ model compiled by Kiln: " << qdq << "%\n";
      EXPECT_GE(qdq, f32 - 0.5);
    }
  }
}

TEST(Quantize, DynamicMatMulWritesMatMulIntegerAndStaysClose) {
  SKIP_IF_NO_CASES();
  driver::QuantizeOptions o;
  o.model_path = (kCases / "mlp.onnx").string();
  o.output_path = tmp("mlp.int8.onnx").string();
  o.calibration = {driver::parse_calibration_option("x=" + (kCases / "mlp_calib.npy").string())};
  o.dynamic = true;
  const driver::QuantizeReport r = driver::quantize_model(o);
  EXPECT_EQ(r.dynamic_nodes, 2) << r.summary();
  EXPECT_EQ(r.quantized_nodes, 0);
  const std::string written = read_bytes(o.output_path);
  EXPECT_NE(written.find("DynamicQuantizeLinear"), std::string::npos);
  EXPECT_NE(written.find("MatMulInteger"), std::string::npos);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_GT(r.outputs[0].cosine, 0.999) << r.summary();
  EXPECT_EQ(r.layers.size(), 2u);
}

TEST(Quantize, SkipKeepsANodeInF32) {
  SKIP_IF_NO_CASES();
  driver::QuantizeOptions o = digits_options(tmp("skip.onnx").string());
  o.skip = {"/fc2/Gemm"};
  o.report_samples = 0;
  const driver::QuantizeReport r = driver::quantize_model(o);
  EXPECT_EQ(r.quantized_nodes, 6) << r.summary();
  o.skip = {"no_such_node"};
  EXPECT_THROW(driver::quantize_model(o), UserError);
}

// --auto-skip keeps the layers the error report flags in f32 and quantizes again (a negative
// threshold flags every Conv/Gemm: 5 of the 7 quantized nodes leave, Add and MaxPool stay); it
// needs the report.
TEST(Quantize, AutoSkipKeepsTheFlaggedLayersInF32) {
  SKIP_IF_NO_CASES();
  driver::QuantizeOptions o = digits_options(tmp("autoskip.onnx").string());
  o.report_samples = 2;
  o.error_threshold = -1;
  o.auto_skip = true;
  const driver::QuantizeReport r = driver::quantize_model(o);
  EXPECT_EQ(r.quantized_nodes, 2) << r.summary();
  int auto_notes = 0;
  for (const auto& n : r.notes) auto_notes += n.find("--auto-skip") != std::string::npos;
  EXPECT_EQ(auto_notes, 5) << r.summary();
  EXPECT_TRUE(r.layers.empty()) << r.summary();  // no Conv/Gemm left to compare
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_GT(r.outputs[0].cosine, 0.999) << r.summary();
  o.report_samples = 0;
  EXPECT_THROW(driver::quantize_model(o), UserError);
}

// Runs quantize_model with one calibration array and expects a UserError whose text holds `needle`.
void expect_calibration_error(const ir::NDArray& data, const std::string& needle) {
  const std::string file = tmp("bad.npy").string();
  ir::write_npy(file, data);
  driver::QuantizeOptions o = digits_options(tmp("bad.int8.onnx").string());
  o.calibration = {driver::parse_calibration_option(file)};
  try {
    driver::quantize_model(o);
    ADD_FAILURE() << "no error for " << needle;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
}

TEST(Quantize, BadCalibrationDataIsAUserError) {
  SKIP_IF_NO_CASES();
  expect_calibration_error(ir::NDArray::empty(ir::DType::kF64, {4, 1, 8, 8}), "dtype f64");
  expect_calibration_error(ir::NDArray::empty(ir::DType::kF32, {4, 1, 8, 9}), "does not match the input's shape");
  expect_calibration_error(ir::NDArray::empty(ir::DType::kF32, {4, 8, 8}), "rank 3");
  expect_calibration_error(ir::NDArray::empty(ir::DType::kF32, {0, 1, 8, 8}), "no samples");
  ir::NDArray nan = ir::NDArray::empty(ir::DType::kF32, {2, 1, 8, 8});
  nan.set_from_double(70, std::nan(""));
  expect_calibration_error(nan, "non-finite");

  driver::QuantizeOptions o = digits_options(tmp("bad.int8.onnx").string());
  o.calibration = {};
  try {
    driver::quantize_model(o);
    ADD_FAILURE() << "no error for an empty calibration set";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no calibration data given"), std::string::npos) << e.what();
  }
  const fs::path empty_dir = tmp("empty_dir");
  fs::create_directories(empty_dir);
  o.calibration = {driver::parse_calibration_option(empty_dir.string())};
  try {
    driver::quantize_model(o);
    ADD_FAILURE() << "no error for a directory without .npy files";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no .npy files"), std::string::npos) << e.what();
  }
  o.calibration = {driver::parse_calibration_option("nope=" + (kCases / "digits_calib.npy").string())};
  try {
    driver::quantize_model(o);
    ADD_FAILURE() << "no error for an unknown input";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no input 'nope'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(driver::parse_calibration_method("median"), UserError);
}

TEST(Quantize, CalibrationDirectoryOfSamples) {
  SKIP_IF_NO_CASES();
  const fs::path dir = tmp("calib_dir");
  fs::create_directories(dir);
  const ir::NDArray all = ir::read_npy((kCases / "digits_calib.npy").string());
  for (int i = 0; i < 3; ++i) {
    ir::NDArray one = ir::NDArray::empty(ir::DType::kF32, {1, 1, 8, 8});
    std::memcpy(one.mutable_raw_data(), static_cast<const float*>(all.raw_data()) + i * 64, 64 * sizeof(float));
    ir::write_npy((dir / (std::to_string(i) + ".npy")).string(), one);
  }
  driver::QuantizeOptions o = digits_options(tmp("dir.int8.onnx").string());
  o.calibration = {driver::parse_calibration_option("image=" + dir.string())};
  EXPECT_EQ(driver::quantize_model(o).samples, 3);
}

}  // namespace
}  // namespace kiln
