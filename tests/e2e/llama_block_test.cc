// A LLaMA-style decoder block (scripts/make_llama_block.py: RMSNormalization, RotaryEmbedding with
// position ids on 3-D inputs, Attention with grouped-query heads (4 query, 2 key/value) and a
// causal mask, a SiLU-gated MLP; ONNX opset 23 built with onnx.helper, random weights) imported,
// run on the reference executor and compiled (-O3, and -O1 without fusion), against the script's
// numpy float64 implementation of the same block.
// Metric: max|kiln - numpy| / max|numpy| <= 1e-4 (f32 products of at most 176 terms and a softmax;
// a wrong index, mask or head grouping errs by O(1)). Also checks that the two RMSNormalization
// nodes import as rms_norm calls.
// Skips with the reason when /usr/bin/python3 with numpy and onnx is not available.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "driver/compile_test_util.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/npy.h"
#include "kiln/ref/executor.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct Block {
  fs::path onnx, x, y;
};

// Generates the block once per process; empty paths when the generator cannot run.
const Block& block(std::string* why) {
  static Block b;
  static std::string reason;
  static bool done = false;
  if (!done) {
    done = true;
    const fs::path dir = fs::temp_directory_path() / ("kiln-llama-block-" + std::to_string(getpid()));
    const std::string cmd = "/usr/bin/python3 '" + std::string(KILN_SOURCE_DIR) + "/scripts/make_llama_block.py' '" +
                            dir.string() + "' > '" + dir.string() + ".log' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      reason = "scripts/make_llama_block.py failed (needs /usr/bin/python3 with numpy and onnx); see " + dir.string() + ".log";
    } else {
      b = {dir / "llama_block.onnx", dir / "llama_block.x.npy", dir / "llama_block.output.npy"};
    }
  }
  *why = reason;
  return b;
}

double rel_error(const ir::NDArray& got, const ir::NDArray& want) {
  const testing::Comparison c = testing::compare_arrays(got, want);
  return c.rel();
}

TEST(LlamaBlock, ReferenceMatchesNumpy) {
  std::string why;
  const Block& b = block(&why);
  if (!why.empty()) GTEST_SKIP() << why;
  const ir::Graph g = frontend::import_onnx(b.onnx.string());
  int rms = 0;
  for (const auto& n : g.topo_order()) rms += n->kind() == ir::NodeKind::kCall && n->as_call().op().name == "rms_norm";
  EXPECT_EQ(rms, 2);
  const auto outs = ref::run_graph(g, {ir::read_npy(b.x.string())});
  const double err = rel_error(outs.at(0), ir::read_npy(b.y.string()));
  std::printf("llama block, reference executor: max|kiln - numpy| / max|numpy| = %.2e\n", err);
  EXPECT_LE(err, 1e-4);
}

TEST(LlamaBlock, CompiledMatchesNumpy) {
  std::string why;
  const Block& b = block(&why);
  if (!why.empty()) GTEST_SKIP() << why;
  for (int level : {3, 1}) {
    const fs::path so = fs::temp_directory_path() / ("kiln-llama-block-" + std::to_string(getpid()) + "-O" + std::to_string(level) + ".so");
    driver::CompileOptions options;
    options.opt_level = level;
    const driver::CompileReport report = driver::compile_onnx(b.onnx.string(), so.string(), options);
    std::printf("llama block -O%d: %zu kernel calls (%d distinct)\n", level, report.kernel_calls.size(), report.distinct_kernels);
    const auto outs = testing::run_compiled(so.string(), {ir::read_npy(b.x.string())});
    fs::remove(so);
    const double err = rel_error(outs.at(0), ir::read_npy(b.y.string()));
    std::printf("llama block -O%d: max|kiln - numpy| / max|numpy| = %.2e\n", level, err);
    EXPECT_LE(err, 1e-4) << "-O" << level;
  }
}

}  // namespace
}  // namespace kiln
