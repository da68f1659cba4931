// An LLVM module of Kiln kernels for one Target, and its two outputs: native code in this
// process (JitModule, ORC LLJIT; for tests and tuning) and an object file / assembly text (for
// artifacts, any target, including cross-compiled AArch64).
//
// Every kernel follows one C calling convention (docs/codegen.md):
//   extern "C" int32_t kernel(const DLTensor* args, int32_t num_args);
// `args` is an array of num_args DLTensor structs; shapes are static, so a kernel reads only
// `data` + `byte_offset`. It returns 0, or non-zero after kiln_set_last_error(); it never throws.
// Parallel loops call the runtime's kiln_parallel_for().
//
// Kernels come from the loop IR (add_prim_func, in codegen_llvm.cc) or from LLVM assembly text
// (add_llvm_ir: hand-written kernels such as the FMA-peak probe). LLVM types never appear here.
#ifndef KILN_CODEGEN_LLVM_MODULE_H_
#define KILN_CODEGEN_LLVM_MODULE_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/codegen/target.h"

namespace kiln::tir {
class PrimFunc;
}

namespace kiln::codegen {

// How loop IR is turned into kernels.
struct CodegenOptions {
  // Kernels may assume every tensor's data + byte_offset is 64-byte aligned (KILN_TENSOR_ALIGNMENT,
  // true of every tensor Kiln allocates). The entry checks it and fails with a message (never
  // undefined behaviour) when a caller passes a less aligned tensor. false: no alignment assumed.
  bool assume_aligned_args = true;
};

// The signature of every generated kernel.
using KernelFunction = int32_t (*)(const DLTensor* args, int32_t num_args);

class LLVMModule {
 public:
  explicit LLVMModule(const Target& target, const std::string& name = "kiln_module");
  ~LLVMModule();
  LLVMModule(LLVMModule&&) noexcept;
  LLVMModule& operator=(LLVMModule&&) noexcept;

  const Target& target() const;

  // Parses LLVM assembly and links its definitions into this module. Every externally visible
  // function it defines is registered as a kernel. `what` names the text in errors. Throws
  // UserError(kParse) with LLVM's diagnostic when the text is not valid LLVM IR.
  void add_llvm_ir(std::string_view text, const std::string& what = "llvm-ir");

  // Translates a lowered loop-IR function into one exported kernel named func->name (see
  // docs/codegen.md). Logs the loop IR at KILN_LOG=codegen=debug. UserError(kInvalidArgument)
  // when the module already has a kernel of that name.
  void add_prim_func(const tir::PrimFunc& func, const CodegenOptions& options = {});

  // Names of the kernels (exported entries), in the order they were added.
  const std::vector<std::string>& kernel_names() const;

  // Runs the O3 pipeline once (later calls do nothing). Logs each kernel's LLVM IR before and
  // after at KILN_LOG=codegen=debug.
  void optimize();
  bool optimized() const;

  // The module as LLVM assembly (as it is now: call optimize() first for the optimized form).
  std::string llvm_ir() const;
  // The module as LLVM bitcode, as it is now (the kernel cache's key hashes it before optimize()).
  std::string bitcode() const;
  // Native assembly text / an ELF relocatable object for the target. Both optimize first.
  std::string assembly();
  std::vector<char> object_code();
  // Writes object_code() to `path`; UserError(kIO) when it cannot.
  void write_object(const std::string& path);

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Optimizes each module and emits its object code (LLVMModule::object_code), running up to
// `threads` modules at once: each module has its own LLVM context and target machine, so they
// compile independently. The objects come back in the modules' order, so the result does not
// depend on `threads`. When any module fails, the first failure in module order is rethrown after
// every thread has finished. `on_module_done`, when given, is called (from the worker threads)
// after each module.
std::vector<std::vector<char>> object_code_in_parallel(const std::vector<LLVMModule*>& modules, int threads,
                                                       const std::function<void()>& on_module_done = {});

// How many modules to compile at once by default: one per core, but no more than the available
// memory allows at kCodegenBytesPerThread each (LLVM's O3 pipeline and code generation of a large
// kernel module), and at least 1. $KILN_COMPILE_THREADS (a positive integer) overrides it.
inline constexpr uint64_t kCodegenBytesPerThread = uint64_t{512} << 20;
int default_codegen_threads();

// A module compiled into this process. Kernel pointers stay valid while the JitModule lives.
class JitModule {
 public:
  // Optimizes `module` and compiles it in-process. Throws UserError(kIncompatible) when the
  // module's target needs CPU features (or an architecture) this machine lacks. Calls from
  // generated code to the runtime C API (kiln_parallel_for, kiln_set_last_error, ...) and to
  // libm (expf, tanhf, ...) resolve to this process's definitions.
  explicit JitModule(LLVMModule module);
  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;

  const Target& target() const;
  // The kernel `name`; UserError(kNotFound) listing the module's kernels when there is none.
  KernelFunction kernel(const std::string& name) const;
  // Calls kernel `name` with `args`; when it returns non-zero, throws kiln::Error carrying the
  // kernel's kiln_get_last_error() message.
  void run(const std::string& name, const std::vector<DLTensor>& args) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::codegen

#endif  // KILN_CODEGEN_LLVM_MODULE_H_
