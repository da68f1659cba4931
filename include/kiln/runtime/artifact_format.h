// The Kiln artifact's embedded data: one definition shared by the writer (libkiln,
// src/driver/artifact_writer.cc) and the reader (libkiln_runtime, src/runtime/module.cc).
// docs/artifact.md describes the format; this header is its executable form.
//
// An artifact is a shared library whose ELF file carries three sections besides the kernels:
//   .kiln.meta     Metadata: format version, versions, target, CPU features, inputs/outputs,
//                  sizes and hashes of the plan and the weights (not mapped at run time)
//   .kiln.plan     Plan: tensor table, storage blocks, kernel calls (not mapped at run time)
//   .kiln.weights  the constants, each 64-byte aligned (mapped read-only; symbol
//                  kiln_artifact_weights marks its start)
// Meta and plan use one small binary encoding: little-endian fixed-width integers, strings and
// arrays as a u32 count followed by their items. Each section is
//   magic (8 bytes) | u32 format version | u64 payload size | payload | u64 hash64(payload)
// so a reader checks the magic, then the version (before it trusts any other byte), then the
// size against the section, then the hash, and only then decodes; every read is bounds-checked
// and throws FormatError naming what was being read.
//
// Header-only, plain C++20 and DLPack: no compiler header, nothing exported.
#ifndef KILN_RUNTIME_ARTIFACT_FORMAT_H_
#define KILN_RUNTIME_ARTIFACT_FORMAT_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::artifact {

// Changes whenever the encoding of any section changes. A reader accepts exactly this version.
// 2: each kernel call carries its floating-point operation count (KernelCall::flops).
// 3: ... and the kind of operations that count is (KernelCall::op_kind: f32 flops or int8 ops).
inline constexpr uint32_t kFormatVersion = 3;
inline constexpr uint64_t kWeightAlignment = 64;

inline constexpr const char* kMetaSection = ".kiln.meta";
inline constexpr const char* kPlanSection = ".kiln.plan";
inline constexpr const char* kWeightsSection = ".kiln.weights";
inline constexpr const char* kWeightsSymbol = "kiln_artifact_weights";
inline constexpr char kMetaMagic[8] = {'K', 'I', 'L', 'N', 'M', 'E', 'T', 'A'};
inline constexpr char kPlanMagic[8] = {'K', 'I', 'L', 'N', 'P', 'L', 'A', 'N'};
// magic + version + payload size, and the trailing hash.
inline constexpr size_t kSectionHeaderBytes = 8 + 4 + 8;
inline constexpr size_t kSectionTrailerBytes = 8;

// A malformed, truncated or incompatible section.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// 64-bit hash of a byte range (corruption detection, not cryptographic): 8 bytes per step,
// multiply-xorshift mixing, the length folded in.
inline uint64_t hash64(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0x243F6A8885A308D3ull ^ (static_cast<uint64_t>(size) * kMul);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  for (size_t k = 0; i + k < size; ++k) tail |= static_cast<uint64_t>(p[i + k]) << (8 * k);
  h = (h ^ tail) * kMul;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return h;
}

// ---- What the sections hold ----------------------------------------------------------------

struct TensorSpec {
  std::string name;
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
};

struct Metadata {
  uint32_t format_version = kFormatVersion;
  std::string kiln_version;       // the compiler that wrote it, e.g. "0.1.0"
  uint32_t runtime_abi = 0;       // KILN_RUNTIME_ABI_VERSION the kernels were built against
  std::string triple;             // LLVM target triple, e.g. "x86_64-unknown-linux-gnu"
  std::string arch;               // "x86_64" or "aarch64" (arch_of_triple(triple))
  std::string cpu;                // LLVM CPU name the kernels were tuned for, e.g. "znver3"
  std::vector<std::string> required_features;   // checked against this CPU before loading
  std::vector<std::string> unchecked_features;  // enabled for codegen, not detectable by the runtime
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::string producer;           // what was compiled (model file name), informational
  uint32_t num_kernels = 0;
  uint64_t plan_size = 0;         // byte size of the whole .kiln.plan section
  uint64_t plan_hash = 0;         // hash64 of the whole .kiln.plan section
  uint64_t weights_size = 0;      // byte size of the weights (the section may be padded beyond)
  uint64_t weights_hash = 0;      // hash64 of the first weights_size bytes of .kiln.weights
};

enum class TensorKind : uint8_t { kInput = 0, kOutput = 1, kConstant = 2, kIntermediate = 3 };

inline const char* to_string(TensorKind kind) {
  switch (kind) {
    case TensorKind::kInput: return "input";
    case TensorKind::kOutput: return "output";
    case TensorKind::kConstant: return "constant";
    case TensorKind::kIntermediate: return "intermediate";
  }
  return "?";
}

// One tensor of the plan. Where its data lives depends on the kind:
//   input/output   the executor's buffers (index = position in Plan::inputs / Plan::outputs)
//   constant       .kiln.weights at byte `offset`
//   intermediate   storage block `storage_id` at byte `offset` (from the memory planner)
struct PlanTensor {
  std::string name;
  TensorKind kind = TensorKind::kIntermediate;
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  int32_t storage_id = -1;
  uint64_t offset = 0;
  uint64_t nbytes = 0;
};

// What a kernel's operation count counts: floating-point operations (GFLOP/s against the FMA
// peak), or 8-bit integer multiply-adds x 2 (GOP/s against the int8 peak, codegen/int8_peak.h).
enum class OpKind : uint8_t { kFloat = 0, kInt8 = 1 };

// One kernel call: symbol(args) with args the tensors' ids, inputs first then outputs.
struct KernelCall {
  std::string symbol;
  std::string fused_ops;  // e.g. "conv2d+add+relu" (profiler, inspect)
  std::vector<int32_t> args;
  uint64_t flops = 0;     // operations per call of `op_kind`, counted by the compiler (0: unknown)
  OpKind op_kind = OpKind::kFloat;
};

struct Plan {
  std::vector<PlanTensor> tensors;
  std::vector<uint64_t> storage_sizes;  // bytes of each storage block
  std::vector<KernelCall> kernels;      // in execution order
  std::vector<int32_t> inputs;          // tensor ids of the graph inputs, in order
  std::vector<int32_t> outputs;         // tensor ids of the graph outputs, in order
};

// ---- Encoding -------------------------------------------------------------------------------

class Encoder {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i32(int32_t v) { raw(&v, 4); }
  void i64(int64_t v) { raw(&v, 8); }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s.data(), s.size());
  }
  void dtype(DLDataType t) {
    u8(t.code);
    u8(t.bits);
    u32(t.lanes);
  }
  void shape(const std::vector<int64_t>& s) {
    u32(static_cast<uint32_t>(s.size()));
    for (int64_t d : s) i64(d);
  }
  void strings(const std::vector<std::string>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (const auto& s : v) str(s);
  }
  void ids(const std::vector<int32_t>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (int32_t x : v) i32(x);
  }
  std::string& bytes() { return out_; }

 private:
  void raw(const void* p, size_t n) {  // little-endian hosts only (x86-64, AArch64 Linux)
    out_.append(static_cast<const char*>(p), n);
  }
  std::string out_;
};

class Decoder {
 public:
  Decoder(std::string_view bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}

  uint8_t u8(const char* field) { return load<uint8_t>(field); }
  uint32_t u32(const char* field) { return load<uint32_t>(field); }
  uint64_t u64(const char* field) { return load<uint64_t>(field); }
  int32_t i32(const char* field) { return load<int32_t>(field); }
  int64_t i64(const char* field) { return load<int64_t>(field); }
  std::string str(const char* field) {
    const uint32_t n = u32(field);
    need(n, field);
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  DLDataType dtype(const char* field) {
    DLDataType t;
    t.code = u8(field);
    t.bits = u8(field);
    const uint32_t lanes = u32(field);
    if (lanes > 0xFFFF) fail(std::string(field) + " has an invalid lane count");
    t.lanes = static_cast<uint16_t>(lanes);
    return t;
  }
  std::vector<int64_t> shape(const char* field) {
    const uint32_t n = count(field, 8);
    std::vector<int64_t> s(n);
    for (auto& d : s) {
      d = i64(field);
      if (d < 0) fail(std::string(field) + " has a negative dimension");
    }
    return s;
  }
  std::vector<std::string> strings(const char* field) {
    const uint32_t n = count(field, 4);
    std::vector<std::string> v;
    v.reserve(n);
    for (uint32_t i = 0; i < n; ++i) v.push_back(str(field));
    return v;
  }
  std::vector<int32_t> ids(const char* field) {
    const uint32_t n = count(field, 4);
    std::vector<int32_t> v(n);
    for (auto& x : v) x = i32(field);
    return v;
  }
  // An item count, checked against the bytes left (each item takes at least min_item_bytes).
  uint32_t count(const char* field, size_t min_item_bytes) {
    const uint32_t n = u32(field);
    if (static_cast<uint64_t>(n) * min_item_bytes > bytes_.size() - pos_) {
      fail(std::string("count of ") + field + " (" + std::to_string(n) + ") exceeds the data");
    }
    return n;
  }
  bool at_end() const { return pos_ == bytes_.size(); }
  [[noreturn]] void fail(const std::string& message) const {
    throw FormatError(what_ + ": " + message + " (at byte " + std::to_string(pos_) + ")");
  }

 private:
  void need(size_t n, const char* field) const {
    if (n > bytes_.size() - pos_) fail(std::string("truncated while reading ") + field);
  }
  template <typename T>
  T load(const char* field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string_view bytes_;
  std::string what_;
  size_t pos_ = 0;
};

// Wraps a payload into a section: magic | version | size | payload | hash.
inline std::string frame_section(const char (&magic)[8], const std::string& payload) {
  Encoder e;
  e.bytes().append(magic, 8);
  e.u32(kFormatVersion);
  e.u64(payload.size());
  e.bytes() += payload;
  e.u64(hash64(payload.data(), payload.size()));
  return std::move(e.bytes());
}

// The payload of a section after checking magic, version, size and hash. `what` names the
// section in messages ("section .kiln.meta of model.so").
inline std::string_view unframe_section(std::string_view section, const char (&magic)[8],
                                        const std::string& what) {
  if (section.size() < 12 || std::memcmp(section.data(), magic, 8) != 0) {
    throw FormatError(what + ": not a Kiln section (bad magic); the file is corrupted or not a "
                             "Kiln artifact");
  }
  uint32_t version;
  std::memcpy(&version, section.data() + 8, 4);
  if (version != kFormatVersion) {
    throw FormatError(what + ": artifact format version " + std::to_string(version) +
                      ", but this runtime reads version " + std::to_string(kFormatVersion) +
                      "; recompile the model with a Kiln whose runtime matches (kiln compile), or "
                      "use the runtime of the Kiln that compiled it");
  }
  if (section.size() < kSectionHeaderBytes + kSectionTrailerBytes) {
    throw FormatError(what + ": truncated section header");
  }
  uint64_t size;
  std::memcpy(&size, section.data() + 12, 8);
  if (size > section.size() - kSectionHeaderBytes - kSectionTrailerBytes) {
    throw FormatError(what + ": payload size " + std::to_string(size) +
                      " exceeds the section; the file is truncated or corrupted");
  }
  std::string_view payload = section.substr(kSectionHeaderBytes, size);
  uint64_t stored;
  std::memcpy(&stored, section.data() + kSectionHeaderBytes + size, 8);
  if (stored != hash64(payload.data(), payload.size())) {
    throw FormatError(what + ": checksum mismatch; the file is corrupted");
  }
  return payload;
}

inline void encode_spec(Encoder& e, const TensorSpec& t) {
  e.str(t.name);
  e.dtype(t.dtype);
  e.shape(t.shape);
}

inline TensorSpec decode_spec(Decoder& d) {
  TensorSpec t;
  t.name = d.str("tensor name");
  t.dtype = d.dtype("tensor dtype");
  t.shape = d.shape("tensor shape");
  return t;
}

inline std::string encode_metadata(const Metadata& m) {
  Encoder e;
  e.str(m.kiln_version);
  e.u32(m.runtime_abi);
  e.str(m.triple);
  e.str(m.arch);
  e.str(m.cpu);
  e.strings(m.required_features);
  e.strings(m.unchecked_features);
  e.u32(static_cast<uint32_t>(m.inputs.size()));
  for (const auto& t : m.inputs) encode_spec(e, t);
  e.u32(static_cast<uint32_t>(m.outputs.size()));
  for (const auto& t : m.outputs) encode_spec(e, t);
  e.str(m.producer);
  e.u32(m.num_kernels);
  e.u64(m.plan_size);
  e.u64(m.plan_hash);
  e.u64(m.weights_size);
  e.u64(m.weights_hash);
  return frame_section(kMetaMagic, e.bytes());
}

inline Metadata decode_metadata(std::string_view section, const std::string& what) {
  Decoder d(unframe_section(section, kMetaMagic, what), what);
  Metadata m;
  m.kiln_version = d.str("kiln version");
  m.runtime_abi = d.u32("runtime ABI");
  m.triple = d.str("target triple");
  m.arch = d.str("architecture");
  m.cpu = d.str("cpu");
  m.required_features = d.strings("required CPU features");
  m.unchecked_features = d.strings("unchecked CPU features");
  for (uint32_t i = 0, n = d.count("inputs", 13); i < n; ++i) m.inputs.push_back(decode_spec(d));
  for (uint32_t i = 0, n = d.count("outputs", 13); i < n; ++i) m.outputs.push_back(decode_spec(d));
  m.producer = d.str("producer");
  m.num_kernels = d.u32("kernel count");
  m.plan_size = d.u64("plan size");
  m.plan_hash = d.u64("plan hash");
  m.weights_size = d.u64("weights size");
  m.weights_hash = d.u64("weights hash");
  if (!d.at_end()) d.fail("unexpected bytes after the metadata");
  return m;
}

inline std::string encode_plan(const Plan& p) {
  Encoder e;
  e.u32(static_cast<uint32_t>(p.tensors.size()));
  for (const auto& t : p.tensors) {
    e.str(t.name);
    e.u8(static_cast<uint8_t>(t.kind));
    e.dtype(t.dtype);
    e.shape(t.shape);
    e.i32(t.storage_id);
    e.u64(t.offset);
    e.u64(t.nbytes);
  }
  e.u32(static_cast<uint32_t>(p.storage_sizes.size()));
  for (uint64_t s : p.storage_sizes) e.u64(s);
  e.u32(static_cast<uint32_t>(p.kernels.size()));
  for (const auto& k : p.kernels) {
    e.str(k.symbol);
    e.str(k.fused_ops);
    e.ids(k.args);
    e.u64(k.flops);
    e.u8(static_cast<uint8_t>(k.op_kind));
  }
  e.ids(p.inputs);
  e.ids(p.outputs);
  return frame_section(kPlanMagic, e.bytes());
}

inline Plan decode_plan(std::string_view section, const std::string& what) {
  Decoder d(unframe_section(section, kPlanMagic, what), what);
  Plan p;
  for (uint32_t i = 0, n = d.count("tensors", 30); i < n; ++i) {
    PlanTensor t;
    t.name = d.str("tensor name");
    const uint8_t kind = d.u8("tensor kind");
    if (kind > static_cast<uint8_t>(TensorKind::kIntermediate)) d.fail("unknown tensor kind");
    t.kind = static_cast<TensorKind>(kind);
    t.dtype = d.dtype("tensor dtype");
    t.shape = d.shape("tensor shape");
    t.storage_id = d.i32("tensor storage id");
    t.offset = d.u64("tensor offset");
    t.nbytes = d.u64("tensor byte size");
    p.tensors.push_back(std::move(t));
  }
  for (uint32_t i = 0, n = d.count("storage blocks", 8); i < n; ++i) {
    p.storage_sizes.push_back(d.u64("storage size"));
  }
  for (uint32_t i = 0, n = d.count("kernels", 20); i < n; ++i) {
    KernelCall k;
    k.symbol = d.str("kernel symbol");
    k.fused_ops = d.str("kernel fused ops");
    k.args = d.ids("kernel arguments");
    k.flops = d.u64("kernel flops");
    const uint8_t kind = d.u8("kernel op kind");
    if (kind > static_cast<uint8_t>(OpKind::kInt8)) d.fail("unknown kernel op kind");
    k.op_kind = static_cast<OpKind>(kind);
    p.kernels.push_back(std::move(k));
  }
  p.inputs = d.ids("plan inputs");
  p.outputs = d.ids("plan outputs");
  if (!d.at_end()) d.fail("unexpected bytes after the plan");
  return p;
}

// ---- Targets and CPU features ------------------------------------------------------------

// "x86_64" / "aarch64" for the triples Kiln generates code for, else the triple's first part.
inline std::string arch_of_triple(std::string_view triple) {
  std::string_view first = triple.substr(0, triple.find('-'));
  if (first == "x86_64" || first == "amd64") return "x86_64";
  if (first == "aarch64" || first == "arm64") return "aarch64";
  return std::string(first);
}

// The CPU features (LLVM spelling) the runtime can detect on each architecture. The writer
// records a target's enabled features that are in this list as required; the others are
// recorded as unchecked (listed by `kiln inspect`).
inline const std::vector<std::string>& detectable_features(std::string_view arch) {
  static const std::vector<std::string> x86 = {
      "adx",        "aes",        "avx",         "avx2",          "avx512bf16",   "avx512bitalg",
      "avx512bw",   "avx512cd",   "avx512dq",    "avx512f",       "avx512fp16",   "avx512ifma",
      "avx512vbmi", "avx512vbmi2", "avx512vl",   "avx512vnni",    "avx512vpopcntdq", "avxvnni",
      "bmi",        "bmi2",       "cmov",        "crc32",         "cx16",         "cx8",
      "f16c",       "fma",        "fma4",        "fxsr",          "gfni",         "lzcnt",
      "mmx",        "movbe",      "pclmul",      "popcnt",        "prfchw",       "rdrnd",
      "rdseed",     "sahf",       "sha",         "sse",           "sse2",         "sse3",
      "sse4.1",     "sse4.2",     "sse4a",       "ssse3",         "vaes",         "vpclmulqdq",
      "x87",        "xop",        "xsave",       "xsavec",        "xsaveopt",     "xsaves",
  };
  static const std::vector<std::string> arm = {
      "aes", "bf16", "crc", "dotprod", "fp-armv8", "fullfp16", "i8mm", "lse", "neon",
      "rdm", "sha2", "sve", "sve2",
  };
  static const std::vector<std::string> none;
  if (arch == "x86_64") return x86;
  if (arch == "aarch64") return arm;
  return none;
}

// Byte size of one element; 0 for a dtype the format does not allow.
inline uint64_t element_bytes(DLDataType t) {
  const bool code_ok = t.code == kDLInt || t.code == kDLUInt || t.code == kDLFloat ||
                       t.code == kDLBfloat || t.code == 6 /* kDLBool */;
  if (!code_ok || t.lanes != 1 || t.bits == 0 || t.bits % 8 != 0) return 0;
  return t.bits / 8;
}

// "f32", "i64", "u8", "bf16", "bool", or "code3:16" for anything else.
inline std::string dtype_text(DLDataType t) {
  std::string bits = std::to_string(t.bits);
  if (t.lanes == 1) {
    switch (t.code) {
      case kDLFloat: return "f" + bits;
      case kDLInt: return "i" + bits;
      case kDLUInt: return "u" + bits;
      case kDLBfloat: return "bf" + bits;
      case 6: return t.bits == 8 ? "bool" : "bool" + bits;
      default: break;
    }
  }
  return "code" + std::to_string(t.code) + ":" + bits + "x" + std::to_string(t.lanes);
}

inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace kiln::artifact

#endif  // KILN_RUNTIME_ARTIFACT_FORMAT_H_
