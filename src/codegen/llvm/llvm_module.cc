// LLVMModule: construction, LLVM-assembly input, the O3 pipeline with debug dumps, and the
// assembly / object outputs (see include/kiln/codegen/llvm_module.h).
#include "kiln/codegen/llvm_module.h"

#include <algorithm>
#include <fstream>

#include <llvm/ADT/SmallVector.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "codegen/llvm/llvm_module_impl.h"
#include "codegen/llvm/llvm_support.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::codegen {
namespace {

std::string function_text(const llvm::Function& fn) {
  std::string text;
  llvm::raw_string_ostream os(text);
  fn.print(os);
  return text;
}

void log_functions(const llvm::Module& module, const char* stage) {
  if (!log_enabled("codegen", LogLevel::kDebug)) return;
  for (const llvm::Function& fn : module) {
    if (fn.isDeclaration()) continue;
    KILN_LOG(codegen, kDebug) << "LLVM IR of " << fn.getName().str() << " " << stage << ":\n"
                              << function_text(fn);
  }
}

void verify_or_die(const llvm::Module& module, const char* stage) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  const bool broken = llvm::verifyModule(module, &os);
  KILN_ICHECK(!broken) << "invalid LLVM IR " << stage << ": " << errors;
}

std::vector<char> emit(LLVMModule::Impl& impl, llvm::CodeGenFileType type) {
  // Code generation changes the IR it runs over: emit from a copy, so the module can still be
  // printed, emitted again or JIT-compiled.
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*impl.module);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  const bool cannot = impl.target_machine->addPassesToEmitFile(pm, os, nullptr, type);
  KILN_ICHECK(!cannot) << "LLVM cannot emit this file type for " << impl.target.str();
  pm.run(*copy);
  return std::vector<char>(buffer.begin(), buffer.end());
}

}  // namespace

void LLVMModule::Impl::add_kernel_name(const std::string& name) {
  if (std::find(kernel_names.begin(), kernel_names.end(), name) != kernel_names.end()) {
    throw UserError(UserErrorKind::kInvalidArgument, "kernel '" + name + "'",
                    "the module already has a kernel of this name",
                    "give each kernel of a module its own name");
  }
  kernel_names.push_back(name);
}

LLVMModule::LLVMModule(const Target& target, const std::string& name)
    : impl_(std::make_unique<Impl>()) {
  impl_->target = target;
  impl_->context = std::make_unique<llvm::LLVMContext>();
  impl_->module = std::make_unique<llvm::Module>(name, *impl_->context);
  impl_->target_machine = llvm_detail::create_target_machine(target);
  llvm_detail::configure_module(*impl_->module, *impl_->target_machine);
}

LLVMModule::~LLVMModule() = default;
LLVMModule::LLVMModule(LLVMModule&&) noexcept = default;
LLVMModule& LLVMModule::operator=(LLVMModule&&) noexcept = default;

const Target& LLVMModule::target() const { return impl_->target; }

const std::vector<std::string>& LLVMModule::kernel_names() const { return impl_->kernel_names; }

bool LLVMModule::optimized() const { return impl_->optimized; }

void LLVMModule::add_llvm_ir(std::string_view text, const std::string& what) {
  KILN_ICHECK(!impl_->optimized) << "add_llvm_ir after optimize()";
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> parsed = llvm::parseAssemblyString(
      llvm::StringRef(text.data(), text.size()), diag, *impl_->context);
  if (!parsed) {
    std::string message;
    llvm::raw_string_ostream os(message);
    diag.print(what.c_str(), os, /*ShowColors=*/false);
    throw UserError(UserErrorKind::kParse, what, "is not valid LLVM IR: " + message,
                    "fix the LLVM assembly at the line shown");
  }
  llvm_detail::configure_module(*parsed, *impl_->target_machine);
  std::vector<std::string> names;
  for (const llvm::Function& fn : *parsed) {
    if (!fn.isDeclaration() && fn.hasExternalLinkage()) names.push_back(fn.getName().str());
  }
  for (const std::string& n : names) impl_->add_kernel_name(n);
  if (llvm::Linker::linkModules(*impl_->module, std::move(parsed))) {
    throw UserError(UserErrorKind::kInvalidArgument, what,
                    "cannot be linked into module '" + impl_->module->getName().str() +
                        "' (a definition clashes with one already there)",
                    "rename the clashing function");
  }
}

void LLVMModule::optimize() {
  if (impl_->optimized) return;
  verify_or_die(*impl_->module, "before optimization");
  log_functions(*impl_->module, "before optimization");
  llvm_detail::optimize_module(*impl_->module, *impl_->target_machine);
  log_functions(*impl_->module, "after optimization (O3)");
  impl_->optimized = true;
}

std::string LLVMModule::llvm_ir() const { return llvm_detail::module_to_string(*impl_->module); }

std::string LLVMModule::bitcode() const {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(*impl_->module, os);
  os.flush();
  return bytes;
}

std::string LLVMModule::assembly() {
  optimize();
  std::vector<char> bytes = emit(*impl_, llvm::CodeGenFileType::AssemblyFile);
  return std::string(bytes.begin(), bytes.end());
}

std::vector<char> LLVMModule::object_code() {
  optimize();
  return emit(*impl_, llvm::CodeGenFileType::ObjectFile);
}

void LLVMModule::write_object(const std::string& path) {
  std::vector<char> bytes = object_code();
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    throw UserError(UserErrorKind::kIO, path, "cannot write the object file",
                    "check that the directory exists and is writable");
  }
}

}  // namespace kiln::codegen
