// The compile driver (include/kiln/driver/compile.h): import, passes, one kernel per fused group,
// one LLVM module, the artifact.
#include "kiln/driver/compile.h"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "kiln/codegen/llvm_module.h"
#include "kiln/codegen/target.h"
#include "kiln/driver/kernel_cache.h"
#include "kiln/driver/kernel_flops.h"
#include "kiln/driver/kernel_group.h"
#include "kiln/frontend/onnx.h"
#include "kiln/pass/fused_call.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/support/progress.h"
#include "kiln/topi/build.h"
#include "kiln/topi/compute.h"
#include "kiln/topi/knob_space.h"
#include "kiln/tune/model_check.h"
#include "kiln/tune/record_applicability.h"
#include "kiln/tune/records.h"

namespace kiln::driver {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using Group = KernelGroup;

std::string symbol_safe(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_') ? c : '_';
  if (out.size() > 60) out.resize(60);
  return out;
}

class Compiler {
 public:
  Compiler(const codegen::Target& target, const CompileOptions& options) : target_(target), options_(options) {
    for (int i = 0; i < kCodegenModules; ++i) modules_.emplace_back(target, "kiln_model_" + std::to_string(i));
  }

  void run(const ir::Graph& graph, CompileReport& report) {
    // Inputs, then the outputs in the graph's order (the artifact's output order).
    for (const ir::NodePtr& in : graph.inputs()) {
      const ir::TensorType& t = in->as_input().type();
      tensors_[{in.get(), 0}] = builder_.add_input(in->name(), t.dtype, t.shape);
    }
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
      const ir::Value& v = graph.outputs()[i];
      const std::string& name = graph.output_names()[i];
      auto it = tensors_.find({v.node.get(), v.index});
      if (v.node->kind() == ir::NodeKind::kCall && it == tensors_.end()) {
        tensors_[{v.node.get(), v.index}] = builder_.add_output(name, v.type().dtype, v.type().shape);
      } else {
        builder_.add_output_alias(name, tensor_of(v));  // an input, a constant, or a repeated value
      }
    }
    for (const ir::NodePtr& node : graph.topo_order()) {
      switch (node->kind()) {
        case ir::NodeKind::kInput:
        case ir::NodeKind::kConstant:
          break;  // inputs added above; constants when first used
        case ir::NodeKind::kCall: {
          const ir::CallNode& call = node->as_call();
          std::vector<int32_t> outs;
          for (int k = 0; k < call.num_outputs(); ++k) {
            auto it = tensors_.find({node.get(), k});
            if (it == tensors_.end()) {
              const ir::TensorType& t = call.output_types()[k];
              const std::string name = call.name().empty() ? call.op().name : call.name();
              it = tensors_.emplace(std::make_pair(node.get(), k), builder_.add_intermediate(name, t.dtype, t.shape)).first;
            }
            outs.push_back(it->second);
          }
          std::vector<int32_t> args;
          for (const ir::Value& a : call.args()) args.push_back(tensor_of(a));
          add_group(call, args, outs, report);
          if (options_.progress != nullptr) options_.progress->step();
          break;
        }
      }
    }
  }

  void use_records(const tune::RecordDatabase* records, std::string device, tune::StaleRecords* stale) {
    records_ = records;
    device_ = std::move(device);
    stale_ = stale;
  }
  int tuned = 0;  // kernels built from a record

  // The kernels' object code, one object per module that holds a kernel (or one empty object):
  // each from `cache` when it holds the module, else compiled (`threads` at a time) and stored.
  // Counts the modules and the cache hits into `report`.
  std::vector<std::vector<char>> object_code(int threads, KernelCache& cache, CompileReport& report) {
    std::vector<codegen::LLVMModule*> used;
    for (codegen::LLVMModule& m : modules_) {
      if (!m.kernel_names().empty()) used.push_back(&m);
    }
    if (used.empty()) used.push_back(&modules_[0]);  // no kernels (outputs that are inputs or constants)
    std::vector<std::vector<char>> objects(used.size());
    std::vector<std::string> keys(used.size());
    std::vector<codegen::LLVMModule*> misses;
    std::vector<size_t> miss_index;
    for (size_t i = 0; i < used.size(); ++i) {
      if (cache.enabled()) {
        keys[i] = KernelCache::key(used[i]->bitcode(), target_.str());
        if (std::optional<std::vector<char>> hit = cache.lookup(keys[i])) {
          objects[i] = std::move(*hit);
          continue;
        }
      }
      misses.push_back(used[i]);
      miss_index.push_back(i);
    }
    Progress* progress = options_.progress;
    if (progress != nullptr) progress->phase("codegen (LLVM)", static_cast<int64_t>(misses.size()), "modules");
    std::vector<std::vector<char>> compiled = codegen::object_code_in_parallel(
        misses, threads, progress != nullptr ? std::function<void()>([progress] { progress->step(); }) : nullptr);
    if (cache.enabled()) {
      std::vector<std::string> miss_keys;
      std::vector<const std::vector<char>*> miss_objects;
      for (size_t j = 0; j < compiled.size(); ++j) {
        miss_keys.push_back(keys[miss_index[j]]);
        miss_objects.push_back(&compiled[j]);
      }
      cache.store_all(miss_keys, miss_objects);
    }
    for (size_t j = 0; j < compiled.size(); ++j) objects[miss_index[j]] = std::move(compiled[j]);
    report.codegen_modules = static_cast<int>(used.size());
    report.cached_modules = static_cast<int>(used.size() - misses.size());
    return objects;
  }
  ArtifactBuilder& builder() { return builder_; }
  double lower_seconds = 0;
  int distinct = 0;

 private:
  int32_t tensor_of(const ir::Value& v) {
    auto it = tensors_.find({v.node.get(), v.index});
    if (it != tensors_.end()) return it->second;
    KILN_ICHECK(v.node->kind() == ir::NodeKind::kConstant) << "value used before it is computed";
    const int32_t id = builder_.add_constant(v.node->name(), v.node->as_constant().data());
    tensors_[{v.node.get(), v.index}] = id;
    return id;
  }

  int32_t constant_of(const ir::NodePtr& node) {
    auto it = tensors_.find({node.get(), 0});
    if (it != tensors_.end()) return it->second;
    const std::string name = node->name().empty() ? "fused_constant" : node->name();
    const int32_t id = builder_.add_constant(name, node->as_constant().data());
    tensors_[{node.get(), 0}] = id;
    return id;
  }

  std::string new_symbol(const std::string& label) {
    return "kiln_" + symbol_safe(label) + "_" + std::to_string(next_symbol_++);
  }

  // The group's kernel: with the best record's knobs when the records hold one for its signature
  // on this device (a record the compute no longer accepts is logged and ignored), else the
  // default schedule.
  tir::PrimFunc build_kernel(const ir::CallNode& call, const Group& g, const std::string& symbol) {
    topi::OpKernelOptions ko;
    ko.kernel_name = symbol;
    if (records_ != nullptr) {
      if (std::optional<tune::TuningRecord> best = applicable_record(call, g)) {
        topi::Knobs k;
        for (const auto& [name, value] : best->knobs) k.set(name, value);
        ko.knobs = k;
        try {
          tir::PrimFunc f = topi::build_group_kernel(g.members, g.input_types, g.outputs, target_, -1, ko);
          ++tuned;
          return f;
        } catch (const Error& e) {
          KILN_LOG(driver, kWarning) << "the tuning record of " << g.label << " (" << k.to_string()
                                     << ") does not apply (" << e.what() << "); using the default schedule";
          ko.knobs.reset();
        }
      }
    }
    return topi::build_group_kernel(g.members, g.input_types, g.outputs, target_, -1, ko);
  }

  // The best record of the group's kernel on this device measured in the knob space this Kiln's
  // template has (tune/record_applicability.h); others are counted in stale_.
  std::optional<tune::TuningRecord> applicable_record(const ir::CallNode& call, const Group& g) {
    std::vector<tune::TuningRecord> all = records_->records(kernel_group_signature(call, target_), device_);
    if (all.empty()) return std::nullopt;
    std::string space;
    try {
      const topi::GroupCompute gc = topi::group_compute(g.members, g.input_types, g.outputs, target_);
      space = topi::knob_space_fingerprint(gc.result, topi::knob_space(gc.result, target_));
    } catch (const Error&) {
      return std::nullopt;  // not buildable as one kernel: split below, never tuned
    }
    return tune::best_applicable(all, tune::RecordKind::kKernel, space, stale_);
  }

  // Adds the kernel to the module; returns its operations per call (profiler: f32 flops, or int8
  // ops for an int8 kernel).
  KernelFlops add_prim(const tir::PrimFunc& f) {
    modules_[distinct % kCodegenModules].add_prim_func(f);
    ++distinct;
    return flops_of_symbol_[f->name] = count_kernel_flops(f);
  }

  void add_group(const ir::CallNode& call, std::vector<int32_t> args, const std::vector<int32_t>& outs,
                 CompileReport& report) {
    const Group g = make_kernel_group(call);
    for (const auto& m : g.members) {
      if (topi::ComputeRegistry::global().find(m.op) == nullptr) {
        throw UserError(UserErrorKind::kUnsupported, "operator '" + m.op + "'",
                        "has no compute definition in the operator library (topi), so Kiln cannot generate its kernel",
                        "add a compute for it under src/topi/ (docs/topi.md), or export the model without this operator");
      }
    }
    for (const ir::NodePtr& c : g.body_constants) args.push_back(constant_of(c));
    std::vector<int32_t> kernel_args = args;
    kernel_args.insert(kernel_args.end(), outs.begin(), outs.end());
    const std::string ops = join_member_ops(g);

    // One kernel for the group (shared by identical fused bodies).
    std::string key;
    if (pass::is_fused_call(call)) {
      key = call.attrs().get_string("body");
      auto it = kernel_cache_.find(key);
      if (it != kernel_cache_.end()) {
        builder_.add_kernel(it->second, ops, kernel_args, flops_of_symbol_[it->second]);
        report.kernel_calls.push_back({it->second, ops, false});
        return;
      }
    }
    std::string why;
    if (!options_.force_split) {
      const std::string symbol = new_symbol(g.label);
      const auto start = Clock::now();
      try {
        tir::PrimFunc f = build_kernel(call, g, symbol);
        lower_seconds += seconds_since(start);
        const KernelFlops flops = add_prim(f);
        if (!key.empty()) kernel_cache_[key] = symbol;
        builder_.add_kernel(symbol, ops, kernel_args, flops);
        report.kernel_calls.push_back({symbol, ops, false});
        return;
      } catch (const Error& e) {
        lower_seconds += seconds_since(start);
        if (g.members.size() == 1) throw;  // nothing to split: the op itself fails
        why = e.what();
      }
    } else {
      why = "forced (CompileOptions::force_split)";
    }
    if (g.members.size() == 1) {
      // A group of one is its op kernel; force_split changes nothing.
      const std::string symbol = new_symbol(g.label);
      const auto start = Clock::now();
      tir::PrimFunc f = build_kernel(call, g, symbol);
      lower_seconds += seconds_since(start);
      const KernelFlops flops = add_prim(f);
      if (!key.empty()) kernel_cache_[key] = symbol;
      builder_.add_kernel(symbol, ops, kernel_args, flops);
      report.kernel_calls.push_back({symbol, ops, false});
      return;
    }
    split_group(g, args, outs, report);
    std::string first_line = why.substr(0, why.find('\n'));
    report.split_groups.push_back(g.label + " (" + ops + "): " + first_line);
  }

  // The fallback: one kernel per member, intermediates for the values between them.
  void split_group(const Group& g, const std::vector<int32_t>& args, const std::vector<int32_t>& outs,
                   CompileReport& report) {
    std::vector<std::vector<int32_t>> member_tensors(g.members.size());
    // Group outputs that a member produces directly.
    std::map<std::pair<int, int>, int32_t> out_tensor;
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      const topi::ValueRef& r = g.outputs[o];
      if (r.kind == topi::ValueRef::Kind::kMember && !out_tensor.count({r.index, r.output})) {
        out_tensor[{r.index, r.output}] = outs[o];
      }
    }
    for (size_t m = 0; m < g.members.size(); ++m) {
      const topi::GroupMember& member = g.members[m];
      std::vector<int32_t> kargs;
      std::vector<ir::TensorType> in_types;
      for (const topi::ValueRef& r : member.inputs) {
        if (r.kind == topi::ValueRef::Kind::kGroupInput) {
          kargs.push_back(args[r.index]);
          in_types.push_back(g.input_types[r.index]);
        } else {
          kargs.push_back(member_tensors[r.index][r.output]);
          in_types.push_back(g.member_types[r.index][r.output]);
        }
      }
      for (size_t k = 0; k < g.member_types[m].size(); ++k) {
        auto it = out_tensor.find({static_cast<int>(m), static_cast<int>(k)});
        const ir::TensorType& t = g.member_types[m][k];
        const int32_t id = it != out_tensor.end() ? it->second : builder_.add_intermediate(member.op, t.dtype, t.shape);
        member_tensors[m].push_back(id);
        kargs.push_back(id);
      }
      const std::string symbol = new_symbol(member.op);
      const auto start = Clock::now();
      topi::OpKernelOptions ko;
      ko.kernel_name = symbol;
      tir::PrimFunc f = topi::build_op_kernel(member.op, in_types, member.attrs, target_, ko);
      lower_seconds += seconds_since(start);
      const KernelFlops flops = add_prim(f);
      builder_.add_kernel(symbol, member.op, kargs, flops);
      report.kernel_calls.push_back({symbol, member.op, true});
    }
    // A group output that is a group input (a pass-through) would need a copy kernel.
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      if (g.outputs[o].kind == topi::ValueRef::Kind::kGroupInput) {
        throw UserError(UserErrorKind::kUnsupported, "fused group '" + g.label + "'",
                        "returns one of its inputs unchanged, which the per-op fallback cannot express",
                        "compile with -O1 (no fusion)");
      }
    }
  }

  // Kernels go round-robin into this many LLVM modules, which code generation compiles in
  // parallel. A fixed count (not the thread count), so the artifact is the same on every machine.
  static constexpr int kCodegenModules = 16;

  codegen::Target target_;
  const CompileOptions& options_;
  std::vector<codegen::LLVMModule> modules_;
  ArtifactBuilder builder_;
  std::map<std::pair<const ir::Node*, int>, int32_t> tensors_;
  std::unordered_map<std::string, std::string> kernel_cache_;
  std::unordered_map<std::string, KernelFlops> flops_of_symbol_;  // per kernel symbol, per call
  int next_symbol_ = 0;
  const tune::RecordDatabase* records_ = nullptr;
  std::string device_;
  tune::StaleRecords* stale_ = nullptr;
};

// Which other devices a records file holds records for (they are never applied here).
std::string other_devices_note(const tune::RecordDatabase& db, const std::string& device) {
  const int64_t n = db.count_other_devices(device);
  if (n == 0) return "";
  std::set<std::string> others;
  for (const tune::TuningRecord& r : db.all()) {
    if (r.device != device) others.insert(r.device);
  }
  std::string list;
  for (const std::string& d : others) list += (list.empty() ? "" : "; ") + d;
  return std::to_string(n) + " record(s) in " + db.path() + " are for another device (" + list +
         ") and were ignored; this device is " + device + " (tune on this machine with kiln tune)";
}

std::string human_bytes(uint64_t b) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2);
  if (b >= (1u << 20)) {
    os << static_cast<double>(b) / (1 << 20) << " MiB";
  } else if (b >= 1024) {
    os << static_cast<double>(b) / 1024 << " KiB";
  } else {
    os << b << " B";
  }
  return os.str();
}

}  // namespace

pass::PipelineResult run_compile_passes(const ir::Graph& graph, const CompileOptions& options,
                                        const codegen::Target& target) {
  pass::PassOptions po;
  po.opt_level = options.opt_level;
  po.layout_block = std::max(1, target.vector_lanes(32));
  po.dump_ir_after = options.dump_ir_after;
  po.dump_stream = options.dump_stream;
  po.disabled_passes = options.disabled_passes;
  po.layer_choices = options.layer_choices;
  return pass::run_pipeline(graph, po);
}

ir::Graph import_onnx_for_compile(const std::string& model_path, const CompileOptions& options) {
  frontend::OnnxImportOptions io;
  io.input_shapes = options.input_shapes;
  io.constant_inputs = options.constant_inputs;
  return frontend::import_onnx(model_path, io);
}

CompileReport compile_graph(const ir::Graph& graph, const std::string& out_path, const CompileOptions& options) {
  CompileReport report;
  const codegen::Target target = codegen::parse_target(options.target);
  report.target = target.str();
  report.output_path = out_path;

  // Records: opened first, since their layer records settle graph-level choices in the passes.
  std::optional<tune::RecordDatabase> records;
  const std::string device = tune::DeviceKey::of(target).str();
  tune::StaleRecords stale;
  pass::LayerChoices from_records;
  CompileOptions pass_options = options;
  if (!options.records.empty()) {
    records = tune::RecordDatabase::open(options.records, tune::RecordDatabase::Mode::kReadOnly);
    report.records_path = options.records;
    report.records_note = other_devices_note(*records, device);
    if (!report.records_note.empty()) {
      KILN_LOG(driver, kWarning) << report.records_note;
    }
    if (pass_options.layer_choices == nullptr) {
      from_records = tune::layer_choices_from_records(*records, device, &stale);
      pass_options.layer_choices = &from_records;
    }
  }

  Progress* progress = options.progress;
  if (progress != nullptr) progress->phase("passes");
  auto start = Clock::now();
  report.pipeline = run_compile_passes(graph, pass_options, target);
  report.phase_seconds.emplace_back("passes", seconds_since(start));
  if (pass_options.layer_choices != nullptr) {
    report.layer_choices = static_cast<int>(pass_options.layer_choices->points.size());
    report.tuned_layer_choices = pass_options.layer_choices->applied();
  }

  if (progress != nullptr) progress->phase("lower (topi + tir)", report.pipeline.graph.num_calls(), "calls");
  start = Clock::now();
  Compiler compiler(target, options);
  // The kernels take their records unless `kiln tune`'s whole-model check recorded that they do
  // not make the model faster (tune/model_check.h): a layer choice the driver makes after the
  // passes; without a verdict for these records they apply.
  bool kernel_records = records.has_value();
  if (records && pass_options.layer_choices != nullptr && pass_options.layer_choices->lookup) {
    const std::optional<int64_t> v = pass_options.layer_choices->lookup(
        tune::kernel_records_point(report.pipeline.graph, target, *records, device));
    kernel_records = !v.has_value() || *v != 0;
  }
  report.kernel_records_off = records.has_value() && !kernel_records;
  if (kernel_records) compiler.use_records(&*records, device, &stale);
  compiler.run(report.pipeline.graph, report);
  if (!stale.empty()) {
    report.stale_note = stale.note(options.records);
    KILN_LOG(driver, kWarning) << report.stale_note;
  }
  report.distinct_kernels = compiler.distinct;
  report.tuned_kernels = compiler.tuned;
  report.phase_seconds.emplace_back("lower (topi + tir)", compiler.lower_seconds);
  const double to_tir = seconds_since(start);

  start = Clock::now();
  report.codegen_threads = options.codegen_threads > 0 ? options.codegen_threads : codegen::default_codegen_threads();
  KernelCache cache = options.use_kernel_cache ? KernelCache::from_environment() : KernelCache::disabled();
  for (std::vector<char>& object : compiler.object_code(report.codegen_threads, cache, report)) {
    compiler.builder().add_object(std::move(object));
  }
  report.kernel_cache_dir = cache.dir();  // "" when it was off, or turned off by a failed store
  KILN_LOG(driver, kInfo) << "object code of " << report.codegen_modules << " modules (" << report.cached_modules
                          << " from the kernel cache) on " << report.codegen_threads
                          << " thread(s): " << seconds_since(start)
                          << " s; loop IR to LLVM IR before: " << (to_tir - compiler.lower_seconds) << " s";
  // add_prim_func (LLVM translation) happened during lowering; count it as codegen.
  report.phase_seconds.emplace_back("codegen (LLVM)", seconds_since(start) + (to_tir - compiler.lower_seconds));

  if (!report.split_groups.empty()) {
    std::string list;
    for (const std::string& s : report.split_groups) list += "\n  " + s;
    KILN_LOG(driver, kWarning) << report.split_groups.size()
                               << " fused group(s) could not be built as one kernel and were split into per-op kernels:"
                               << list;
  }

  if (progress != nullptr) progress->phase("write artifact (plan + link)");
  start = Clock::now();
  ArtifactOptions ao = options.artifact;
  report.artifact = write_artifact(compiler.builder(), target, out_path, ao);
  report.phase_seconds.emplace_back("write artifact (plan + link)", seconds_since(start));
  return report;
}

CompileReport compile_onnx(const std::string& model_path, const std::string& out_path, const CompileOptions& options) {
  if (options.progress != nullptr) options.progress->phase("import (ONNX)");
  const auto start = Clock::now();
  ir::Graph graph = import_onnx_for_compile(model_path, options);
  const double import_s = seconds_since(start);
  CompileOptions o = options;
  if (o.artifact.producer.empty()) o.artifact.producer = std::filesystem::path(model_path).filename().string();
  CompileReport report = compile_graph(graph, out_path, o);
  report.phase_seconds.insert(report.phase_seconds.begin(), {"import (ONNX)", import_s});
  return report;
}

std::string CompileReport::summary() const {
  std::ostringstream os;
  os << "target: " << target.substr(0, target.find(" -mattr")) << "\n";
  os << "passes:\n" << pipeline.summary();
  if (!pipeline.summary().empty() && pipeline.summary().back() != '\n') os << "\n";
  os << "kernels: " << kernel_calls.size() << " calls, " << distinct_kernels << " distinct\n";
  for (size_t i = 0; i < kernel_calls.size(); ++i) {
    os << "  " << std::setw(4) << i << "  " << kernel_calls[i].symbol << "  [" << kernel_calls[i].fused_ops << "]"
       << (kernel_calls[i].split ? "  (split)" : "") << "\n";
  }
  if (!split_groups.empty()) {
    os << "split into per-op kernels (" << split_groups.size() << " group(s)):\n";
    for (const std::string& s : split_groups) os << "  " << s << "\n";
  }
  if (!records_path.empty()) {
    os << "tuned: " << tuned_kernels << " of " << distinct_kernels << " kernels, " << tuned_layer_choices << " of "
       << layer_choices << " layer choices (records " << records_path << ")\n";
    if (kernel_records_off) {
      os << "  kernel records not applied: kiln tune's whole-model check found the model no faster with "
            "them than with the default schedules\n";
    }
    if (!records_note.empty()) os << "  " << records_note << "\n";
    if (!stale_note.empty()) os << "  " << stale_note << "\n";
  }
  os << "codegen: " << codegen_threads << " thread" << (codegen_threads == 1 ? "" : "s");
  if (!kernel_cache_dir.empty()) {
    os << "; " << cached_modules << " of " << codegen_modules << " modules from the kernel cache (" << kernel_cache_dir
       << ")";
  }
  os << "\n";
  os << "memory: intermediates planned " << human_bytes(artifact.planned_bytes) << " vs naive "
     << human_bytes(artifact.naive_bytes) << "; weights " << human_bytes(artifact.weights_bytes) << "\n";
  double total = 0;
  os << "phases:\n";
  for (const auto& [name, s] : phase_seconds) {
    os << "  " << std::left << std::setw(30) << name << std::right << std::fixed << std::setprecision(3) << s
       << " s\n";
    total += s;
  }
  os << "  " << std::left << std::setw(30) << "total" << std::right << std::fixed << std::setprecision(3) << total
     << " s\n";
  os << "wrote " << output_path << "\n";
  return os.str();
}

}  // namespace kiln::driver
