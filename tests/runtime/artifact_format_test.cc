// The artifact sections' encoding (include/kiln/runtime/artifact_format.h): metadata and plan
// round-trip exactly; every truncation, a changed version, magic or payload byte is a
// FormatError with its reason (never a crash or a silent misread); and the runtime C API's
// artifact calls reject bad arguments with a message.
#include <gtest/gtest.h>

#include "kiln/runtime/artifact_format.h"
#include "kiln/runtime/c_api.h"

namespace kiln::artifact {
namespace {

Metadata sample_metadata() {
  Metadata m;
  m.kiln_version = "0.1.0";
  m.runtime_abi = 1;
  m.triple = "x86_64-pc-linux-gnu";
  m.arch = "x86_64";
  m.cpu = "znver3";
  m.required_features = {"avx", "avx2", "fma"};
  m.unchecked_features = {"fast-lzcnt"};
  m.inputs = {{"x", {kDLFloat, 32, 1}, {1, 3, 224, 224}}};
  m.outputs = {{"y", {kDLFloat, 32, 1}, {1, 1000}}, {"idx", {kDLInt, 64, 1}, {}}};
  m.producer = "resnet50.onnx";
  m.num_kernels = 2;
  m.plan_size = 123;
  m.plan_hash = 0x1234567890abcdefull;
  m.weights_size = 4096;
  m.weights_hash = 42;
  return m;
}

Plan sample_plan() {
  Plan p;
  p.tensors = {{"x", TensorKind::kInput, {kDLFloat, 32, 1}, {2, 3}, -1, 0, 24},
               {"w", TensorKind::kConstant, {kDLFloat, 32, 1}, {3}, -1, 64, 12},
               {"t", TensorKind::kIntermediate, {kDLFloat, 32, 1}, {2, 3}, 0, 128, 24},
               {"y", TensorKind::kOutput, {kDLFloat, 32, 1}, {2, 3}, -1, 0, 24}};
  p.storage_sizes = {256};
  p.kernels = {{"k0", "add+relu", {0, 1, 2}, 2048}, {"k1", "exp", {2, 3}, 0, OpKind::kInt8}};
  p.inputs = {0};
  p.outputs = {3};
  return p;
}

TEST(ArtifactFormat, MetadataRoundTrip) {
  const Metadata m = sample_metadata();
  const Metadata d = decode_metadata(encode_metadata(m), "meta");
  EXPECT_EQ(d.kiln_version, m.kiln_version);
  EXPECT_EQ(d.triple, m.triple);
  EXPECT_EQ(d.cpu, m.cpu);
  EXPECT_EQ(d.required_features, m.required_features);
  EXPECT_EQ(d.unchecked_features, m.unchecked_features);
  ASSERT_EQ(d.outputs.size(), 2u);
  EXPECT_EQ(d.outputs[1].name, "idx");
  EXPECT_EQ(d.outputs[1].dtype.code, kDLInt);
  EXPECT_EQ(d.outputs[1].dtype.bits, 64);
  EXPECT_TRUE(d.outputs[1].shape.empty());
  EXPECT_EQ(d.inputs[0].shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(d.producer, m.producer);
  EXPECT_EQ(d.plan_hash, m.plan_hash);
  EXPECT_EQ(d.weights_size, m.weights_size);
  EXPECT_EQ(d.num_kernels, 2u);
}

TEST(ArtifactFormat, PlanRoundTrip) {
  const Plan p = sample_plan();
  const Plan d = decode_plan(encode_plan(p), "plan");
  ASSERT_EQ(d.tensors.size(), 4u);
  EXPECT_EQ(d.tensors[2].name, "t");
  EXPECT_EQ(d.tensors[2].kind, TensorKind::kIntermediate);
  EXPECT_EQ(d.tensors[2].storage_id, 0);
  EXPECT_EQ(d.tensors[2].offset, 128u);
  EXPECT_EQ(d.tensors[1].offset, 64u);
  EXPECT_EQ(d.storage_sizes, p.storage_sizes);
  ASSERT_EQ(d.kernels.size(), 2u);
  EXPECT_EQ(d.kernels[0].fused_ops, "add+relu");
  EXPECT_EQ(d.kernels[0].args, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(d.kernels[0].flops, 2048u);
  EXPECT_EQ(d.kernels[0].op_kind, OpKind::kFloat);
  EXPECT_EQ(d.kernels[1].op_kind, OpKind::kInt8);
  EXPECT_EQ(d.kernels[1].flops, 0u);
  EXPECT_EQ(d.outputs, p.outputs);
}

TEST(ArtifactFormat, EveryTruncationIsRejected) {
  const std::string meta = encode_metadata(sample_metadata());
  const std::string plan = encode_plan(sample_plan());
  for (size_t n = 0; n < meta.size(); ++n) {
    EXPECT_THROW(decode_metadata(meta.substr(0, n), "meta"), FormatError) << "meta cut at " << n;
  }
  for (size_t n = 0; n < plan.size(); ++n) {
    EXPECT_THROW(decode_plan(plan.substr(0, n), "plan"), FormatError) << "plan cut at " << n;
  }
}

void expect_format_error(const std::string& section, bool is_meta, const std::string& needle) {
  try {
    if (is_meta) decode_metadata(section, "meta");
    else decode_plan(section, "plan");
    FAIL() << "accepted; expected '" << needle << "'";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ArtifactFormat, VersionMagicAndChecksum) {
  std::string meta = encode_metadata(sample_metadata());
  std::string v = meta;
  v[8] = 7;
  expect_format_error(v, true, "artifact format version 7, but this runtime reads version 3");
  // Versions 1 and 2 (before kernel flop counts / op kinds) are refused, not misread: their
  // kernels have 9 / 1 bytes less.
  std::string old = encode_plan(sample_plan());
  old[8] = 1;
  expect_format_error(old, false, "artifact format version 1, but this runtime reads version 3");
  old[8] = 2;
  expect_format_error(old, false, "artifact format version 2, but this runtime reads version 3");
  std::string magic = meta;
  magic[0] = 'X';
  expect_format_error(magic, true, "bad magic");
  for (size_t i = kSectionHeaderBytes; i < meta.size(); i += 7) {
    std::string c = meta;
    c[i] ^= 0x10;
    expect_format_error(c, true, "checksum mismatch");
  }
  // A plan section is not a metadata section.
  expect_format_error(encode_plan(sample_plan()), true, "bad magic");
  expect_format_error(meta, false, "bad magic");
}

TEST(ArtifactFormat, HashSeesEveryByteAndTheLength) {
  std::string a(1000, 'a');
  const uint64_t h = hash64(a.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    std::string b = a;
    b[i] = 'b';
    ASSERT_NE(hash64(b.data(), b.size()), h) << "byte " << i;
  }
  EXPECT_NE(hash64(a.data(), 999), h);
  std::string zeros(16, '\0');
  EXPECT_NE(hash64(zeros.data(), 8), hash64(zeros.data(), 16));
}

TEST(ArtifactFormat, ArchOfTriple) {
  EXPECT_EQ(arch_of_triple("x86_64-unknown-linux-gnu"), "x86_64");
  EXPECT_EQ(arch_of_triple("aarch64-linux-gnu"), "aarch64");
  EXPECT_EQ(arch_of_triple("riscv64-unknown-linux-gnu"), "riscv64");
}

TEST(ArtifactCApi, BadArguments) {
  KilnModule* m = reinterpret_cast<KilnModule*>(0x1);
  EXPECT_NE(kiln_module_load(nullptr, &m), 0);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(kiln_get_last_error()).find("kiln_module_load: path is NULL"), std::string::npos);
  EXPECT_NE(kiln_module_load("/nonexistent/model.so", nullptr), 0);
  EXPECT_NE(kiln_module_load("/nonexistent/model.so", &m), 0);
  EXPECT_NE(std::string(kiln_get_last_error()).find("/nonexistent/model.so: cannot open the file"), std::string::npos)
      << kiln_get_last_error();
  int32_t n = 0;
  EXPECT_NE(kiln_module_num_inputs(nullptr, &n), 0);
  EXPECT_NE(std::string(kiln_get_last_error()).find("module is NULL"), std::string::npos);
  KilnExecutor* e = nullptr;
  EXPECT_NE(kiln_executor_create(nullptr, &e), 0);
  EXPECT_NE(kiln_executor_run(nullptr), 0);
  EXPECT_NE(std::string(kiln_get_last_error()).find("kiln_executor_run: executor is NULL"), std::string::npos);
  char* text = nullptr;
  EXPECT_NE(kiln_artifact_describe("/nonexistent/model.so", &text), 0);
  EXPECT_EQ(text, nullptr);
  EXPECT_EQ(kiln_module_free(nullptr), 0);
  EXPECT_EQ(kiln_executor_free(nullptr), 0);
  kiln_free_text(nullptr);
}

}  // namespace
}  // namespace kiln::artifact
