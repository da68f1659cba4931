// Reading, checking and loading an artifact (see module.h and docs/artifact.md).
#include "module.h"

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "cpu_features.h"
#include "kiln/runtime/artifact_checksum.h"
#include "elf_file.h"

namespace kiln::runtime {
namespace {

using artifact::FormatError;
using artifact::TensorKind;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path + ": cannot open the file (does it exist and is it readable?)");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw FormatError(path + ": reading the file failed");
  return bytes;
}

std::string hex(uint64_t v) {
  std::ostringstream o;
  o << std::hex << v;
  return o.str();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// numel * element size, or a FormatError when it overflows.
uint64_t checked_nbytes(const artifact::PlanTensor& t, const std::string& where) {
  const uint64_t elem = artifact::element_bytes(t.dtype);
  if (elem == 0) throw FormatError(where + " has an unsupported dtype " + artifact::dtype_text(t.dtype));
  uint64_t n = elem;
  for (int64_t d : t.shape) {
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / 4 / static_cast<uint64_t>(d)) {
      throw FormatError(where + ": byte size overflows");
    }
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

// An output may alias another tensor (an input returned as is), so its name may differ.
bool same_spec(const artifact::TensorSpec& s, const artifact::PlanTensor& t, bool compare_name) {
  return (!compare_name || s.name == t.name) && s.dtype.code == t.dtype.code && s.dtype.bits == t.dtype.bits &&
         s.dtype.lanes == t.dtype.lanes && s.shape == t.shape;
}

// Every id, size and offset of the plan, against the metadata and the weights' size.
void validate_plan(const artifact::Plan& p, const artifact::Metadata& m, const std::string& path) {
  const std::string what = path + ": plan";
  const auto n = static_cast<int64_t>(p.tensors.size());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto& t = p.tensors[i];
    const std::string where = what + " tensor " + std::to_string(i) + " ('" + t.name + "')";
    if (checked_nbytes(t, where) != t.nbytes) throw FormatError(where + ": byte size does not match its shape");
    if (t.kind == TensorKind::kConstant) {
      if (t.offset % artifact::kWeightAlignment != 0 || t.offset > m.weights_size ||
          t.nbytes > m.weights_size - t.offset) {
        throw FormatError(where + ": constant lies outside the weights or is not 64-byte aligned");
      }
    } else if (t.kind == TensorKind::kIntermediate) {
      if (t.storage_id < 0 || static_cast<size_t>(t.storage_id) >= p.storage_sizes.size()) {
        throw FormatError(where + ": storage block " + std::to_string(t.storage_id) + " does not exist");
      }
      const uint64_t size = p.storage_sizes[t.storage_id];
      if (t.offset % KILN_TENSOR_ALIGNMENT != 0 || t.offset > size || t.nbytes > size - t.offset) {
        throw FormatError(where + ": lies outside its storage block or is not 64-byte aligned");
      }
    }
  }
  auto check_io = [&](const std::vector<int32_t>& ids, const std::vector<artifact::TensorSpec>& specs,
                      TensorKind kind, const char* label) {
    if (ids.size() != specs.size()) {
      throw FormatError(what + ": " + label + " count differs from the metadata's");
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0 || ids[i] >= n) throw FormatError(what + ": " + label + " id out of range");
      const auto& t = p.tensors[ids[i]];
      if (kind == TensorKind::kInput && t.kind != kind) {
        throw FormatError(what + ": input " + std::to_string(i) + " is not an input tensor");
      }
      if (!same_spec(specs[i], t, kind == TensorKind::kInput)) {
        throw FormatError(what + ": " + label + " " + std::to_string(i) + " differs from the metadata's");
      }
    }
  };
  check_io(p.inputs, m.inputs, TensorKind::kInput, "input");
  check_io(p.outputs, m.outputs, TensorKind::kOutput, "output");
  std::set<int32_t> listed(p.inputs.begin(), p.inputs.end());
  if (listed.size() != p.inputs.size()) throw FormatError(what + ": an input is listed twice");
  std::set<int32_t> outputs(p.outputs.begin(), p.outputs.end());
  for (int64_t i = 0; i < n; ++i) {
    const auto kind = p.tensors[i].kind;
    if (kind == TensorKind::kInput && !listed.count(static_cast<int32_t>(i))) {
      throw FormatError(what + ": input tensor " + std::to_string(i) + " is not a graph input");
    }
    if (kind == TensorKind::kOutput && !outputs.count(static_cast<int32_t>(i))) {
      throw FormatError(what + ": output tensor " + std::to_string(i) + " is not a graph output");
    }
  }
  if (p.kernels.size() != m.num_kernels) throw FormatError(what + ": kernel count differs from the metadata's");
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const auto& call = p.kernels[k];
    if (call.symbol.empty()) throw FormatError(what + ": kernel " + std::to_string(k) + " has no symbol");
    for (int32_t a : call.args) {
      if (a < 0 || a >= n) {
        throw FormatError(what + ": kernel " + std::to_string(k) + " ('" + call.symbol +
                          "') refers to tensor " + std::to_string(a) + ", which does not exist");
      }
    }
  }
}

}  // namespace

std::string compatibility_problem(const artifact::Metadata& meta, const std::string& elf_machine,
                                  const std::string& path) {
  const std::string arch = host_arch();
  if (meta.arch != arch || elf_machine != arch) {
    return path + ": built for " + meta.arch + " (target " + meta.triple + ", ELF machine " +
           elf_machine + "), but this machine is " + arch +
           "; compile the model for this machine (kiln compile --target llvm) or run it on a " +
           meta.arch + " machine";
  }
  if (meta.runtime_abi != KILN_RUNTIME_ABI_VERSION) {
    return path + ": built for runtime ABI " + std::to_string(meta.runtime_abi) +
           ", but this libkiln_runtime has ABI " + std::to_string(KILN_RUNTIME_ABI_VERSION) +
           "; recompile the model with the Kiln that matches this runtime";
  }
  const std::vector<std::string> missing = missing_cpu_features(meta.required_features);
  if (!missing.empty()) {
    return path + ": compiled for CPU '" + meta.cpu + "' with features this CPU lacks: " +
           join(missing) + "; recompile it for this machine (kiln compile --target llvm), or run it on "
           "a CPU that has them";
  }
  return "";
}

ArtifactFile read_artifact(const std::string& path, bool check_compatibility) {
  return read_artifact_bytes(read_file(path), path, check_compatibility);
}

ArtifactFile read_artifact_bytes(const std::string& bytes, const std::string& path, bool check_compatibility) {
  ArtifactFile a;
  a.path = path;
  a.file_size = bytes.size();
  // The whole-file checksum first: every later check then reads verified bytes.
  const std::optional<artifact::FileChecksum> sum = artifact::read_file_checksum(bytes);
  if (sum && !sum->ok()) {
    throw FormatError(path + ": checksum mismatch over the whole file (stored " + hex(sum->stored) + ", computed " +
                      hex(sum->actual) + "); the file is corrupted: copy it again or recompile it");
  }
  ElfFile elf(bytes, path);
  a.elf_machine = elf.machine_name();
  const ElfSection* meta = elf.find(artifact::kMetaSection);
  if (meta == nullptr) {
    throw FormatError(path + ": not a Kiln artifact (the shared library has no " +
                      std::string(artifact::kMetaSection) + " section)");
  }
  a.meta = artifact::decode_metadata(elf.contents(*meta), path + ": section .kiln.meta");
  if (!sum) {
    throw FormatError(path + ": the file does not end in its whole-file checksum (" + std::to_string(artifact::kFileSumBytes) +
                      "-byte KILNFSUM trailer): it is truncated or corrupted, or was written by a Kiln without "
                      "whole-file checksums; copy it again or recompile it");
  }
  a.file_hash = sum->stored;
  if (check_compatibility) {
    const std::string problem = compatibility_problem(a.meta, a.elf_machine, path);
    if (!problem.empty()) throw FormatError(problem);
  }
  if (elf.type() != ET_DYN) throw FormatError(path + ": not a shared library (ELF type is not DYN)");
  const ElfSection* plan = elf.find(artifact::kPlanSection);
  const ElfSection* weights = elf.find(artifact::kWeightsSection);
  if (plan == nullptr || weights == nullptr) {
    throw FormatError(path + ": the artifact lacks its " +
                      std::string(plan == nullptr ? ".kiln.plan" : ".kiln.weights") +
                      " section; the file is corrupted");
  }
  const std::string_view plan_bytes = elf.contents(*plan);
  if (plan_bytes.size() != a.meta.plan_size ||
      artifact::hash64(plan_bytes.data(), plan_bytes.size()) != a.meta.plan_hash) {
    throw FormatError(path + ": the plan (section .kiln.plan) does not match the checksum in the "
                             "metadata; the file is corrupted");
  }
  a.plan = artifact::decode_plan(plan_bytes, path + ": section .kiln.plan");
  const std::string_view w = elf.contents(*weights);
  if (w.size() < a.meta.weights_size) {
    throw FormatError(path + ": the weights section has " + std::to_string(w.size()) +
                      " bytes but the metadata says " + std::to_string(a.meta.weights_size) +
                      "; the file is truncated or corrupted");
  }
  // The weights' own hash (metadata) is not recomputed: the whole-file checksum covers them, and
  // hashing 100+ MiB twice would double the cost of the check (docs/reliability.md).
  validate_plan(a.plan, a.meta, path);
  for (const ElfSection& s : elf.sections()) {
    if (s.type != SHT_NOBITS && (s.flags & SHF_EXECINSTR) != 0) a.code_bytes += s.size;
  }
  a.weights_bytes = weights->size;
  a.plan_bytes = plan->size;
  a.meta_bytes = meta->size;
  return a;
}

namespace {

// Makes libkiln_runtime's symbols visible to libraries loaded later, so an artifact's calls to
// kiln_parallel_for etc. resolve even when this library was itself opened RTLD_LOCAL (Python).
void promote_runtime_symbols() {
  static const bool done = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&kiln_parallel_for), &info) != 0 && info.dli_fname != nullptr) {
      // RTLD_NOLOAD: only changes the flags of the already loaded copy. The reference it takes
      // is kept for the process's lifetime on purpose.
      dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    }
    return true;
  }();
  (void)done;
}

}  // namespace

LoadedModule::LoadedModule(ArtifactFile file) : file_(std::move(file)) {
  promote_runtime_symbols();
  dlerror();
  // dlopen searches the library path for a name without '/': always give it the file's path.
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(file_.path, ec).string();
  handle_ = dlopen(ec ? file_.path.c_str() : absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* err = dlerror();
    throw FormatError(file_.path + ": the dynamic loader refused the artifact: " +
                      (err ? err : "unknown error"));
  }
  try {
    for (const auto& call : file_.plan.kernels) {
      dlerror();
      void* sym = dlsym(handle_, call.symbol.c_str());
      if (sym == nullptr) {
        throw FormatError(file_.path + ": kernel symbol '" + call.symbol +
                          "' named by the plan is not defined by the library; the artifact is "
                          "corrupted or was linked without its kernels");
      }
      kernels_.push_back(reinterpret_cast<KernelFunction>(sym));
    }
    void* w = dlsym(handle_, artifact::kWeightsSymbol);
    if (w == nullptr) {
      throw FormatError(file_.path + ": the library does not define " +
                        std::string(artifact::kWeightsSymbol) + "; the artifact is corrupted");
    }
    if (reinterpret_cast<uintptr_t>(w) % artifact::kWeightAlignment != 0) {
      throw FormatError(file_.path + ": the weights are not 64-byte aligned in memory");
    }
    weights_ = static_cast<const unsigned char*>(w);
  } catch (...) {
    dlclose(handle_);
    throw;
  }
}

LoadedModule::~LoadedModule() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::shared_ptr<const LoadedModule> load_module(const std::string& path) {
  return std::make_shared<const LoadedModule>(read_artifact(path, /*check_compatibility=*/true));
}

std::string describe_artifact(const std::string& path) {
  const ArtifactFile a = read_artifact(path, /*check_compatibility=*/false);
  const auto& m = a.meta;
  const auto& p = a.plan;
  std::ostringstream o;
  auto spec = [](const artifact::TensorSpec& t) {
    return t.name + ": " + artifact::dtype_text(t.dtype) + artifact::shape_text(t.shape);
  };
  o << "artifact:         " << path << " (" << a.file_size << " bytes)\n";
  o << "format version:   " << m.format_version << "\n";
  o << "compiled by:      kiln " << m.kiln_version << " (runtime ABI " << m.runtime_abi << ")\n";
  if (!m.producer.empty()) o << "model:            " << m.producer << "\n";
  o << "target:           " << m.triple << " (arch " << m.arch << ", cpu " << m.cpu << ")\n";
  o << "cpu features:     " << (m.required_features.empty() ? "(none)" : join(m.required_features)) << "\n";
  if (!m.unchecked_features.empty()) {
    o << "unchecked:        " << join(m.unchecked_features) << " (not detectable by the runtime)\n";
  }
  o << "inputs:\n";
  for (size_t i = 0; i < m.inputs.size(); ++i) o << "  [" << i << "] " << spec(m.inputs[i]) << "\n";
  o << "outputs:\n";
  for (size_t i = 0; i < m.outputs.size(); ++i) o << "  [" << i << "] " << spec(m.outputs[i]) << "\n";
  // A kernel "runs in int8" when it reads or writes an 8-bit integer tensor (quantized data:
  // integer convolutions/matmuls, requantization, integer pooling; docs/int8.md).
  auto is_int8 = [&](const auto& call) {
    for (int32_t a : call.args) {
      const DLDataType& t = p.tensors[a].dtype;
      if ((t.code == kDLInt || t.code == kDLUInt) && t.bits == 8) return true;
    }
    return false;
  };
  size_t int8_kernels = 0;
  for (const auto& call : p.kernels) int8_kernels += is_int8(call) ? 1 : 0;
  o << "kernels (" << p.kernels.size() << ", in execution order";
  if (int8_kernels > 0) o << "; " << int8_kernels << " int8";
  o << "):\n";
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const auto& call = p.kernels[k];
    o << "  [" << k << "] " << (is_int8(call) ? "[int8] " : "") << call.symbol;
    if (!call.fused_ops.empty()) o << "  {" << call.fused_ops << "}";
    o << "  (";
    for (size_t j = 0; j < call.args.size(); ++j) o << (j ? ", " : "") << p.tensors[call.args[j]].name;
    o << ")";
    const bool int8_ops = call.op_kind == artifact::OpKind::kInt8;
    if (call.flops != 0) o << "  " << call.flops << (int8_ops ? " int8 op" : " flop");
    o << "\n";
  }
  uint64_t total_flops = 0, total_int8 = 0;
  for (const auto& call : p.kernels) (call.op_kind == artifact::OpKind::kInt8 ? total_int8 : total_flops) += call.flops;
  o << "flop per run:     " << total_flops << " (counted by the compiler from the kernels' loops)\n";
  if (total_int8 != 0) o << "int8 op per run:  " << total_int8 << " (2 per u8 x s8 multiply-add)\n";
  uint64_t counts[4] = {0, 0, 0, 0}, bytes[4] = {0, 0, 0, 0};
  for (const auto& t : p.tensors) {
    ++counts[static_cast<int>(t.kind)];
    bytes[static_cast<int>(t.kind)] += t.nbytes;
  }
  uint64_t planned = 0;
  for (uint64_t s : p.storage_sizes) planned += s;
  o << "tensors:          " << p.tensors.size() << " (" << counts[0] << " inputs, " << counts[1]
    << " outputs, " << counts[2] << " constants, " << counts[3] << " intermediates)\n";
  o << "file checksum:    " << std::hex << a.file_hash << std::dec << " over " << a.file_size - artifact::kFileSumBytes
    << " bytes (verified; every byte the loader maps or reads)\n";
  o << "weights:          " << m.weights_size << " bytes, checksum " << std::hex << m.weights_hash
    << std::dec << " (verified)\n";
  o << "plan checksum:    " << std::hex << m.plan_hash << std::dec << " (verified)\n";
  {
    const uint64_t known = a.code_bytes + a.weights_bytes + a.plan_bytes + a.meta_bytes;
    auto part = [&](const char* name, uint64_t n) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s %.1f%% (%llu)", name, a.file_size ? 100.0 * static_cast<double>(n) / static_cast<double>(a.file_size) : 0.0,
                    static_cast<unsigned long long>(n));
      return std::string(buf);
    };
    o << "size by part:     " << part("weights", a.weights_bytes) << ", " << part("code", a.code_bytes) << ", "
      << part("plan", a.plan_bytes) << ", " << part("metadata", a.meta_bytes) << ", "
      << part("other", a.file_size > known ? a.file_size - known : 0) << " bytes\n";
  }
  o << "intermediates:    " << planned << " bytes in " << p.storage_sizes.size()
    << " storage block(s) (" << bytes[3] << " bytes without reuse)\n";
  const std::string problem = compatibility_problem(m, a.elf_machine, path);
  o << "runs here:        " << (problem.empty() ? "yes" : "no: " + problem) << "\n";
  return o.str();
}

}  // namespace kiln::runtime
