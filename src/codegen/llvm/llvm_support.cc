// Target initialization, TargetMachine creation and the O3 pipeline (see llvm_support.h).
#include "codegen/llvm/llvm_support.h"

#include <mutex>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetOptions.h>

#include "kiln/support/error.h"

extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86AsmPrinter();
void LLVMInitializeX86AsmParser();
void LLVMInitializeAArch64TargetInfo();
void LLVMInitializeAArch64Target();
void LLVMInitializeAArch64TargetMC();
void LLVMInitializeAArch64AsmPrinter();
void LLVMInitializeAArch64AsmParser();
}

namespace kiln::codegen::llvm_detail {

void initialize_llvm_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    LLVMInitializeAArch64AsmParser();
  });
}

const llvm::Target& lookup_llvm_target(const std::string& triple, const std::string& subject) {
  initialize_llvm_targets();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) {
    throw UserError(UserErrorKind::kUnsupported, subject,
                    "Kiln has no code generator for triple '" + triple + "' (" + error + ")",
                    "use an x86_64 or aarch64 triple, e.g. -mtriple=aarch64-linux-gnu");
  }
  return *target;
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const Target& target) {
  const llvm::Target& backend = lookup_llvm_target(target.triple, "target '" + target.str() + "'");
  llvm::TargetOptions options;
  // Contraction of a*b+c into FMA is allowed where the IR says so (contract flags / fmuladd);
  // no global unsafe math.
  options.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  llvm::TargetMachine* tm = backend.createTargetMachine(
      target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
      llvm::CodeModel::Small, llvm::CodeGenOptLevel::Aggressive);
  KILN_ICHECK(tm != nullptr) << "LLVM created no TargetMachine for " << target.str();
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

void configure_module(llvm::Module& module, const llvm::TargetMachine& tm) {
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
}

void optimize_module(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

std::string module_to_string(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

}  // namespace kiln::codegen::llvm_detail
