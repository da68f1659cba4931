// The whole O3 pipeline (and O2) on the generated models: ResNet-50, MobileNetV2 and the BERT-style
// encoder (scripts/gen_test_models.py, CTest fixture test_models). Each optimized graph runs on the
// reference executor and is compared with the unoptimized imported graph on the saved input.
// Metric: max relative error = max|optimized - original| / max|original| <= 1e-4 (f32). The bound:
// SimplifyInference folds batch_norm into conv weights rounding each step to f32 (instead of the
// reference's double), a few ulps per layer, accumulated over ~50 layers; 1e-4 is the e2e bound
// the importer's PyTorch comparison uses. Prints the pass summary, the fused-group and
// layout-transform counts (recorded in docs/passes.md). Skips when the models are absent.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "kiln/frontend/onnx.h"
#include "kiln/ir/npy.h"
#include "kiln/ir/text.h"
#include "kiln/pass/fused_call.h"
#include "pass/pass_test_util.h"

namespace kiln::pass::testing {
namespace {

namespace fs = std::filesystem;

struct ModelCase {
  const char* name;
  const char* input_name;
  int opt_level;
  int block;
};

class ModelPasses : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ModelPasses, OptimizedMatchesOriginal) {
  const ModelCase& c = GetParam();
  const fs::path dir = fs::path(KILN_BINARY_DIR) / "models";
  const fs::path model = dir / (std::string(c.name) + ".onnx");
  const fs::path input = dir / (std::string(c.name) + "." + c.input_name + ".npy");
  if (!fs::exists(model) || !fs::exists(input)) {
    GTEST_SKIP() << "model files missing in " << dir << " (scripts/gen_test_models.py, fixture e2e.gen_test_models)";
  }
  Graph graph = frontend::import_onnx(model.string());
  NDArray x = read_npy(input.string());
  PassOptions options;
  options.opt_level = c.opt_level;
  options.layout_block = c.block;
  options.verify_each_pass = true;
  PipelineResult result = run_pipeline(graph, options);
  std::printf("%s -O%d block %d:\n%s", c.name, c.opt_level, c.block, result.summary().c_str());
  std::printf("%s -O%d: fused groups %lld (multi-op %lld), activation layout transforms %lld\n", c.name, c.opt_level,
              static_cast<long long>(result.stat("FuseOps", "groups")),
              static_cast<long long>(result.stat("FuseOps", "multi_op_groups")),
              static_cast<long long>(result.stat("AlterOpLayout", "layout_transforms")));
  ASSERT_TRUE(verify_graph(result.graph).empty());
  for (const auto& node : result.graph.topo_order()) {
    if (node->kind() == NodeKind::kCall) {
      EXPECT_TRUE(is_fused_call(*node)) << node->as_call().op().name;
    }
  }
  EXPECT_TRUE(round_trips(result.graph));
  const std::map<std::string, NDArray> inputs{{c.input_name, x}};
  auto t0 = std::chrono::steady_clock::now();
  auto expected = ref::run_graph(graph, inputs);
  auto t1 = std::chrono::steady_clock::now();
  auto actual = ref::run_graph(result.graph, inputs);
  auto t2 = std::chrono::steady_clock::now();
  std::printf("%s: reference executor original %.2f s, optimized %.2f s\n", c.name,
              std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
  double max_diff = 0, max_ref = 0;
  for (int64_t i = 0; i < expected[0].numel(); ++i) {
    max_diff = std::max(max_diff, std::abs(actual[0].get_as_double(i) - expected[0].get_as_double(i)));
    max_ref = std::max(max_ref, std::abs(expected[0].get_as_double(i)));
  }
  std::printf("%s -O%d: max|optimized - original| / max|original| = %.3g\n", c.name, c.opt_level, max_diff / max_ref);
  EXPECT_TRUE(close_outputs(actual, expected, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Models, ModelPasses,
                         ::testing::Values(ModelCase{"resnet50", "input", 3, 8}, ModelCase{"mobilenetv2", "input", 3, 8},
                                           ModelCase{"bert_encoder", "input_ids", 3, 8},
                                           ModelCase{"resnet50", "input", 3, 16},
                                           ModelCase{"mobilenetv2", "input", 2, 8}),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return std::string(info.param.name) + "_O" + std::to_string(info.param.opt_level) + "_b" +
                                  std::to_string(info.param.block);
                         });

}  // namespace
}  // namespace kiln::pass::testing
