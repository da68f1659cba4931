// The whole-model check of the kernel records: see include/kiln/tune/model_check.h.
#include "kiln/tune/model_check.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "kiln/driver/kernel_group.h"
#include "kiln/tune/record_applicability.h"
#include "kiln/version.h"
#include "tune/whole_model.h"

namespace kiln::tune {

pass::LayerChoicePoint kernel_records_point(const ir::Graph& pipeline_graph, const codegen::Target& target,
                                            const RecordDatabase& db, const std::string& device) {
  pass::LayerChoicePoint p;
  p.kind = kKernelRecordsKind;
  p.default_value = 0;  // the default schedules: the records must prove themselves
  p.alternatives = {0, 1};
  std::ostringstream structure;
  structure << "kernels";
  int calls = 0;
  for (const ir::NodePtr& node : pipeline_graph.topo_order()) {
    if (node->kind() != ir::NodeKind::kCall) continue;
    const std::string sig = driver::kernel_group_signature(node->as_call(), target);
    structure << " " << sig << ":" << db.records(sig, device).size();
    ++calls;
  }
  p.structure = structure.str();
  p.label = "kernel records of the model (" + std::to_string(calls) + " kernel calls)";
  return p;
}

std::string ModelCheckReport::summary() const {
  if (!measured) return "model check: not measured (" + why_not + ")\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "model check: whole model %.3f ms with the kernel records, %.3f ms without: %s\n",
                with_records_seconds * 1e3, without_records_seconds * 1e3,
                kept ? "kernel records kept (faster by more than 2 % in both passes)"
                     : "kernel records not used (the model is not faster with them; kiln compile --records "
                       "builds the default schedules, the layer choices still apply)");
  return buf;
}

namespace {

// The records' own layer choices, with the kernel-records point forced to `value`.
pass::LayerChoices forcing_kernel_records(const pass::LayerChoices& from_records, int64_t value) {
  pass::LayerChoices c;
  c.lookup = [&from_records, value](const pass::LayerChoicePoint& p) -> std::optional<int64_t> {
    if (p.kind == kKernelRecordsKind) return value;
    return from_records.lookup ? from_records.lookup(p) : std::nullopt;
  };
  return c;
}

// Whether any kernel of the model has an applied record that is not its default schedule's.
bool has_tuned_kernel(const ir::Graph& pipeline_graph, const codegen::Target& target, const RecordDatabase& db,
                      const std::string& device) {
  for (const ir::NodePtr& node : pipeline_graph.topo_order()) {
    if (node->kind() != ir::NodeKind::kCall) continue;
    for (const TuningRecord& r : db.records(driver::kernel_group_signature(node->as_call(), target), device)) {
      if (r.kind == RecordKind::kKernel && r.ok && r.verified && !r.is_default) return true;
    }
  }
  return false;
}

}  // namespace

ModelCheckReport check_kernel_records(const ir::Graph& graph, const driver::CompileOptions& options,
                                      const TuneOptions& tune, Measurer& measurer) {
  ModelCheckReport report;
  if (!std::filesystem::exists(tune.records)) {
    report.why_not = "no records file " + tune.records;
    return report;
  }
  const codegen::Target target = codegen::parse_target(options.target);
  const std::string device = DeviceKey::of(target).str();
  RecordDatabase db = RecordDatabase::open(tune.records, RecordDatabase::Mode::kCreate);
  const pass::LayerChoices from_records = layer_choices_from_records(db, device, nullptr);
  driver::CompileOptions co = options;
  co.records = tune.records;
  pass::LayerChoices probe = forcing_kernel_records(from_records, 1);
  co.layer_choices = &probe;
  const pass::PipelineResult pipeline = driver::run_compile_passes(graph, co, target);
  if (!has_tuned_kernel(pipeline.graph, target, db, device)) {
    report.why_not = "no kernel of the model has a record other than its default schedule";
    return report;
  }
  const pass::LayerChoicePoint point = kernel_records_point(pipeline.graph, target, db, device);

  bool own_work = false;
  const std::filesystem::path work = make_work_dir(tune.work_dir, "kiln-tune-check", &own_work);
  std::vector<MeasureJob> jobs;
  for (int64_t value : {0, 1}) {  // the default (records off) first: its outputs are the reference
    pass::LayerChoices choices = forcing_kernel_records(from_records, value);
    driver::CompileOptions ao = co;
    ao.layer_choices = &choices;
    const std::string path = (work / ("kernel_records_" + std::to_string(value) + ".so")).string();
    driver::compile_graph(graph, path, ao);  // an Error here is the records' or the compiler's: reported as is
    jobs.push_back({"kernel_records_" + std::to_string(value), path, tune.measure});
    jobs.back().options.return_outputs = true;
  }
  jobs.push_back(jobs[0]);  // "off" again: it keeps the faster of its two positions
  jobs.back().id += "-close";
  jobs.back().options.return_outputs = false;
  const std::vector<MeasureResult> first = measurer.measure(jobs);
  for (MeasureJob& j : jobs) {
    j.id += "-again";
    j.options.return_outputs = false;
  }
  const std::vector<MeasureResult> second = measurer.measure(jobs);
  if (own_work) std::filesystem::remove_all(work);

  std::vector<ir::TensorType> out_types;
  for (const ir::Value& v : graph.outputs()) out_types.push_back(v.type());
  for (size_t a = 0; a < 2; ++a) {
    const int64_t value = a == 0 ? 0 : 1;
    TuningRecord r;
    r.kind = RecordKind::kLayer;
    r.task = point.signature();
    r.task_label = point.label;
    r.device = device;
    r.kiln_version = compiler_version();
    r.knobs = {{point.kind, value}};
    r.space = layer_space_fingerprint(point);
    r.is_default = value == point.default_value;
    r.ok = first[a].ok && second[a].ok;
    r.error = !first[a].ok ? first[a].error : !second[a].ok ? "second measurement: " + second[a].error : "";
    if (r.ok) r.seconds = two_pass_seconds(first[a], second[a], r.is_default, &first[2], &second[2]);
    if (r.ok && !r.is_default) {
      std::string why = "the model with the default schedules could not be measured";
      r.verified = first[0].ok && outputs_match(out_types, first[0].outputs, first[a].outputs, &why);
      if (!r.verified) r.error = "outputs differ from the untuned model's: " + why;
    }
    db.add(r);
    (value == 1 ? report.with_records_seconds : report.without_records_seconds) = r.seconds;
  }
  report.measured = report.with_records_seconds > 0 && report.without_records_seconds > 0;
  if (!report.measured) report.why_not = "a whole-model measurement failed";
  // What the compile driver will decide, from the records just added.
  const pass::LayerChoices decided = layer_choices_from_records(db, device, nullptr);
  const std::optional<int64_t> v = decided.lookup(point);
  report.kept = v.has_value() && *v == 1;
  return report;
}

}  // namespace kiln::tune
