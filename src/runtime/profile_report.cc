// The profiler's report with its roofline check (see profile_report.h).
#include "profile_report.h"

#include <algorithm>
#include <cstdio>

namespace kiln::runtime {
namespace {

struct Row {
  size_t first_call = 0;  // the call site that names the row
  bool int8 = false;      // flops counts int8 ops (artifact::OpKind::kInt8)
  int64_t calls = 0;
  double seconds = 0, flops = 0, bytes = 0;  // summed over call sites and runs
};

// Rows in first-call order; call sites of one symbol are found by a scan (plans have a few
// hundred calls at most, and this keeps the runtime small).
std::vector<Row> rows_by_symbol(const artifact::Plan& plan, const std::vector<KernelProfile>& profile) {
  std::vector<Row> rows;
  for (size_t k = 0; k < plan.kernels.size() && k < profile.size(); ++k) {
    const auto& call = plan.kernels[k];
    const auto& p = profile[k];
    size_t r = 0;
    while (r < rows.size() && plan.kernels[rows[r].first_call].symbol != call.symbol) ++r;
    if (r == rows.size()) rows.push_back(Row{k, call.op_kind == artifact::OpKind::kInt8});
    double arg_bytes = 0;
    for (int32_t id : call.args) {
      if (id >= 0 && static_cast<size_t>(id) < plan.tensors.size()) {
        arg_bytes += static_cast<double>(plan.tensors[id].nbytes);
      }
    }
    rows[r].calls += p.calls;
    rows[r].seconds += p.total_seconds;
    rows[r].flops += static_cast<double>(call.flops) * p.calls;
    rows[r].bytes += arg_bytes * p.calls;
  }
  return rows;
}

// The compute ceiling of a row: the FMA peak (GFLOP/s), or the int8 peak (GOP/s) for int8 kernels.
double peak_of(const Row& r, const MachineCeilings& m) { return r.int8 ? m.int8_peak_gops : m.peak_gflops; }

// % of the roofline floor max(flops / peak, bytes / bandwidth) the measured time reaches; < 0
// when a ceiling or the time is unknown.
double roofline_percent(const Row& r, const MachineCeilings& m) {
  const double peak = peak_of(r, m);
  if (peak <= 0 || m.bandwidth_gbps <= 0 || r.seconds <= 0) return -1;
  const double floor_seconds = std::max(r.flops / (peak * 1e9), r.bytes / (m.bandwidth_gbps * 1e9));
  return floor_seconds / r.seconds * 100.0;
}

}  // namespace

std::string format_profile_report(const artifact::Plan& plan, const std::vector<KernelProfile>& profile,
                                  int64_t runs_done, const MachineCeilings& machine) {
  const std::vector<Row> rows = rows_by_symbol(plan, profile);
  double total_seconds = 0, total_flops = 0, int8_seconds = 0, int8_ops = 0;
  for (const Row& r : rows) {
    total_seconds += r.seconds;
    (r.int8 ? int8_ops : total_flops) += r.flops;
    if (r.int8) int8_seconds += r.seconds;
  }
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rows[a].seconds != rows[b].seconds ? rows[a].seconds > rows[b].seconds : a < b;
  });
  const double runs = runs_done > 0 ? static_cast<double>(runs_done) : 1.0;
  auto gflops = [](double flops, double seconds) { return seconds > 0 ? flops / seconds * 1e-9 : 0.0; };
  std::string out;
  char line[4096];
  std::snprintf(line, sizeof line, "%4s %12s %6s %6s %6s %10s %8s %6s %7s %6s  %s\n", "#", "us/run", "%", "cum%",
                "calls", "us/call", int8_ops > 0 ? "G(FL)OP/s" : "GFLOP/s", "%peak", "GB/s", "%roof", "kernel {fused ops}");
  out += line;
  double cumulative = 0;
  int flagged = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const Row& r = rows[order[i]];
    const auto& call = plan.kernels[r.first_call];
    const double pct = total_seconds > 0 ? r.seconds / total_seconds * 100.0 : 0.0;
    cumulative += pct;
    const double rate = gflops(r.flops, r.seconds);
    char rate_text[32] = "-", peak_text[32] = "-", roof_text[32] = "-";
    if (r.flops > 0 && r.seconds > 0) {
      std::snprintf(rate_text, sizeof rate_text, "%.1f", rate);
      if (peak_of(r, machine) > 0) {
        std::snprintf(peak_text, sizeof peak_text, "%.1f", rate / peak_of(r, machine) * 100.0);
      }
    }
    const double roof = roofline_percent(r, machine);
    if (roof >= 0) std::snprintf(roof_text, sizeof roof_text, "%.1f", roof);
    const bool flag = roof >= 0 && roof < kRooflineFlagPercent && pct >= kRooflineMinShare * 100.0;
    flagged += flag;
    std::snprintf(line, sizeof line, "%4zu %12.1f %6.1f %6.1f %6.4g %10.1f %8s %6s %7.1f %6s  %s {%s}%s%s\n", i + 1,
                  r.seconds / runs * 1e6, pct, cumulative, r.calls / runs,
                  r.calls ? r.seconds / static_cast<double>(r.calls) * 1e6 : 0.0, rate_text, peak_text,
                  r.seconds > 0 ? r.bytes / r.seconds * 1e-9 : 0.0, roof_text, call.symbol.c_str(),
                  call.fused_ops.c_str(), r.int8 ? "  [int8]" : "", flag ? "  << below roofline" : "");
    out += line;
  }
  const double rate = gflops(total_flops, total_seconds);
  std::snprintf(line, sizeof line,
                "total: %.1f us per run over %lld profiled run(s), %zu kernel calls per run (%zu distinct); "
                "%.3f GFLOP per run, %.1f GFLOP/s",
                total_seconds / runs * 1e6, static_cast<long long>(runs_done), plan.kernels.size(), rows.size(),
                total_flops / runs * 1e-9, rate);
  out += line;
  if (machine.peak_gflops > 0) {
    std::snprintf(line, sizeof line, " = %.1f%% of peak", rate / machine.peak_gflops * 100.0);
    out += line;
  }
  out += "\n";
  if (int8_ops > 0) {
    const double int8_rate = gflops(int8_ops, int8_seconds);
    std::snprintf(line, sizeof line,
                  "[int8]: int8 kernels, rated in GOP/s (2 ops per u8 x s8 multiply-add) against the int8 peak%s: "
                  "%.3f GOP per run in %.1f us, %.1f GOP/s",
                  machine.int8_peak_gops > 0 ? "" : " (unknown)", int8_ops / runs * 1e-9, int8_seconds / runs * 1e6,
                  int8_rate);
    out += line;
    if (machine.int8_peak_gops > 0) {
      std::snprintf(line, sizeof line, " = %.1f%% of %.1f GOP/s", int8_rate / machine.int8_peak_gops * 100.0,
                    machine.int8_peak_gops);
      out += line;
    }
    out += "\n";
  }
  if (flagged > 0) {
    std::snprintf(line, sizeof line,
                  "<< below roofline: %d kernel(s) ran under %.0f%% of max(flops / %.1f GFLOP/s, bytes / %.1f GB/s), "
                  "far below both the FMA peak and the memory bandwidth for their arithmetic intensity: "
                  "their schedule, not the machine, limits them (a shape cliff: report it with the kernel's shape)\n",
                  flagged, kRooflineFlagPercent, machine.peak_gflops, machine.bandwidth_gbps);
    out += line;
  }
  return out;
}

}  // namespace kiln::runtime
