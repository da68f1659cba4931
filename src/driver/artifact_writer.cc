// Writes an artifact: plan + metadata + weights encoded, assembled into named ELF sections with
// .incbin, and linked with the kernels' objects into one shared library (see driver/artifact.h),
// then sealed with the whole-file checksum trailer (kiln/runtime/artifact_checksum.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "driver/cross_linker.h"
#include "driver/shell_command.h"
#include "kiln/driver/artifact.h"
#include "kiln/driver/doctor.h"
#include "kiln/driver/kernel_flops.h"
#include "kiln/driver/memory_plan.h"
#include "kiln/runtime/artifact_checksum.h"
#include "kiln/runtime/c_api.h"
#include "kiln/support/error.h"
#include "kiln/version.h"

namespace kiln::driver {
namespace {

namespace fs = std::filesystem;
using artifact::TensorKind;

void write_bytes(const fs::path& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) throw UserError(UserErrorKind::kIO, path.string(), "cannot write the file", "check free disk space");
}

// Appends the whole-file checksum trailer (kiln/runtime/artifact_checksum.h) to the linked library.
void append_file_checksum(const std::string& tmp_out, const std::string& path) {
  std::string bytes;
  {
    // One read of the whole file (an istreambuf_iterator copy goes a byte at a time: about
    // 0.3 s more for DenseNet-121's 53 MB artifact).
    std::ifstream in(tmp_out, std::ios::binary | std::ios::ate);
    const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
    if (size > 0) {
      bytes.resize(static_cast<size_t>(size));
      in.seekg(0);
      if (!in.read(bytes.data(), size)) bytes.clear();
    }
  }
  std::ofstream out(tmp_out, std::ios::binary | std::ios::app);
  if (bytes.empty() || !out) {
    std::error_code ec;
    fs::remove(tmp_out, ec);
    throw UserError(UserErrorKind::kIO, path, "cannot read back the linked artifact to checksum it");
  }
  const std::string trailer = artifact::file_checksum_trailer(bytes);
  out.write(trailer.data(), static_cast<std::streamsize>(trailer.size()));
  out.close();
  if (!out) {
    std::error_code ec;
    fs::remove(tmp_out, ec);
    throw UserError(UserErrorKind::kIO, path, "cannot append the checksum to the artifact");
  }
}

// A temporary directory removed on scope exit unless kept.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-artifact-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw UserError(UserErrorKind::kIO, fs::temp_directory_path().string(),
                      "cannot create a temporary directory", "set TMPDIR to a writable directory");
    }
    path_ = pattern;
  }
  ~TempDir() {
    if (!keep_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  const fs::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  fs::path path_;
  bool keep_ = false;
};

artifact::TensorSpec spec_of(const artifact::PlanTensor& t, const std::string& name) {
  return artifact::TensorSpec{name, t.dtype, t.shape};
}

}  // namespace

DLDataType to_dl_dtype(ir::DType dtype) {
  const auto bits = static_cast<uint8_t>(ir::dtype_size(dtype) * 8);
  switch (dtype) {
    case ir::DType::kF32:
    case ir::DType::kF64:
    case ir::DType::kF16: return DLDataType{kDLFloat, bits, 1};
    case ir::DType::kBF16: return DLDataType{kDLBfloat, 16, 1};
    case ir::DType::kI8:
    case ir::DType::kI16:
    case ir::DType::kI32:
    case ir::DType::kI64: return DLDataType{kDLInt, bits, 1};
    case ir::DType::kU8:
    case ir::DType::kU16:
    case ir::DType::kU32:
    case ir::DType::kU64: return DLDataType{kDLUInt, bits, 1};
    case ir::DType::kBool: return DLDataType{6 /* kDLBool */, 8, 1};
  }
  KILN_ICHECK(false) << "unknown dtype";
  return {};
}

int32_t ArtifactBuilder::add_tensor(const std::string& name, TensorKind kind, ir::DType dtype,
                                    const ir::Shape& shape) {
  for (int64_t d : shape) {
    if (d < 0) throw UserError(UserErrorKind::kInvalidArgument, "tensor '" + name + "'", "has a negative dimension");
  }
  artifact::PlanTensor t;
  t.name = name;
  t.kind = kind;
  t.dtype = to_dl_dtype(dtype);
  t.shape = shape;
  t.nbytes = static_cast<uint64_t>(ir::shape_numel(shape)) * ir::dtype_size(dtype);
  plan_.tensors.push_back(std::move(t));
  return static_cast<int32_t>(plan_.tensors.size() - 1);
}

int32_t ArtifactBuilder::add_input(const std::string& name, ir::DType dtype, const ir::Shape& shape) {
  for (const auto& s : inputs_) {
    if (s.name == name) throw UserError(UserErrorKind::kInvalidArgument, "input '" + name + "'", "added twice");
  }
  const int32_t id = add_tensor(name, TensorKind::kInput, dtype, shape);
  plan_.inputs.push_back(id);
  inputs_.push_back(spec_of(plan_.tensors[id], name));
  return id;
}

int32_t ArtifactBuilder::add_output(const std::string& name, ir::DType dtype, const ir::Shape& shape) {
  const int32_t id = add_tensor(name, TensorKind::kOutput, dtype, shape);
  add_output_alias(name, id);
  return id;
}

void ArtifactBuilder::add_output_alias(const std::string& name, int32_t tensor) {
  if (tensor < 0 || tensor >= static_cast<int32_t>(plan_.tensors.size())) {
    throw UserError(UserErrorKind::kInvalidArgument, "output '" + name + "'",
                    "refers to tensor " + std::to_string(tensor) + ", which does not exist");
  }
  for (const auto& s : outputs_) {
    if (s.name == name) throw UserError(UserErrorKind::kInvalidArgument, "output '" + name + "'", "added twice");
  }
  plan_.outputs.push_back(tensor);
  outputs_.push_back(spec_of(plan_.tensors[tensor], name));
}

int32_t ArtifactBuilder::add_constant(const std::string& name, const ir::NDArray& value) {
  if (!value.defined()) throw UserError(UserErrorKind::kInvalidArgument, "constant '" + name + "'", "is a null array");
  const int32_t id = add_tensor(name, TensorKind::kConstant, value.dtype(), value.shape());
  constants_.push_back(value);
  return id;
}

int32_t ArtifactBuilder::add_intermediate(const std::string& name, ir::DType dtype, const ir::Shape& shape) {
  return add_tensor(name, TensorKind::kIntermediate, dtype, shape);
}

void ArtifactBuilder::add_kernel(const std::string& symbol, const std::string& fused_ops,
                                 const std::vector<int32_t>& args, uint64_t flops, artifact::OpKind op_kind) {
  if (symbol.empty()) throw UserError(UserErrorKind::kInvalidArgument, "add_kernel", "empty kernel symbol");
  for (int32_t a : args) {
    if (a < 0 || a >= static_cast<int32_t>(plan_.tensors.size())) {
      throw UserError(UserErrorKind::kInvalidArgument, "kernel '" + symbol + "'",
                      "argument refers to tensor " + std::to_string(a) + ", which does not exist");
    }
  }
  plan_.kernels.push_back(artifact::KernelCall{symbol, fused_ops, args, flops, op_kind});
}

void ArtifactBuilder::add_kernel(const std::string& symbol, const std::string& fused_ops,
                                 const std::vector<int32_t>& args, const KernelFlops& work) {
  if (work.int8_ops > 0) add_kernel(symbol, fused_ops, args, work.int8_ops, artifact::OpKind::kInt8);
  else add_kernel(symbol, fused_ops, args, work.flops);
}

void ArtifactBuilder::add_object(std::vector<char> object_code) {
  if (object_code.empty()) throw UserError(UserErrorKind::kInvalidArgument, "add_object", "empty object code");
  objects_.push_back(std::move(object_code));
}

artifact::Metadata make_metadata(const codegen::Target& target) {
  artifact::Metadata m;
  m.kiln_version = kiln::compiler_version();
  m.runtime_abi = KILN_RUNTIME_ABI_VERSION;
  m.triple = target.triple;
  m.arch = artifact::arch_of_triple(target.triple);
  m.cpu = target.cpu;
  const auto& detectable = artifact::detectable_features(m.arch);
  const std::set<std::string> known(detectable.begin(), detectable.end());
  for (const auto& f : target.enabled_features) {
    (known.count(f) ? m.required_features : m.unchecked_features).push_back(f);
  }
  return m;
}

ArtifactSummary write_artifact(const ArtifactBuilder& builder, const codegen::Target& target,
                               const std::string& path, const ArtifactOptions& options) {
  artifact::Plan plan = builder.plan();
  if (builder.objects().empty()) {
    throw UserError(UserErrorKind::kInvalidArgument, path, "the artifact has no kernel object code",
                    "add the kernels' object code with ArtifactBuilder::add_object");
  }
  // Memory plan: lifetimes of the intermediates over the kernel order.
  std::vector<int32_t> intermediates;
  std::vector<TensorLifetime> lifetimes;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    if (plan.tensors[i].kind != TensorKind::kIntermediate) continue;
    TensorLifetime life{plan.tensors[i].nbytes, -1, -1};
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      for (int32_t a : plan.kernels[k].args) {
        if (a != static_cast<int32_t>(i)) continue;
        if (life.first_step < 0) life.first_step = static_cast<int32_t>(k);
        life.last_step = static_cast<int32_t>(k);
      }
    }
    KILN_ICHECK(life.first_step >= 0) << "intermediate tensor '" << plan.tensors[i].name << "' is used by no kernel";
    intermediates.push_back(static_cast<int32_t>(i));
    lifetimes.push_back(life);
  }
  const MemoryPlan memory = plan_memory(lifetimes, KILN_TENSOR_ALIGNMENT);
  if (!intermediates.empty()) plan.storage_sizes.push_back(memory.arena_bytes);
  for (size_t j = 0; j < intermediates.size(); ++j) {
    plan.tensors[intermediates[j]].storage_id = 0;
    plan.tensors[intermediates[j]].offset = memory.offsets[j];
  }
  // Weights: each constant at a 64-byte aligned offset.
  std::string weights;
  size_t reserve = 0;
  for (const ir::NDArray& value : builder.constants()) reserve += value.nbytes() + artifact::kWeightAlignment;
  weights.reserve(reserve);  // one allocation: growing a 50 MB string step by step copies it many times
  size_t c = 0;
  for (auto& t : plan.tensors) {
    if (t.kind != TensorKind::kConstant) continue;
    weights.resize((weights.size() + artifact::kWeightAlignment - 1) / artifact::kWeightAlignment *
                   artifact::kWeightAlignment, '\0');
    t.offset = weights.size();
    const ir::NDArray& value = builder.constants()[c++];
    weights.append(static_cast<const char*>(value.raw_data()), value.nbytes());
  }
  const std::string plan_bytes = artifact::encode_plan(plan);
  artifact::Metadata meta = make_metadata(target);
  meta.inputs = builder.inputs();
  meta.outputs = builder.outputs();
  meta.producer = options.producer;
  meta.num_kernels = static_cast<uint32_t>(plan.kernels.size());
  meta.plan_size = plan_bytes.size();
  meta.plan_hash = artifact::hash64(plan_bytes.data(), plan_bytes.size());
  meta.weights_size = weights.size();
  meta.weights_hash = artifact::hash64(weights.data(), weights.size());
  if (options.edit_metadata) options.edit_metadata(meta);
  const std::string meta_bytes = artifact::encode_metadata(meta);

  TempDir dir;
  std::string inputs;
  for (size_t i = 0; i < builder.objects().size(); ++i) {
    const fs::path obj = dir.path() / ("kernels_" + std::to_string(i) + ".o");
    write_bytes(obj, builder.objects()[i].data(), builder.objects()[i].size());
    inputs += " " + shell_quote(obj.string());
  }
  write_bytes(dir.path() / "meta.bin", meta_bytes.data(), meta_bytes.size());
  write_bytes(dir.path() / "plan.bin", plan_bytes.data(), plan_bytes.size());
  write_bytes(dir.path() / "weights.bin", weights.data(), weights.size());
  // Meta and plan are not loaded into memory at run time (no "a" flag): the runtime reads them
  // from the file. The weights are: kernels read constants where the library is mapped.
  const std::string d = dir.path().string();
  std::string assembly =
      "  .section .kiln.meta,\"\",@progbits\n  .incbin \"" + d + "/meta.bin\"\n"
      "  .section .kiln.plan,\"\",@progbits\n  .incbin \"" + d + "/plan.bin\"\n"
      "  .section .kiln.weights,\"a\",@progbits\n  .balign 64\n"
      "  .globl " + artifact::kWeightsSymbol + "\n  .type " + artifact::kWeightsSymbol + ",@object\n" +
      artifact::kWeightsSymbol + ":\n  .incbin \"" + d + "/weights.bin\"\n  .byte 0\n"
      "  .size " + artifact::kWeightsSymbol + ", " + std::to_string(weights.size() + 1) + "\n"
      "  .section .note.GNU-stack,\"\",@progbits\n";
  write_bytes(dir.path() / "data.s", assembly.data(), assembly.size());
  inputs += " " + shell_quote((dir.path() / "data.s").string());

  const bool cross = meta.arch != artifact::arch_of_triple(codegen::host_target().triple);
  std::string cc = options.c_compiler;
  std::string flags;
  std::string cross_hint;
  if (cross) {
    // The target's GNU cross driver when installed (it records libm as DT_NEEDED), else clang +
    // ld.lld with -nostdlib: an artifact refers only to libkiln_runtime and libm symbols, which
    // the loading process provides (driver/cross_linker.h).
    if (cc.empty()) {
      const CrossLinker linker = find_cross_linker(target.triple);
      if (linker.command.empty()) {
        throw UserError(UserErrorKind::kIO, path, "no linker for " + target.triple + " is installed",
                        cross_link_hint(target.triple) + "; 'kiln doctor' reports what it finds");
      }
      cc = linker.command;
      flags = linker.flags;
    } else {
      flags = fs::path(cc).filename().string().find("clang") != std::string::npos
                  ? " --target=" + shell_quote(target.triple) + " -fuse-ld=lld -nostdlib"
                  : " -lm";
    }
    cross_hint = cross_link_hint(target.triple);
  } else {
    // The default compiler links through ld.lld when it is installed: the weights make artifacts
    // large (ResNet-50 with Winograd weights: 151 MiB) and GNU ld copies them ~4x slower
    // (1.0 s vs 0.24 s measured). An explicit KILN_CC or c_compiler keeps its own linker.
    if (cc.empty()) {
      std::string source;
      cc = c_compiler_command(&source);
      if (source == "default" && !find_executable("ld.lld").empty()) flags = " -fuse-ld=lld";
    }
    flags += " -lm";
  }
  const std::string tmp_out = path + ".tmp-" + std::to_string(getpid());
  const std::string command = shell_quote(cc) + " -shared -Wl,-z,noexecstack -Wl,-Bsymbolic -o " + shell_quote(tmp_out) +
                              inputs + flags;
  std::string output;
  const int rc = run_capture(command, &output);
  if (rc != 0) {
    std::error_code ec;
    fs::remove(tmp_out, ec);
    if (options.keep_temporaries) dir.keep();
    throw UserError(UserErrorKind::kIO, path,
                    "linking the artifact failed (exit " + std::to_string(rc) + "): " + command + "\n" + output,
                    cross ? "cross-architecture artifacts: " + cross_hint
                          : "run 'kiln doctor' to check the C compiler; set KILN_CC to use another one");
  }
  append_file_checksum(tmp_out, path);
  std::error_code ec;
  fs::rename(tmp_out, path, ec);
  if (ec) {
    fs::remove(tmp_out, ec);
    throw UserError(UserErrorKind::kIO, path, "cannot write the artifact: " + ec.message());
  }
  ArtifactSummary summary;
  summary.path = path;
  summary.metadata = meta;
  summary.num_kernels = plan.kernels.size();
  summary.weights_bytes = weights.size();
  summary.planned_bytes = memory.arena_bytes;
  summary.naive_bytes = memory.naive_bytes;
  summary.link_command = command;
  if (options.keep_temporaries) {
    dir.keep();
    summary.temp_dir = dir.path().string();
  }
  return summary;
}

}  // namespace kiln::driver
