// The inside of kiln::codegen::LLVMModule, shared by the files of src/codegen/llvm/ (the module's
// outputs in llvm_module.cc, the JIT in jit.cc, the loop-IR translator in codegen_llvm.cc).
#ifndef KILN_SRC_CODEGEN_LLVM_LLVM_MODULE_IMPL_H_
#define KILN_SRC_CODEGEN_LLVM_LLVM_MODULE_IMPL_H_

#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "kiln/codegen/llvm_module.h"

namespace kiln::codegen {

struct LLVMModule::Impl {
  Target target;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> target_machine;
  std::vector<std::string> kernel_names;
  bool optimized = false;

  // Registers `name` as a kernel; UserError(kInvalidArgument) when the module already has one.
  void add_kernel_name(const std::string& name);
};

}  // namespace kiln::codegen

#endif  // KILN_SRC_CODEGEN_LLVM_LLVM_MODULE_IMPL_H_
