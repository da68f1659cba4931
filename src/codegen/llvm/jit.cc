// JitModule: ORC LLJIT over an optimized LLVMModule (see include/kiln/codegen/llvm_module.h).
// Generated code calls the runtime C API and libm; those symbols are bound explicitly to this
// process's definitions (so they resolve even when libkiln was dlopen'ed RTLD_LOCAL, e.g. from
// Python), with a search of the process's symbols as the fallback (memset, compiler-rt helpers).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <math.h>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "codegen/llvm/llvm_module_impl.h"
#include "codegen/llvm/llvm_support.h"
#include "kiln/codegen/llvm_module.h"
#include "kiln/runtime/c_api.h"
#include "kiln/support/error.h"

namespace kiln::codegen {
namespace {

std::string llvm_error_text(llvm::Error error) { return llvm::toString(std::move(error)); }

template <typename Fn>
void* fn_address(Fn* fn) {
  return reinterpret_cast<void*>(fn);
}

// Symbols generated code may call, bound to this process's definitions.
std::vector<std::pair<const char*, void*>> process_symbols() {
  using F1 = float(float);
  using D1 = double(double);
  using F2 = float(float, float);
  using D2 = double(double, double);
  return {
      // runtime C API (libkiln_runtime)
      {"kiln_parallel_for", fn_address(&kiln_parallel_for)},
      {"kiln_set_last_error", fn_address(&kiln_set_last_error)},
      {"kiln_get_last_error", fn_address(&kiln_get_last_error)},
      {"kiln_get_num_threads", fn_address(&kiln_get_num_threads)},
      // heap for large local buffers
      {"aligned_alloc", fn_address(&::aligned_alloc)},
      {"free", fn_address(&::free)},
      {"memset", fn_address(&::memset)},
      {"memcpy", fn_address(&::memcpy)},
      // libm (scalar; vector math calls are split into these per lane by LLVM)
      {"expf", fn_address(static_cast<F1*>(&::expf))},
      {"exp", fn_address(static_cast<D1*>(&::exp))},
      {"exp2f", fn_address(static_cast<F1*>(&::exp2f))},
      {"exp2", fn_address(static_cast<D1*>(&::exp2))},
      {"logf", fn_address(static_cast<F1*>(&::logf))},
      {"log", fn_address(static_cast<D1*>(&::log))},
      {"log2f", fn_address(static_cast<F1*>(&::log2f))},
      {"log2", fn_address(static_cast<D1*>(&::log2))},
      {"log10f", fn_address(static_cast<F1*>(&::log10f))},
      {"log10", fn_address(static_cast<D1*>(&::log10))},
      {"sqrtf", fn_address(static_cast<F1*>(&::sqrtf))},
      {"sqrt", fn_address(static_cast<D1*>(&::sqrt))},
      {"tanhf", fn_address(static_cast<F1*>(&::tanhf))},
      {"tanh", fn_address(static_cast<D1*>(&::tanh))},
      {"erff", fn_address(static_cast<F1*>(&::erff))},
      {"erf", fn_address(static_cast<D1*>(&::erf))},
      {"sinf", fn_address(static_cast<F1*>(&::sinf))},
      {"sin", fn_address(static_cast<D1*>(&::sin))},
      {"cosf", fn_address(static_cast<F1*>(&::cosf))},
      {"cos", fn_address(static_cast<D1*>(&::cos))},
      {"tanf", fn_address(static_cast<F1*>(&::tanf))},
      {"tan", fn_address(static_cast<D1*>(&::tan))},
      {"atanf", fn_address(static_cast<F1*>(&::atanf))},
      {"atan", fn_address(static_cast<D1*>(&::atan))},
      {"powf", fn_address(static_cast<F2*>(&::powf))},
      {"pow", fn_address(static_cast<D2*>(&::pow))},
      {"fmodf", fn_address(static_cast<F2*>(&::fmodf))},
      {"fmod", fn_address(static_cast<D2*>(&::fmod))},
      {"floorf", fn_address(static_cast<F1*>(&::floorf))},
      {"floor", fn_address(static_cast<D1*>(&::floor))},
      {"ceilf", fn_address(static_cast<F1*>(&::ceilf))},
      {"ceil", fn_address(static_cast<D1*>(&::ceil))},
      {"roundf", fn_address(static_cast<F1*>(&::roundf))},
      {"round", fn_address(static_cast<D1*>(&::round))},
      {"nearbyintf", fn_address(static_cast<F1*>(&::nearbyintf))},
      {"nearbyint", fn_address(static_cast<D1*>(&::nearbyint))},
      {"truncf", fn_address(static_cast<F1*>(&::truncf))},
      {"trunc", fn_address(static_cast<D1*>(&::trunc))},
      {"fabsf", fn_address(static_cast<F1*>(&::fabsf))},
      {"fabs", fn_address(static_cast<D1*>(&::fabs))},
  };
}

}  // namespace

struct JitModule::Impl {
  Target target;
  std::vector<std::string> kernel_names;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<KernelFunction> kernels;  // parallel to kernel_names
};

JitModule::JitModule(LLVMModule module) : impl_(std::make_unique<Impl>()) {
  LLVMModule::Impl& m = module.impl();
  impl_->target = m.target;
  impl_->kernel_names = m.kernel_names;
  const std::vector<std::string> missing = missing_host_features(m.target);
  if (!missing.empty()) {
    std::string list;
    for (const auto& f : missing) list += (list.empty() ? "" : ", ") + f;
    throw UserError(UserErrorKind::kIncompatible, "target '" + m.target.str() + "'",
                    "this machine cannot run its code (it lacks: " + list + ")",
                    "JIT-compile for the host (target 'llvm' or 'llvm -mcpu=native'), or emit an "
                    "object file for the other machine instead");
  }
  module.optimize();

  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(m.target.triple)};
  jtmb.setCPU(m.target.cpu);
  jtmb.getFeatures() = llvm::SubtargetFeatures(m.target.features);
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  KILN_ICHECK(static_cast<bool>(jit)) << "cannot create the LLJIT: "
                                      << llvm_error_text(jit.takeError());
  impl_->jit = std::move(*jit);
  llvm::orc::LLJIT& lljit = *impl_->jit;
  llvm::orc::JITDylib& dylib = lljit.getMainJITDylib();

  llvm::orc::SymbolMap symbols;
  for (const auto& [name, address] : process_symbols()) {
    if (address == nullptr) continue;
    symbols[lljit.mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error err = dylib.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    KILN_IFAIL() << "cannot define the process symbols: " << llvm_error_text(std::move(err));
  }
  auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      lljit.getDataLayout().getGlobalPrefix());
  KILN_ICHECK(static_cast<bool>(generator)) << llvm_error_text(generator.takeError());
  dylib.addGenerator(std::move(*generator));

  m.module->setDataLayout(lljit.getDataLayout());
  llvm::orc::ThreadSafeModule tsm(std::move(m.module), std::move(m.context));
  if (llvm::Error err = lljit.addIRModule(std::move(tsm))) {
    KILN_IFAIL() << "cannot add the module to the JIT: " << llvm_error_text(std::move(err));
  }
  // Look every kernel up now: this compiles the module, and an unresolved symbol is reported
  // here rather than at the first call.
  for (const std::string& name : impl_->kernel_names) {
    auto address = lljit.lookup(name);
    if (!address) {
      KILN_IFAIL() << "JIT compilation of kernel '" << name
                   << "' failed: " << llvm_error_text(address.takeError());
    }
    impl_->kernels.push_back(address->toPtr<KernelFunction>());
  }
}

JitModule::~JitModule() = default;

const Target& JitModule::target() const { return impl_->target; }

KernelFunction JitModule::kernel(const std::string& name) const {
  for (size_t i = 0; i < impl_->kernel_names.size(); ++i) {
    if (impl_->kernel_names[i] == name) return impl_->kernels[i];
  }
  std::string list;
  for (const auto& n : impl_->kernel_names) list += (list.empty() ? "" : ", ") + n;
  throw UserError(UserErrorKind::kNotFound, "kernel '" + name + "'",
                  "the JIT module has no kernel of this name (it has: " +
                      (list.empty() ? std::string("none") : list) + ")",
                  "use one of the names listed");
}

void JitModule::run(const std::string& name, const std::vector<DLTensor>& args) const {
  KernelFunction fn = kernel(name);
  const int32_t rc = fn(args.data(), static_cast<int32_t>(args.size()));
  if (rc != 0) {
    throw Error("kernel '" + name + "' failed (status " + std::to_string(rc) +
                "): " + kiln_get_last_error());
  }
}

}  // namespace kiln::codegen
