// The accuracy options of kiln quantize (src/driver/quantize_equalize.cc,
// quantize_bias_correction.cc) on the MobileNetV2-like nets of make_quantize_cases.py
// (invres_relu / invres_relu6: inverted-residual blocks with depthwise convs, batch norms of spread
// per-channel scales folded into the weights):
//   - cross-layer equalization is an exact rewrite: the equalized f32 model, compiled by Kiln, gives
//     the original's outputs within 1e-5 relative L2 on inputs it never saw; the equalized pairs'
//     weight ranges match per channel; ReLU6 pairs are left alone, with a note.
//   - bias correction removes the mean error that weight quantization adds: per output channel of
//     every Conv, the mean (over samples and positions) of fake-quantized minus f32 is smaller with it.
//   - the sensitivity search (--skip-sensitive): its gated twin is the f32 model with every gate off;
//     keeping the 2 most sensitive nodes in f32 brings the output closer to f32 on the test inputs.
//   - nodes kept in f32 (--skip, --skip-op): a residual Add kept in f32 passes the f32 sum to the
//     next one (only quantized consumers read the dequantized copy).
// Skips when the fixture could not run (no torch/onnx/sklearn).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "driver/quantize_parts.h"
#include "driver/quantize_test_util.h"
#include "kiln/driver/quantize.h"
#include "kiln/frontend/onnx_qdq.h"
#include "kiln/ir/npy.h"
#include "kiln/support/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
namespace qdq = frontend::qdq;
using driver::quantize_detail::CompiledModel;

using quantize_test::kCases;
using quantize_test::tmp;
#define SKIP_IF_NO_CASES() KILN_SKIP_IF_NO_QUANTIZE_CASE("invres_relu.onnx")

ir::NDArray sample(const ir::NDArray& stacked, int64_t i) {
  ir::Shape shape = stacked.shape();
  shape[0] = 1;
  ir::NDArray s = ir::NDArray::empty(ir::DType::kF32, shape);
  std::memcpy(s.mutable_raw_data(), static_cast<const char*>(stacked.raw_data()) + i * s.nbytes(), s.nbytes());
  return s;
}

// max over the node's output channels i of |log(r1_i / r2_i)|, r1 = max|W_a[i]|, r2 = max|W_b[:, i]| (depthwise b).
double range_imbalance(const ir::NDArray& wa, const ir::NDArray& wb) {
  const int64_t c = wa.shape()[0], per_a = wa.numel() / c, per_b = wb.numel() / c;
  double worst = 0;
  for (int64_t i = 0; i < c; ++i) {
    double r1 = 0, r2 = 0;
    for (int64_t k = 0; k < per_a; ++k) r1 = std::max(r1, std::fabs(wa.get_as_double(i * per_a + k)));
    for (int64_t k = 0; k < per_b; ++k) r2 = std::max(r2, std::fabs(wb.get_as_double(i * per_b + k)));
    worst = std::max(worst, std::fabs(std::log(r1 / r2)));
  }
  return worst;
}

TEST(QuantizeAccuracy, EqualizationKeepsTheF32Outputs) {
  SKIP_IF_NO_CASES();
  const std::string model = (kCases / "invres_relu.onnx").string();
  qdq::ModelFacts f = qdq::read_model_facts(model);
  const auto eq = driver::quantize_detail::equalize_cross_layer(f);
  // expand -> Relu -> depthwise and depthwise -> Relu -> project in both blocks.
  EXPECT_EQ(eq.pairs, 4);
  EXPECT_TRUE(eq.notes.empty()) << eq.notes[0];
  std::vector<const qdq::ModelNode*> convs;
  for (const auto& n : f.nodes) {
    if (n.op_type == "Conv") convs.push_back(&n);
  }
  ASSERT_EQ(convs.size(), 8u);  // stem, 2 x (expand, depthwise, project), head
  for (int block : {0, 1}) {
    const auto& expand = *convs[static_cast<size_t>(1 + 3 * block)];
    const auto& depthwise = *convs[static_cast<size_t>(2 + 3 * block)];
    const double before = range_imbalance(f.float_initializers.at(expand.inputs[1]), f.float_initializers.at(depthwise.inputs[1]));
    const double after = range_imbalance(eq.values.at(expand.inputs[1]), eq.values.at(depthwise.inputs[1]));
    std::cout << "block " << block << ": max |log(r1 / r2)| " << before << " -> " << after << "\n";
    EXPECT_GT(before, 1.0);
    EXPECT_LT(after, 0.01);
  }

  const ir::NDArray x = ir::read_npy((kCases / "invres_test.npy").string());
  CompiledModel original(qdq::model_bytes_with_outputs(model, {}), model, {{"input", {1, 3, 32, 32}}}, "llvm", "original");
  CompiledModel equalized(qdq::model_bytes_with_outputs(model, {}, eq.values), model, {{"input", {1, 3, 32, 32}}}, "llvm", "equalized");
  double dd = 0, ff = 0;
  for (int64_t i = 0; i < x.shape()[0]; ++i) {
    original.run({"input"}, {sample(x, i)});
    equalized.run({"input"}, {sample(x, i)});
    int64_t n1 = 0, n2 = 0;
    const float* a = original.f32_output("output", &n1);
    const float* b = equalized.f32_output("output", &n2);
    ASSERT_EQ(n1, n2);
    for (int64_t k = 0; k < n1; ++k) {
      dd += (double(a[k]) - b[k]) * (double(a[k]) - b[k]);
      ff += double(a[k]) * a[k];
    }
  }
  const double rel = std::sqrt(dd / ff);
  std::cout << "equalized vs original f32 output: relative L2 " << rel << "\n";
  EXPECT_LT(rel, 1e-5);
}

TEST(QuantizeAccuracy, EqualizationLeavesReLU6PairsAlone) {
  SKIP_IF_NO_CASES();
  const auto eq = driver::quantize_detail::equalize_cross_layer(qdq::read_model_facts((kCases / "invres_relu6.onnx").string()));
  EXPECT_EQ(eq.pairs, 0);
  EXPECT_TRUE(eq.values.empty());
  ASSERT_EQ(eq.notes.size(), 4u);
  EXPECT_NE(eq.notes[0].find("Clip with a finite max"), std::string::npos) << eq.notes[0];
}

// Sum over every Conv output channel of |mean(fake-quantized - f32)| on `x`, and the same of
// |mean(f32)| for scale, of the model `fake` (the fake-quantized twin of `model`).
double conv_mean_error(const std::string& model, const std::string& fake, const ir::NDArray& x) {
  const qdq::ModelFacts f = qdq::read_model_facts(model);
  std::vector<std::string> outs;
  for (const auto& n : f.nodes) {
    if (n.op_type == "Conv") outs.push_back(n.outputs[0]);
  }
  CompiledModel a(qdq::model_bytes_with_outputs(model, outs), model, {{"input", {1, 3, 32, 32}}}, "llvm", "f32");
  CompiledModel b(qdq::model_bytes_with_outputs(fake, outs), fake, {{"input", {1, 3, 32, 32}}}, "llvm", "fake-quantized");
  std::vector<std::vector<double>> sums(outs.size());
  for (int64_t i = 0; i < x.shape()[0]; ++i) {
    a.run({"input"}, {sample(x, i)});
    b.run({"input"}, {sample(x, i)});
    for (size_t t = 0; t < outs.size(); ++t) {
      int64_t n1 = 0, n2 = 0;
      const float* p = a.f32_output(outs[t], &n1);
      const float* q = b.f32_output(outs[t], &n2);
      const ir::Shape shape = a.f32_output_shape(outs[t]);
      EXPECT_EQ(n1, n2);
      const int64_t c = shape[1], hw = n1 / c;
      sums[t].resize(static_cast<size_t>(c), 0.0);
      for (int64_t k = 0; k < n1; ++k) sums[t][static_cast<size_t>(k / hw)] += (double(q[k]) - p[k]) / double(hw);
    }
  }
  double total = 0;
  for (const auto& s : sums) {
    for (double v : s) total += std::fabs(v) / static_cast<double>(x.shape()[0]);
  }
  return total;
}

TEST(QuantizeAccuracy, BiasCorrectionReducesTheMeanErrorPerChannel) {
  SKIP_IF_NO_CASES();
  const std::string model = (kCases / "invres_relu6.onnx").string();
  double err[2];
  for (bool correct : {false, true}) {
    driver::QuantizeOptions o;
    o.model_path = model;
    o.output_path = tmp("invres.int8.onnx").string();
    o.fake_quant_path = tmp(correct ? "invres.bc.fq.onnx" : "invres.fq.onnx").string();
    o.calibration = {driver::parse_calibration_option((kCases / "invres_calib.npy").string())};
    o.reduce_range = true;  // 7-bit weights: a larger weight error to correct
    o.bias_correction = correct;
    o.report_samples = 0;
    const driver::QuantizeReport r = driver::quantize_model(o);
    EXPECT_EQ(r.bias_corrected, correct ? 9 : 0) << r.summary();  // 8 Conv + the Gemm
    err[correct] = conv_mean_error(model, o.fake_quant_path, ir::read_npy((kCases / "invres_test.npy").string()));
  }
  std::cout << "sum over conv channels of |mean error| on the test inputs: " << err[0] << " without, " << err[1]
            << " with bias correction\n";
  EXPECT_LT(err[1], 0.7 * err[0]);
}

// Output cosine to f32 on the test inputs of a fake-quantized twin.
double output_cosine(const std::string& model, const std::string& fake) {
  const ir::NDArray x = ir::read_npy((kCases / "invres_test.npy").string());
  CompiledModel a(qdq::model_bytes_with_outputs(model, {}), model, {{"input", {1, 3, 32, 32}}}, "llvm", "f32");
  CompiledModel b(qdq::model_bytes_with_outputs(fake, {}), fake, {{"input", {1, 3, 32, 32}}}, "llvm", "fake-quantized");
  double ff = 0, qq = 0, fq = 0;
  for (int64_t i = 0; i < x.shape()[0]; ++i) {
    a.run({"input"}, {sample(x, i)});
    b.run({"input"}, {sample(x, i)});
    int64_t n = 0;
    const float* p = a.f32_output("output", &n);
    const float* q = b.f32_output("output", &n);
    for (int64_t k = 0; k < n; ++k) {
      ff += double(p[k]) * p[k];
      qq += double(q[k]) * q[k];
      fq += double(p[k]) * q[k];
    }
  }
  return fq / std::sqrt(ff * qq);
}

TEST(QuantizeAccuracy, SkipSensitiveKeepsTheMostSensitiveNodesInF32) {
  SKIP_IF_NO_CASES();
  const std::string model = (kCases / "invres_relu6.onnx").string();
  double cosine[2];
  for (int skip : {0, 2}) {
    driver::QuantizeOptions o;
    o.model_path = model;
    o.output_path = tmp("invres.int8.onnx").string();
    o.fake_quant_path = tmp("invres.fq" + std::to_string(skip) + ".onnx").string();
    o.calibration = {driver::parse_calibration_option((kCases / "invres_calib.npy").string())};
    o.skip_sensitive = skip;
    const driver::QuantizeReport r = driver::quantize_model(o);
    if (skip > 0) {
      std::cout << r.summary();
      ASSERT_EQ(r.sensitivity.size(), 11u);  // every quantized node: 8 Conv, 2 Add, the Gemm
      for (size_t i = 1; i < r.sensitivity.size(); ++i) EXPECT_LE(r.sensitivity[i - 1].cosine, r.sensitivity[i].cosine);
      for (int k = 0; k < skip; ++k) {
        const std::string& node = r.sensitivity[static_cast<size_t>(k)].node;
        EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) {
          return n.find(node + ": kept in f32 (--skip-sensitive") != std::string::npos;
        })) << node << "\n" << r.summary();
      }
    }
    cosine[skip > 0] = output_cosine(model, o.fake_quant_path);
  }
  std::cout << "output cosine to f32 on the test inputs: " << cosine[0] << " all quantized, " << cosine[1]
            << " with the 2 most sensitive nodes in f32\n";
  EXPECT_LT(1 - cosine[1], 1 - cosine[0]);
}

TEST(QuantizeAccuracy, GatedTwinWithEveryGateOffIsTheF32Model) {
  SKIP_IF_NO_CASES();
  const std::string model = (kCases / "invres_relu6.onnx").string();
  // One activation of the gated form, x + g * (fq(x) - x): with g = 0 the model is the f32 one,
  // with g = 1 a coarse grid shows in the output.
  qdq::QdqPlan plan;
  plan.activations["/Add_output_0"] = {0.5f, 10, ir::DType::kU8};  // a coarse grid: visible when on
  std::map<std::string, std::string> gates;
  const std::string bytes = qdq::write_qdq_model(model, plan, qdq::QdqForm::kFakeQuantGated, {}, &gates);
  ASSERT_EQ(gates.size(), 1u);
  const std::string gate = gates.at("/Add_output_0");
  CompiledModel f32(qdq::model_bytes_with_outputs(model, {}), model, {{"input", {1, 3, 32, 32}}}, "llvm", "f32");
  CompiledModel gated(bytes, model, {{"input", {1, 3, 32, 32}}}, "llvm", "gated");
  const ir::NDArray x = sample(ir::read_npy((kCases / "invres_test.npy").string()), 0);
  f32.run({"input"}, {x});
  double diff[2];
  for (int on : {0, 1}) {
    gated.run({"input", gate}, {x, ir::NDArray::scalar(ir::DType::kF32, on)});
    int64_t n = 0;
    const float* a = f32.f32_output("output", &n);
    const float* b = gated.f32_output("output", &n);
    diff[on] = 0;
    for (int64_t k = 0; k < n; ++k) diff[on] = std::max(diff[on], double(std::fabs(a[k] - b[k])));
  }
  EXPECT_EQ(diff[0], 0.0);
  EXPECT_GT(diff[1], 1e-3);
}

// invres: x1 = stem(x) + block1(stem(x)); x2 = x1 + block2(x1). With both residual Adds kept in f32,
// x1 (an f32 sum) is quantized for block2's first conv only: the second Add reads x1 itself, not its
// dequantized copy (before, every consumer read the copy, so an Add "kept in f32" between quantized
// layers was computed on 8-bit values all the same, and ONNX Runtime fused it into a QLinearAdd).
// The first Add reads the stem's output dequantized: a quantized conv produces it.
TEST(QuantizeAccuracy, NodesKeptInF32ReadTheF32TensorsOfF32Producers) {
  SKIP_IF_NO_CASES();
  const std::string model = (kCases / "invres_relu6.onnx").string();
  std::vector<qdq::ModelNode> adds;
  for (const auto& n : qdq::read_model_facts(model).nodes) {
    if (n.op_type == "Add") adds.push_back(n);
  }
  ASSERT_EQ(adds.size(), 2u);
  for (bool by_type : {false, true}) {
    driver::QuantizeOptions o;
    o.model_path = model;
    o.output_path = tmp("invres_f32_adds.onnx").string();
    o.calibration = {driver::parse_calibration_option((kCases / "invres_calib.npy").string())};
    o.report_samples = 0;
    if (by_type) {
      o.skip_op_types = {"Add"};
    } else {
      o.skip = {adds[0].name, adds[1].name};
    }
    const driver::QuantizeReport r = driver::quantize_model(o);
    const std::string why = by_type ? ": kept in f32 (--skip-op Add)" : ": kept in f32 (--skip)";
    EXPECT_EQ(std::count_if(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(why) != std::string::npos; }), 2)
        << r.summary();
    std::map<std::string, std::string> producer;  // tensor -> op type
    std::map<std::string, std::vector<std::string>> inputs_of;  // Add node name -> inputs
    bool x1_quantized = false;
    for (const auto& n : qdq::read_model_facts(o.output_path).nodes) {
      for (const auto& t : n.outputs) producer[t] = n.op_type;
      if (n.op_type == "Add") inputs_of[n.name] = n.inputs;
      x1_quantized |= n.op_type == "QuantizeLinear" && n.inputs[0] == adds[0].outputs[0];
    }
    EXPECT_TRUE(x1_quantized) << "block2's first conv reads x1 quantized";
    const auto& second = inputs_of[adds[1].name];
    EXPECT_NE(std::find(second.begin(), second.end(), adds[0].outputs[0]), second.end())
        << "the second Add reads " << second[0] << ", " << second[1] << ", not the first Add's f32 output";
    for (const auto& t : inputs_of[adds[0].name]) EXPECT_EQ(producer[t], "DequantizeLinear") << t;
  }
  driver::QuantizeOptions o;
  o.model_path = model;
  o.output_path = tmp("invres_bad_op.onnx").string();
  o.calibration = {driver::parse_calibration_option((kCases / "invres_calib.npy").string())};
  o.skip_op_types = {"Softmax"};
  try {
    driver::quantize_model(o);
    ADD_FAILURE() << "no error for --skip-op of an op type the model does not have";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no node of the model has op type 'Softmax'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
