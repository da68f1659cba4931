// Int8 peak probe (see int8_peak.h). The kernel is a tensor expression, so it runs exactly the
// instruction sequence codegen emits for the int8 kernels: acc[c, l] = sum_r dot4(X[r % 16, l],
// Y[c, l]) with the accumulator tile in registers (cache_write, reduction outermost, chains
// unrolled, lanes vectorized). X changes every iteration, so nothing is loop-invariant.
#include "kiln/codegen/int8_peak.h"

#include <dlpack/dlpack.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "kiln/codegen/llvm_module.h"
#include "kiln/support/error.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/schedule.h"

namespace kiln::codegen {
namespace {

constexpr int64_t kIterations = 1 << 15;
constexpr int64_t kRows = 16;

tir::PrimFunc int8_peak_func(int lanes, int chains) {
  using namespace tir;
  Tensor X = placeholder({kRows, lanes}, DType::kI32, "X");
  Tensor Y = placeholder({chains, lanes}, DType::kI32, "Y");
  IterVar r = reduce_axis(kIterations, "r");
  Tensor C = compute({chains, lanes}, [&](const std::vector<Var>& i) {
    return sum(dot4_u8s8(X(floormod(Expr(r), make_int(kRows)), i[1]), Y(i[0], i[1]), /*narrow=*/true), {r});
  }, "C", {"c", "l"});
  Schedule s({C});
  Tensor local = s.cache_write(C);
  // Attached at a unit outer loop of C: the whole tile is one stack region (registers after SROA).
  const IterVar outer = s[C].split(s[C].axis(0), chains).first;
  s[local].compute_at(s[C], outer);
  Stage st = s[local];
  st.reorder({st.reduce_axis(0), st.axis(0), st.axis(1)});
  st.unroll(st.axis(0));
  st.vectorize(st.axis(1));
  return lower(s, {X, Y, C}, "int8_peak");
}

DLTensor i32_tensor(int32_t* data, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLInt, 32, 1};
  t.shape = shape;
  return t;
}

}  // namespace

std::string Int8Peak::describe() const {
  char text[256];
  std::snprintf(text, sizeof text, "%.1f GOP/s int8 per core (%s, %d-bit, %d chains)", gops, cpu.c_str(), lanes * 32,
                chains);
  return text;
}

Int8Peak measure_int8_peak(int repeats) { return measure_int8_peak(host_target(), repeats); }

Int8Peak measure_int8_peak(const Target& target, int repeats) {
  Int8Peak peak;
  peak.lanes = std::max(1, target.vector_lanes(32));
  // Enough accumulators to cover the dot product's latency, within the register file.
  peak.chains = target.num_vector_regs >= 32 ? 24 : 10;
  peak.cpu = target.cpu;
  LLVMModule module(target, "int8_peak");
  module.add_prim_func(int8_peak_func(peak.lanes, peak.chains));
  JitModule jit(std::move(module));
  KernelFunction fn = jit.kernel("int8_peak");
  // Bytes: X 4, 3, 2, 1 (u8) and Y -2, 2, -1, 1 (s8, within the narrow form's [-64, 64]).
  const int64_t x_n = kRows * peak.lanes, y_n = int64_t{peak.chains} * peak.lanes;
  std::unique_ptr<int32_t, decltype(&std::free)> x(static_cast<int32_t*>(std::aligned_alloc(64, 4 * 64 * (x_n / 16 + 1))), &std::free),
      y(static_cast<int32_t*>(std::aligned_alloc(64, 4 * 64 * (y_n / 16 + 1))), &std::free),
      c(static_cast<int32_t*>(std::aligned_alloc(64, 4 * 64 * (y_n / 16 + 1))), &std::free);
  KILN_ICHECK(x && y && c) << "out of memory for the int8 peak probe";
  std::fill(x.get(), x.get() + x_n, 0x01020304);
  std::fill(y.get(), y.get() + y_n, 0x01FF02FE);
  int64_t x_shape[2] = {kRows, peak.lanes}, y_shape[2] = {peak.chains, peak.lanes};
  const DLTensor aligned[3] = {i32_tensor(x.get(), x_shape), i32_tensor(y.get(), y_shape), i32_tensor(c.get(), y_shape)};
  auto call = [&] { KILN_ICHECK(fn(aligned, 3) == 0) << "the int8 peak probe failed"; };
  call();  // warm-up
  const double ops_per_call = 8.0 * peak.lanes * peak.chains * static_cast<double>(kIterations);
  for (int rep = 0; rep < std::max(1, repeats); ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < 10; ++k) call();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    peak.gops = std::max(peak.gops, 10 * ops_per_call / s / 1e9);
  }
  return peak;
}

}  // namespace kiln::codegen
