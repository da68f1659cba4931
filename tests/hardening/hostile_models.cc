// Hostile ONNX models (tests/hardening/make_hostile_models.py) are refused with a UserError that
// names the tensor and the reason, never read outside the model's directory, never allocate what
// the file does not hold, never overflow the stack. External data: absolute paths (/etc/passwd),
// '..', symlinks out of the directory, offsets/lengths past the end or overflowing, missing files,
// directories. Limits: shapes that overflow or exceed memory (initializers, graph inputs, sparse
// constants), subgraphs nested 200 deep, a 50,000-node chain, a node with 100,000 attributes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/frontend/onnx.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

std::string model(const std::string& name) {
  return std::string(KILN_BINARY_DIR) + "/hostile_models/model/" + name + ".onnx";
}

class HostileModels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(model("ext_good"))) GTEST_SKIP() << "make_hostile_models.py did not run (no onnx for /usr/bin/python3)";
  }
  // Importing `name` must throw a UserError whose message holds every needle.
  static void expect_refused(const std::string& name, const std::vector<std::string>& needles) {
    try {
      ir::Graph g = frontend::import_onnx(model(name));
      ADD_FAILURE() << name << " was imported";
    } catch (const UserError& e) {
      const std::string message = e.what();
      for (const auto& n : needles) EXPECT_NE(message.find(n), std::string::npos) << name << ": '" << n << "' not in: " << message;
      EXPECT_EQ(message.find("SECRET-OUTSIDE"), std::string::npos) << name << " leaked the outside file: " << message;
    }
  }
};

TEST_F(HostileModels, GoodExternalDataImports) {
  ir::Graph g = frontend::import_onnx(model("ext_good"));
  EXPECT_TRUE(ir::verify_graph(g).empty());
}

TEST_F(HostileModels, ExternalDataAbsolutePathRefused) {
  expect_refused("ext_etc_passwd", {"initializer 'w'", "'/etc/passwd'", "absolute path"});
  expect_refused("ext_absolute", {"initializer 'w'", "secret.txt", "absolute path"});
}

TEST_F(HostileModels, ExternalDataDotDotRefused) {
  expect_refused("ext_dotdot", {"initializer 'w'", "'../secret.txt'", "'..'"});
  expect_refused("ext_dotdot_inner", {"initializer 'w'", "'sub/../../secret.txt'", "'..'"});
}

TEST_F(HostileModels, ExternalDataSymlinkOutsideRefused) {
  expect_refused("ext_symlink", {"initializer 'w'", "'link.bin'", "outside the model's directory"});
}

TEST_F(HostileModels, ExternalDataRangeChecked) {
  expect_refused("ext_offset_past", {"initializer 'w'", "offset 64", "past the end", "weights.bin"});
  expect_refused("ext_offset_huge", {"initializer 'w'", "past the end"});
  expect_refused("ext_length_wrong", {"initializer 'w'", "length 8"});
  expect_refused("ext_negative", {"initializer 'w'", "negative"});
  expect_refused("ext_missing", {"initializer 'w'", "nope.bin", "cannot be opened"});
  expect_refused("ext_directory", {"initializer 'w'", "not a regular file"});
}

TEST_F(HostileModels, HugeShapesRefusedBeforeAllocating) {
  expect_refused("shape_overflow", {"initializer 'w'", "more than 2^64 elements"});
  expect_refused("shape_huge", {"initializer 'w'", "more than one tensor may take"});
  expect_refused("input_huge", {"input 'x'", "more than one tensor may take"});
  expect_refused("sparse_huge", {"sparse", "more than one tensor may take"});
}

TEST_F(HostileModels, DeeplyNestedSubgraphsRefused) {
  expect_refused("deep_subgraphs", {"deep_subgraphs"});
}

TEST_F(HostileModels, LongChainImportsWithoutStackOverflow) {
  ir::Graph g = frontend::import_onnx(model("long_chain"));
  EXPECT_TRUE(ir::verify_graph(g).empty());
}

TEST_F(HostileModels, HundredThousandAttributesHandled) {
  try {
    ir::Graph g = frontend::import_onnx(model("many_attrs"));
    EXPECT_TRUE(ir::verify_graph(g).empty());
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Relu"), std::string::npos) << e.what();
  }
}

// Regressions from scripts/mutate-onnx.py: both were internal errors (KILN_ICHECK) before.
TEST_F(HostileModels, UnnamedOrRepeatedGraphValuesRefused) {
  expect_refused("input_unnamed", {"a graph input has no name"});
  expect_refused("output_twice", {"output 'y'", "listed twice"});
}

}  // namespace
}  // namespace kiln::testing
