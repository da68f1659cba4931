// Internal helpers shared by the LLVM code generator's files: one-time target initialization,
// target lookup and TargetMachine creation for a kiln::codegen::Target. Private to src/codegen/llvm.
#ifndef KILN_SRC_CODEGEN_LLVM_LLVM_SUPPORT_H_
#define KILN_SRC_CODEGEN_LLVM_LLVM_SUPPORT_H_

#include <memory>
#include <string>

#include <llvm/Target/TargetMachine.h>

#include "kiln/codegen/target.h"

namespace llvm {
class Module;
class MCSubtargetInfo;
class Target;
}  // namespace llvm

namespace kiln::codegen::llvm_detail {

// Registers the X86 and AArch64 back ends (targets, MC, asm printers and parsers). Idempotent.
void initialize_llvm_targets();

// The LLVM back end for `triple`; UserError (naming the triple) when Kiln has no back end for it.
const llvm::Target& lookup_llvm_target(const std::string& triple, const std::string& subject);

// A TargetMachine for `target`: optimization level O3 (Aggressive), position-independent code,
// the small code model. Never null.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const Target& target);

// Sets the module's triple and data layout from `tm`.
void configure_module(llvm::Module& module, const llvm::TargetMachine& tm);

// Runs the new pass manager's default O3 pipeline over `module` for `tm`.
void optimize_module(llvm::Module& module, llvm::TargetMachine& tm);

// Text of a module (LLVM assembly).
std::string module_to_string(const llvm::Module& module);

}  // namespace kiln::codegen::llvm_detail

#endif  // KILN_SRC_CODEGEN_LLVM_LLVM_SUPPORT_H_
