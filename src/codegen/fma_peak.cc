// FMA peak probe (see fma_peak.h).
#include "kiln/codegen/fma_peak.h"

#include <dlpack/dlpack.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/codegen/llvm_module.h"
#include "kiln/support/error.h"

namespace kiln::codegen {
namespace {

constexpr int64_t kIterations = 1 << 16;

// LLVM IR of `fma_peak(args, n)`: `chains` independent accumulators of <lanes x float>, each
// updated acc = fma(acc, x, y) kIterations times (x, y read from args[0] so nothing folds); the
// sum of the accumulators goes to args[1] so nothing is dead. args are DLTensors (data first).
std::string fma_peak_ir(int lanes, int chains) {
  const std::string v = "<" + std::to_string(lanes) + " x float>";
  std::ostringstream s;
  s << "declare " << v << " @llvm.fma.v" << lanes << "f32(" << v << ", " << v << ", " << v << ")\n"
    << "define i32 @fma_peak(ptr noalias %args, i32 %n) {\n"
    << "entry:\n"
    << "  %in = load ptr, ptr %args\n"
    << "  %o.p = getelementptr i8, ptr %args, i64 " << sizeof(DLTensor) << "\n"
    << "  %out = load ptr, ptr %o.p\n"
    << "  %x0 = load float, ptr %in\n"
    << "  %y.p = getelementptr float, ptr %in, i64 1\n"
    << "  %y0 = load float, ptr %y.p\n"
    << "  %xi = insertelement " << v << " poison, float %x0, i64 0\n"
    << "  %x = shufflevector " << v << " %xi, " << v << " poison, <" << lanes << " x i32> zeroinitializer\n"
    << "  %yi = insertelement " << v << " poison, float %y0, i64 0\n"
    << "  %y = shufflevector " << v << " %yi, " << v << " poison, <" << lanes << " x i32> zeroinitializer\n"
    << "  br label %loop\n"
    << "loop:\n"
    << "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]\n";
  for (int c = 0; c < chains; ++c) {
    s << "  %a" << c << " = phi " << v << " [ %y, %entry ], [ %b" << c << ", %loop ]\n";
  }
  for (int c = 0; c < chains; ++c) {
    s << "  %b" << c << " = call " << v << " @llvm.fma.v" << lanes << "f32(" << v << " %a" << c << ", " << v
      << " %x, " << v << " %y)\n";
  }
  s << "  %i.next = add i64 %i, 1\n"
    << "  %done = icmp eq i64 %i.next, " << kIterations << "\n"
    << "  br i1 %done, label %exit, label %loop\n"
    << "exit:\n"
    << "  %s0 = fadd " << v << " %b0, zeroinitializer\n";
  for (int c = 1; c < chains; ++c) s << "  %s" << c << " = fadd " << v << " %s" << (c - 1) << ", %b" << c << "\n";
  s << "  store " << v << " %s" << (chains - 1) << ", ptr %out, align 4\n"
    << "  ret i32 0\n"
    << "}\n";
  return s.str();
}

DLTensor f32_tensor(float* data, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

}  // namespace

struct FmaPeakKernel::Impl {
  std::unique_ptr<JitModule> jit;
  KernelFunction fn = nullptr;
  alignas(64) float in[2] = {0.999999f, 1e-7f};
  alignas(64) float out[64] = {};
  int64_t in_shape[1] = {2};
  int64_t out_shape[1] = {64};
};

FmaPeakKernel::FmaPeakKernel(const Target& target)
    : lanes_(std::max(1, target.vector_lanes(32))),
      // Enough independent chains to cover FMA latency x throughput, within the register file.
      chains_(target.num_vector_regs >= 32 ? 24 : 12),
      impl_(new Impl) {
  try {
    LLVMModule module(target, "fma_peak");
    module.add_llvm_ir(fma_peak_ir(lanes_, chains_), "fma_peak.ll");
    impl_->jit = std::make_unique<JitModule>(std::move(module));
    impl_->fn = impl_->jit->kernel("fma_peak");
  } catch (...) {
    delete impl_;
    throw;
  }
}

FmaPeakKernel::~FmaPeakKernel() { delete impl_; }

double FmaPeakKernel::flops_per_call() const {
  return 2.0 * lanes_ * chains_ * static_cast<double>(kIterations);
}

void FmaPeakKernel::call() {
  const DLTensor args[2] = {f32_tensor(impl_->in, impl_->in_shape), f32_tensor(impl_->out, impl_->out_shape)};
  KILN_ICHECK(impl_->fn(args, 2) == 0) << "the FMA peak probe failed";
}

std::string FmaPeak::probe() const {
  return cpu + ", " + std::to_string(lanes * 32) + "-bit FMA, " + std::to_string(chains) + " chains";
}

std::string FmaPeak::describe() const {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f GFLOP/s per core (", gflops);
  return text + probe() + ")";
}

FmaPeak measure_fma_peak(int repeats) { return measure_fma_peak(host_target(), repeats); }

FmaPeak measure_fma_peak(const Target& target, int repeats) {
  FmaPeakKernel k(target);
  k.call();  // warm-up
  FmaPeak peak;
  peak.lanes = k.lanes();
  peak.chains = k.chains();
  peak.cpu = target.cpu;
  std::vector<double> rates;
  for (int rep = 0; rep < std::max(1, repeats); ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < 10; ++c) k.call();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(10 * k.flops_per_call() / s / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  const size_t n = rates.size();
  peak.gflops = rates.back();
  peak.median_gflops = n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
  peak.windows = static_cast<int>(n);
  return peak;
}

}  // namespace kiln::codegen
