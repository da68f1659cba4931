// `kiln tune MODEL.onnx (or --example NAME) --records FILE.db [--trials N | --time-budget MIN] [--resume] [--target T]
//  [--input-shape NAME:D0,...] [--threads N] [-O N] [--repeats N] [--cache-flush] [--timeout S] [--redis HOST:PORT]
//  [--no-layer-choices] [--no-model-check]`: settles the graph-level layer choices by whole-model
// measurement (src/tune/layer_tuner.cc), then auto-tunes the kernels of the graph they give
// (src/tune/tuner.cc, docs/tuning.md), then times the whole model with and without the kernel
// records (src/tune/model_check.cc), every measurement into FILE.db; then
// `kiln compile MODEL.onnx --records FILE.db` uses the best ones.
// `kiln tune --merge a.db b.db -o c.db` merges records databases; `kiln tune --show FILE.db
// [--device current|all]` lists them (records_show.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "command.h"
#include "kiln/frontend/onnx.h"
#include "kiln/support/error.h"
#include "kiln/tune/layer_tuner.h"
#include "kiln/tune/measure.h"
#include "kiln/tune/model_check.h"
#include "kiln/tune/record_applicability.h"
#include "kiln/tune/records.h"
#include "kiln/tune/redis_measurer.h"
#include "kiln/tune/records_show.h"
#include "kiln/tune/task.h"
#include "kiln/tune/tuner.h"

namespace kiln::cli {

void register_tune(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand(
      "tune", "Auto-tune a model's graph-level layer choices and kernels on this machine into a records database");
  struct Options {
    std::string model;
    std::string example;
    std::string records;
    int64_t trials = 0;
    double time_budget_minutes = 0;
    bool resume = false;
    std::string target = "llvm";
    int opt_level = 3;
    std::vector<std::string> input_shapes;
    int threads = 1;
    int repeats = 10;
    bool cache_flush = false;
    double timeout = 10;
    uint64_t seed = 1;
    std::vector<std::string> merge;
    std::string output;
    std::string show;
    std::string device = "current";
    std::string redis;
    bool quiet = false;
    std::string redis_prefix = "kiln-tune";
    bool no_layer_choices = false;
    bool no_model_check = false;
  };
  auto opts = std::make_shared<Options>();
  auto* model_opt = cmd->add_option("model", opts->model, "ONNX model file");
  cmd->add_option("--example", opts->example, "Tune a built-in example model instead (tiny-cnn)")->excludes(model_opt);
  cmd->add_option("--records", opts->records, "Records database (SQLite; created when missing)");
  cmd->add_option("--trials", opts->trials, "Total measurements for this model's tasks in the database")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--time-budget", opts->time_budget_minutes, "Stop after this many minutes")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--resume", opts->resume, "Continue from the records the database holds (never re-measures them)");
  cmd->add_option("--target", opts->target, "Target (as kiln compile); measured on this machine");
  cmd->add_option("-O,--opt-level", opts->opt_level, "Optimization level 0..3 (as kiln compile)")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--input-shape", opts->input_shapes, "Fix an input's shape: NAME:D0,D1,... (repeatable)");
  cmd->add_option("--threads", opts->threads, "Threads each candidate runs with (default 1)")->check(CLI::Range(1, 1024));
  cmd->add_option("--repeats", opts->repeats, "Timed runs per candidate (default 10)")->check(CLI::Range(1, 100000));
  cmd->add_flag("--cache-flush", opts->cache_flush,
                "Evict the caches before each timed run of a candidate (as a model's other layers would)");
  cmd->add_option("--timeout", opts->timeout, "Seconds before a candidate counts as hung (default 10)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", opts->seed, "Seed of the search (default 1)");
  cmd->add_flag("-q,--quiet", opts->quiet,
                "No status line (on a terminal) or per-round lines (elsewhere) on stderr; the records and the "
                "summary are unchanged");
  cmd->add_option("--merge", opts->merge, "Merge these records databases (with -o)")->expected(1, -1);
  cmd->add_option("-o,--output", opts->output, "The merged database (with --merge)");
  cmd->add_option("--redis", opts->redis,
                  "Measure on kiln-tune-worker processes through a Redis broker at HOST:PORT (docs/tuning.md)");
  cmd->add_option("--redis-prefix", opts->redis_prefix, "The workers' --prefix (default kiln-tune)");
  cmd->add_flag("--no-layer-choices", opts->no_layer_choices,
                "Skip the graph-level choices (Winograd per conv, conv output blocks); tune kernels only");
  cmd->add_flag("--no-model-check", opts->no_model_check,
                "Skip the last step: timing the whole model with and without the kernel records");
  cmd->add_option("--show", opts->show, "List the records of FILE.db (per task: trials, default, best, speedup)");
  cmd->add_option("--device", opts->device, "With --show: current (this machine's target) or all")
      ->check(CLI::IsMember({"current", "all"}));
  cmd->callback([opts, &ctx] {
    if (!opts->show.empty()) {
      const tune::RecordDatabase db = tune::RecordDatabase::open(opts->show, tune::RecordDatabase::Mode::kReadOnly);
      const codegen::Target target = codegen::parse_target(opts->target);
      std::cout << tune::format_records(db, tune::DeviceKey::of(target).str(), opts->device == "all");
      ctx.exit_code = 0;
      return;
    }
    if (!opts->merge.empty()) {
      if (opts->output.empty()) {
        throw UserError(UserErrorKind::kInvalidArgument, "kiln tune --merge", "has no output file",
                        "pass -o OUT.db");
      }
      const int64_t n = tune::merge_databases(opts->merge, opts->output);
      std::cout << "merged " << opts->merge.size() << " database(s): " << n << " record(s) in " << opts->output << "\n";
      ctx.exit_code = 0;
      return;
    }
    if ((opts->model.empty() && opts->example.empty()) || opts->records.empty()) {
      throw UserError(UserErrorKind::kInvalidArgument, "kiln tune", "needs a model and a records file",
                      "kiln tune MODEL.onnx --records FILE.db --trials N (or --merge A.db B.db -o C.db)");
    }
    driver::CompileOptions co;
    co.target = opts->target;
    co.opt_level = opts->opt_level;
    for (const auto& spec : opts->input_shapes) frontend::parse_input_shape_option(spec, &co.input_shapes);
    const codegen::Target target = codegen::parse_target(co.target);
    const ir::Graph graph = opts->example.empty() ? driver::import_onnx_for_compile(opts->model, co)
                                                  : driver::example_model(opts->example);
    const std::string what = opts->example.empty() ? opts->model : "example " + opts->example;
    tune::TuneOptions o;
    o.records = opts->records;
    o.trials = opts->trials;
    o.time_budget_seconds = opts->time_budget_minutes * 60;
    o.resume = opts->resume;
    o.seed = opts->seed;
    o.measure.threads = opts->threads;
    o.measure.repeats = opts->repeats;
    o.measure.flush_cache = opts->cache_flush;
    o.measure.timeout_seconds = opts->timeout;
    o.progress = opts->quiet ? nullptr : &std::cerr;
    o.progress_tty = isatty(fileno(stderr)) != 0;
    std::unique_ptr<tune::Measurer> measurer;
    if (opts->redis.empty()) {
      measurer = tune::make_local_measurer();
    } else {
      tune::RedisOptions ro;
      const size_t colon = opts->redis.rfind(':');
      try {
        if (colon == std::string::npos || colon == 0) throw std::invalid_argument("no port");
        size_t used = 0;
        ro.port = std::stoi(opts->redis.substr(colon + 1), &used);
        if (used != opts->redis.size() - colon - 1 || ro.port <= 0 || ro.port > 65535) throw std::invalid_argument("port");
      } catch (const std::exception&) {
        throw UserError(UserErrorKind::kInvalidArgument, "--redis '" + opts->redis + "'", "is not HOST:PORT",
                        "e.g. --redis 127.0.0.1:6379");
      }
      ro.host = opts->redis.substr(0, colon);
      ro.prefix = opts->redis_prefix;
      measurer = tune::make_redis_measurer(ro);
    }
    // 1. Graph-level choices (whole-model measurements; a quarter of a time budget at most), then
    // 2. the kernels of the graph those choices give (what `kiln compile --records` builds).
    const auto start = std::chrono::steady_clock::now();
    if (!opts->no_layer_choices && (o.trials > 0 || o.time_budget_seconds > 0)) {
      tune::TuneOptions lo = o;
      lo.time_budget_seconds = o.time_budget_seconds / 4;
      std::cerr << "[tune] graph-level choices of " << what << " (whole-model measurements)\n";
      const tune::LayerTuneReport layers = tune::tune_layer_choices(graph, co, lo, *measurer);
      std::cout << layers.summary();
      if (o.time_budget_seconds > 0) {
        o.time_budget_seconds -= std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        o.time_budget_seconds = std::max(o.time_budget_seconds, 1.0);
      }
    }
    std::optional<tune::RecordDatabase> held;
    tune::StaleRecords stale;
    pass::LayerChoices choices;
    if (std::filesystem::exists(opts->records)) {
      held = tune::RecordDatabase::open(opts->records, tune::RecordDatabase::Mode::kReadOnly);
      choices = tune::layer_choices_from_records(*held, tune::DeviceKey::of(target).str(), &stale);
      co.layer_choices = &choices;
    }
    const std::vector<tune::TuningTask> tasks = tune::extract_tasks(graph, co);
    held.reset();
    std::cerr << "[tune] " << tasks.size() << " task(s) of " << what << " on "
              << target.str().substr(0, target.str().find(" -mattr")) << ", records "
              << opts->records << "\n";
    const tune::TuneReport report = tune::tune_tasks(tasks, target, o, *measurer);
    std::cout << report.summary();
    // 3. The whole model with and without the kernel records (tune/model_check.h): kernel
    // records timed alone must not leave the model slower.
    if (!opts->no_model_check) {
      std::cerr << "[tune] whole-model check of the kernel records\n";
      driver::CompileOptions check = co;
      check.layer_choices = nullptr;  // `choices` read the database closed above; the check reopens it
      std::cout << tune::check_kernel_records(graph, check, o, *measurer).summary();
    }
    ctx.exit_code = 0;
  });
}

}  // namespace kiln::cli
