// `kiln run ARTIFACT.so [--input NAME=FILE.npy ...] [--fill random|zeros|ones] [--seed N]
//  [--output FILE.npy ... | --output-dir DIR] [--output-npz FILE] [--print-top K]
//  [--repeat N] [--warmup N] [--threads N] [--profile] [--trace FILE.json]` (see run_artifact.h).
#include "run_artifact.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>

#include "kiln/codegen/fma_peak.h"
#include "kiln/codegen/int8_peak.h"
#include "kiln/codegen/memory_bandwidth.h"
#include "kiln/driver/artifact.h"
#include "kiln/ir/npy.h"
#include "kiln/ir/npz.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/support/error.h"
#include "kiln/support/file_io.h"
#include "run_io.h"

namespace kiln::cli {
namespace {

namespace rt = kiln::runtime;

ir::DType from_dl(DLDataType t, const std::string& what) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 32) return ir::DType::kF32;
    if (t.code == kDLFloat && t.bits == 64) return ir::DType::kF64;
    if (t.code == kDLFloat && t.bits == 16) return ir::DType::kF16;
    if (t.code == kDLBfloat && t.bits == 16) return ir::DType::kBF16;
    if (t.code == kDLInt && t.bits == 8) return ir::DType::kI8;
    if (t.code == kDLInt && t.bits == 16) return ir::DType::kI16;
    if (t.code == kDLInt && t.bits == 32) return ir::DType::kI32;
    if (t.code == kDLInt && t.bits == 64) return ir::DType::kI64;
    if (t.code == kDLUInt && t.bits == 8) return ir::DType::kU8;
    if (t.code == kDLUInt && t.bits == 16) return ir::DType::kU16;
    if (t.code == kDLUInt && t.bits == 32) return ir::DType::kU32;
    if (t.code == kDLUInt && t.bits == 64) return ir::DType::kU64;
    if (t.code == 6 && t.bits == 8) return ir::DType::kBool;
  }
  throw UserError(UserErrorKind::kUnsupported, what, "has a dtype kiln run cannot write as .npy");
}

std::string info_text(const KilnTensorInfo& info) {
  std::string s = info.name;
  s += ": " + artifact::dtype_text(info.dtype) + artifact::shape_text(std::vector<int64_t>(info.shape, info.shape + info.ndim));
  return s;
}

// The runtime's message without the C function's name and the path (the error's subject).
std::string load_message(std::string message, const std::string& path) {
  for (const std::string& prefix : {std::string("kiln_module_load: "), path + ": "}) {
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
  }
  return message;
}

std::string file_name_for(const std::string& output_name) {
  std::string out;
  for (char c : output_name) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  }
  if (out.empty() || out[0] == '.') out = "_" + out;
  return out + ".npy";
}

DLTensor view_of(ir::NDArray& a, DLDataType dtype) {
  DLTensor t{};
  t.data = a.mutable_raw_data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(a.shape().size());
  t.dtype = dtype;
  t.shape = const_cast<int64_t*>(a.sizes().data());
  return t;
}

}  // namespace

bool is_artifact_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

void run_artifact(const RunArtifactOptions& o, std::ostream& out) {
  if (o.repeat < 1) throw UserError(UserErrorKind::kInvalidArgument, "--repeat", "must be at least 1");
  if (o.warmup < 0) throw UserError(UserErrorKind::kInvalidArgument, "--warmup", "must not be negative");
  if (o.threads != -1) {
    if (kiln_set_num_threads(o.threads) != 0) {
      throw UserError(UserErrorKind::kInvalidArgument, "--threads " + std::to_string(o.threads), kiln_get_last_error());
    }
  }
  rt::Module module;
  try {
    module = rt::Module::load(o.artifact);
  } catch (const rt::RuntimeError& e) {
    throw UserError(UserErrorKind::kIncompatible, o.artifact, load_message(e.what(), o.artifact),
                    "'kiln inspect " + o.artifact + "' shows what it was built for");
  }
  rt::Executor exec(module);
  const int32_t num_inputs = module.num_inputs(), num_outputs = module.num_outputs();
  std::string input_names, output_names;
  for (int32_t i = 0; i < num_inputs; ++i) input_names += (i ? ", " : "") + info_text(module.input_info(i));
  for (int32_t i = 0; i < num_outputs; ++i) output_names += (i ? ", " : "") + std::string(module.output_info(i).name);

  // Inputs: every model input exactly once.
  std::map<int32_t, ir::NDArray> given;
  for (const auto& spec : o.inputs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      throw UserError(UserErrorKind::kInvalidArgument, "--input " + spec, "expected NAME=FILE.npy");
    }
    const std::string name = spec.substr(0, eq);
    int32_t index = -1;
    for (int32_t i = 0; i < num_inputs; ++i) {
      if (name == module.input_info(i).name) index = i;
    }
    if (index < 0) {
      throw UserError(UserErrorKind::kNotFound, "--input " + spec, "the artifact has no input named '" + name + "'",
                      "its inputs: " + input_names);
    }
    if (given.count(index)) throw UserError(UserErrorKind::kInvalidArgument, "--input " + spec, "input '" + name + "' given twice");
    ir::NDArray array = ir::read_npy(spec.substr(eq + 1));
    try {
      DLTensor t = view_of(array, driver::to_dl_dtype(array.dtype()));
      exec.set_input(index, t);
    } catch (const rt::RuntimeError& e) {
      throw UserError(UserErrorKind::kInvalidArgument, "--input " + spec, e.what(),
                      "the artifact's inputs: " + input_names);
    }
    given[index] = std::move(array);
  }
  // Inputs not given: made up with --fill, or when no --input is given at all.
  const bool fill = !o.fill.empty() || o.inputs.empty();
  const FillMode mode = o.fill.empty() ? FillMode::kRandom : parse_fill_mode(o.fill);
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (given.count(i)) continue;
    const KilnTensorInfo info = module.input_info(i);
    if (!fill) {
      throw UserError(UserErrorKind::kInvalidArgument, "kiln run " + o.artifact,
                      std::string("no --input for '") + info.name + "'",
                      "pass --input NAME=FILE.npy for each input (" + input_names +
                          "), or --fill random|zeros|ones to make up the others");
    }
    const std::string what = std::string("input '") + info.name + "'";
    ir::NDArray array = filled_input(from_dl(info.dtype, what), std::vector<int64_t>(info.shape, info.shape + info.ndim),
                                     mode, o.seed, static_cast<size_t>(i));
    DLTensor t = view_of(array, info.dtype);
    exec.set_input(i, t);
    out << fill_note(info.name, array, mode, o.seed);
    given[i] = std::move(array);
  }
  if (!o.outputs.empty() && static_cast<int32_t>(o.outputs.size()) != num_outputs) {
    throw UserError(UserErrorKind::kInvalidArgument, "--output",
                    "given " + std::to_string(o.outputs.size()) + " times; the artifact has " +
                        std::to_string(num_outputs) + " outputs (" + output_names + ")",
                    "pass one --output per output, in order, or --output-dir DIR");
  }

  auto run_once = [&] {
    try {
      exec.run();
    } catch (const rt::RuntimeError& e) {
      throw UserError(UserErrorKind::kInvalidArgument, o.artifact, std::string("running failed: ") + e.what());
    }
  };
  // The machine's peak and memory bandwidth for the profile's % of peak and roofline check,
  // measured before the runs (about 25 + 30 ms).
  codegen::FmaPeak peak;
  codegen::Int8Peak int8_peak;
  codegen::MemoryBandwidth bandwidth;
  if (o.profile) {
    peak = codegen::measure_fma_peak();
    int8_peak = codegen::measure_int8_peak();
    bandwidth = codegen::measure_memory_bandwidth(kiln_get_num_threads());
  }
  for (int i = 0; i < o.warmup; ++i) run_once();
  if (o.profile) exec.set_profiling(true);
  if (!o.trace.empty()) exec.set_tracing(true);
  std::vector<double> ms;
  for (int i = 0; i < o.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run_once();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }

  if (!o.output_dir.empty()) std::filesystem::create_directories(o.output_dir);
  ir::NamedArrays npz;
  std::string top;
  for (int32_t i = 0; i < num_outputs; ++i) {
    const KilnTensorInfo info = module.output_info(i);
    const std::vector<int64_t> shape(info.shape, info.shape + info.ndim);
    ir::NDArray result = ir::NDArray::empty(from_dl(info.dtype, std::string("output '") + info.name + "'"), shape);
    const DLTensor& view = exec.output(i);
    if (result.nbytes() != 0) std::memcpy(result.mutable_raw_data(), view.data, result.nbytes());
    std::string path;
    if (!o.outputs.empty()) path = o.outputs[i];
    else if (!o.output_dir.empty()) path = (std::filesystem::path(o.output_dir) / file_name_for(info.name)).string();
    if (!path.empty()) ir::write_npy(path, result);
    out << info_text(info) << (path.empty() ? (o.output_npz.empty() ? " (not written: no --output)" : "") : " -> " + path)
        << "\n";
    if (o.print_top > 0) top += top_k_text(info.name, result, o.print_top);
    if (!o.output_npz.empty()) npz.emplace_back(info.name, std::move(result));
  }
  if (!o.output_npz.empty()) {
    ir::write_npz(o.output_npz, npz);
    out << "wrote " << num_outputs << " output" << (num_outputs == 1 ? "" : "s") << " -> " << o.output_npz << "\n";
  }
  out << top;
  if (!o.trace.empty()) {
    const std::string json = exec.trace_json("kiln: " + std::filesystem::path(o.artifact).filename().string());
    write_file(o.trace, json);
    out << "trace: " << o.repeat << " run" << (o.repeat == 1 ? "" : "s") << " x " << exec.num_kernels()
        << " kernel launches -> " << o.trace << " (Chrome trace-event JSON: open in ui.perfetto.dev or chrome://tracing)\n";
  }
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  const double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  char line[256];
  if (n == 1) {
    std::snprintf(line, sizeof line, "ran %s in %.3f ms (%d threads)\n", o.artifact.c_str(), ms[0], kiln_get_num_threads());
  } else {
    std::snprintf(line, sizeof line, "latency: median %.3f ms (min %.3f, max %.3f) over %zu runs after %d warm-up, %d threads\n",
                  median, ms.front(), ms.back(), n, o.warmup, kiln_get_num_threads());
  }
  out << line;
  if (o.profile) {
    const int32_t threads = kiln_get_num_threads();
    const double machine_peak = peak.gflops * threads;
    std::snprintf(line, sizeof line, "peak: %s x %d thread%s = %.1f GFLOP/s (measured now: JIT FMA chains)\n",
                  peak.describe().c_str(), threads, threads == 1 ? "" : "s", machine_peak);
    out << "profile over the timed runs, one row per kernel (call sites summed), slowest first;\n"
        << "GFLOP/s from the compiler's count of each kernel's arithmetic, GB/s over its arguments' bytes,\n"
        << "%roof = max(flops / peak, bytes / bandwidth) over the time (the roofline floor)\n"
        << line << "bandwidth: " << bandwidth.describe() << " (measured now)\n";
    std::snprintf(line, sizeof line, "int8 peak: %s x %d thread%s = %.1f GOP/s (measured now: JIT byte dot-product chains)\n",
                  int8_peak.describe().c_str(), threads, threads == 1 ? "" : "s", int8_peak.gops * threads);
    out << line << exec.profile_report(machine_peak, bandwidth.gbps, int8_peak.gops * threads);
  }
}

}  // namespace kiln::cli
