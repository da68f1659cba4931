// Bad artifacts are refused by kiln_module_load with their message, before any of their code is
// loaded: truncated file, wrong format version, corrupted metadata/plan (their own checksums, behind a
// resealed whole-file checksum), corrupted weights (the whole-file checksum), a
// CPU feature this machine lacks (metadata edit, and real AVX-512 kernels on a host without
// AVX-512), another architecture (metadata edit, and a real AArch64 artifact when clang and
// ld.lld can link one), another runtime ABI, a kernel symbol the library lacks, files that are
// not artifacts. Each case checks the message names the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "artifact_test_util.h"
#include "kiln/runtime/artifact_checksum.h"
#include "kiln/runtime/c_api.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

class ArtifactRejectTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("kiln-artifact-reject-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    write_test_artifact(path("good.so"));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string path(const std::string& name) { return (*dir_ / name).string(); }

  // Loads `file` expecting failure; returns the message.
  static std::string load_error(const std::string& file) {
    KilnModule* m = nullptr;
    const int rc = kiln_module_load(file.c_str(), &m);
    EXPECT_NE(rc, 0) << file << " was accepted";
    if (rc == 0) {
      kiln_module_free(m);
      return "";
    }
    EXPECT_EQ(m, nullptr);
    return kiln_get_last_error();
  }
  static void expect_refused(const std::string& file, const std::vector<std::string>& needles) {
    const std::string message = load_error(file);
    for (const auto& n : needles) EXPECT_NE(message.find(n), std::string::npos) << "'" << n << "' not in: " << message;
  }
  // good.so with `edit` applied to its bytes, written as `name`. With `reseal`, the whole-file
  // checksum is recomputed after the edit, so the checks behind it are reached (a file edited on
  // purpose, or an old artifact); without, the whole-file checksum refuses it first.
  static std::string edited(const std::string& name, const std::function<void(std::string&)>& edit,
                            bool reseal = true) {
    std::string bytes = read_all(path("good.so"));
    edit(bytes);
    if (reseal) {
      bytes.resize(bytes.size() - artifact::kFileSumBytes);
      bytes += artifact::file_checksum_trailer(bytes);
    }
    write_all(path(name), bytes);
    return path(name);
  }

  static fs::path* dir_;
};
fs::path* ArtifactRejectTest::dir_ = nullptr;

TEST_F(ArtifactRejectTest, GoodArtifactLoads) {
  KilnModule* m = nullptr;
  ASSERT_EQ(kiln_module_load(path("good.so").c_str(), &m), 0) << kiln_get_last_error();
  kiln_module_free(m);
}

TEST_F(ArtifactRejectTest, TruncatedFile) {
  const std::string bytes = read_all(path("good.so"));
  for (size_t keep : {bytes.size() / 2, bytes.size() - 1, static_cast<size_t>(40)}) {
    write_all(path("truncated.so"), bytes.substr(0, keep));
    expect_refused(path("truncated.so"), {"truncated"});
  }
}

TEST_F(ArtifactRejectTest, WrongFormatVersion) {
  const std::string file = edited("version.so", [](std::string& b) {
    const auto [off, size] = section_range(b, ".kiln.meta");
    ASSERT_GT(size, 12u);
    b[off + 8] = 2;  // u32 format version follows the 8-byte magic; 2 = before kernel op kinds
  });
  expect_refused(file, {"artifact format version 2", "this runtime reads version 3", "recompile"});
}

TEST_F(ArtifactRejectTest, CorruptedMetadata) {
  const std::string file = edited("meta.so", [](std::string& b) {
    const auto [off, size] = section_range(b, ".kiln.meta");
    b[off + 24] ^= 0x5A;  // inside the payload (the kiln version string)
  });
  expect_refused(file, {".kiln.meta", "checksum mismatch", "corrupted"});
}

TEST_F(ArtifactRejectTest, CorruptedPlan) {
  const std::string file = edited("plan.so", [](std::string& b) {
    const auto [off, size] = section_range(b, ".kiln.plan");
    b[off + size / 2] ^= 0x01;
  });
  expect_refused(file, {"plan", "checksum", "corrupted"});
}

TEST_F(ArtifactRejectTest, CorruptedWeights) {
  const std::string file = edited("weights.so", [](std::string& b) {
    const auto [off, size] = section_range(b, ".kiln.weights");
    ASSERT_GT(size, 100u);
    b[off + 100] ^= 0x40;
  }, /*reseal=*/false);
  expect_refused(file, {"checksum mismatch over the whole file", "corrupted"});
}

TEST_F(ArtifactRejectTest, MissingCpuFeatureByMetadataEdit) {
  // A feature the runtime can detect that this CPU lacks (per LLVM's view of the host).
  const auto& host = codegen::host_target();
  std::string absent;
  for (const auto& f : artifact::detectable_features(artifact::arch_of_triple(host.triple))) {
    if (!host.has_feature(f)) {
      absent = f;
      break;
    }
  }
  if (absent.empty()) GTEST_SKIP() << "this CPU has every feature the runtime detects";
  driver::ArtifactOptions options;
  options.edit_metadata = [&](artifact::Metadata& m) { m.required_features.push_back(absent); };
  write_test_artifact(path("feature.so"), host, options);
  expect_refused(path("feature.so"), {"features this CPU lacks: " + absent, "recompile it for this machine"});
}

TEST_F(ArtifactRejectTest, RealAvx512KernelsOnAHostWithout) {
  const auto& host = codegen::host_target();
  if (!host.is_x86_64()) GTEST_SKIP() << "x86-64 only";
  if (host.has_feature("avx512f")) GTEST_SKIP() << "this CPU has AVX-512: the artifact would run";
  const codegen::Target avx512 = codegen::parse_target("llvm -mcpu=skylake-avx512");
  write_test_artifact(path("avx512.so"), avx512);
  // Loading must be refused from the metadata (never a SIGILL from running the kernels).
  expect_refused(path("avx512.so"), {"compiled for CPU 'skylake-avx512'", "avx512f"});
}

TEST_F(ArtifactRejectTest, OtherArchitectureByMetadataEdit) {
  driver::ArtifactOptions options;
  options.edit_metadata = [](artifact::Metadata& m) {
    m.triple = "aarch64-unknown-linux-gnu";
    m.arch = "aarch64";
  };
  write_test_artifact(path("arch.so"), codegen::host_target(), options);
  expect_refused(path("arch.so"), {"built for aarch64", "this machine is x86_64"});
}

TEST_F(ArtifactRejectTest, RealAArch64Artifact) {
  if (std::system("command -v clang >/dev/null 2>&1 && command -v ld.lld >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "clang and ld.lld are needed to link an AArch64 artifact on this machine";
  }
  const codegen::Target arm = codegen::parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1");
  const driver::ArtifactSummary s = write_test_artifact(path("aarch64.so"), arm);
  // The cross linker (driver/cross_linker.h): the GNU cross driver when installed, else clang.
  EXPECT_TRUE(s.link_command.find("aarch64-linux-gnu-gcc") != std::string::npos ||
              s.link_command.find("--target=") != std::string::npos) << s.link_command;
  const std::string bytes = read_all(path("aarch64.so"));
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  EXPECT_EQ(eh.e_machine, EM_AARCH64);
  expect_refused(path("aarch64.so"), {"built for aarch64", "ELF machine aarch64", "this machine is x86_64"});
  // Inspecting it works (the file is read, nothing is run) and says it cannot run here.
  char* text = nullptr;
  ASSERT_EQ(kiln_artifact_describe(path("aarch64.so").c_str(), &text), 0) << kiln_get_last_error();
  const std::string description = text;
  kiln_free_text(text);
  EXPECT_NE(description.find("neon"), std::string::npos) << description;
  EXPECT_NE(description.find("runs here:        no: "), std::string::npos) << description;
}

TEST_F(ArtifactRejectTest, OtherRuntimeAbi) {
  driver::ArtifactOptions options;
  options.edit_metadata = [](artifact::Metadata& m) { m.runtime_abi = 99; };
  write_test_artifact(path("abi.so"), codegen::host_target(), options);
  expect_refused(path("abi.so"), {"runtime ABI 99", "has ABI 1"});
}

TEST_F(ArtifactRejectTest, MissingKernelSymbol) {
  write_test_artifact(path("symbol.so"), codegen::host_target(), {}, "no_such_kernel");
  expect_refused(path("symbol.so"), {"kernel symbol 'no_such_kernel'", "not defined"});
}

TEST_F(ArtifactRejectTest, NotAnArtifact) {
  write_all(path("text.so"), "hello, this is not a library\n");
  expect_refused(path("text.so"), {"not an ELF shared library"});
  // A real shared library without Kiln sections: libkiln_runtime itself.
  expect_refused(KILN_BINARY_DIR "/lib/libkiln_runtime.so", {"not a Kiln artifact", ".kiln.meta"});
  expect_refused(path("does-not-exist.so"), {"cannot open the file"});
}

}  // namespace
}  // namespace kiln::testing
