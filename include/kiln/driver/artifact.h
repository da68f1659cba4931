// Writing a deployable artifact: one shared library holding the kernels' object code, the
// execution plan, the weights and the metadata (format: docs/artifact.md,
// include/kiln/runtime/artifact_format.h). libkiln_runtime loads and runs it.
//
// The compile driver fills an ArtifactBuilder as a thin loop over fused groups:
//
//   ArtifactBuilder b;
//   int32_t x = b.add_input("x", DType::kF32, {1, 3, 224, 224});
//   int32_t w = b.add_constant("conv1.weight", weights);         // ir::NDArray, copied
//   int32_t t = b.add_intermediate("conv1.out", DType::kF32, {1, 64, 112, 112});
//   int32_t y = b.add_output("y", DType::kF32, {1, 1000});
//   b.add_kernel("fused_conv2d_add_relu_0", "conv2d+add+relu", {x, w, t});   // inputs, then outputs
//   ...
//   b.add_object(llvm_module.object_code());                   // every kernel's code
//   ArtifactSummary s = write_artifact(b, codegen_target, "model.so", {});
//
// write_artifact() plans the intermediates' memory by liveness over the kernel order
// (memory_plan.h), lays the constants out 64-byte aligned, encodes plan and metadata (with the
// target's CPU features and the checksums), and links everything with the system C compiler
// (c_compiler_command(): $KILN_CC or cc; for another architecture, find_cross_linker(): the
// target's GNU cross driver, else clang --target + ld.lld).
// A failed link is UserError(kIO) naming the command and its output.
#ifndef KILN_DRIVER_ARTIFACT_H_
#define KILN_DRIVER_ARTIFACT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/codegen/target.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/ir/ndarray.h"
#include "kiln/runtime/artifact_format.h"

namespace kiln::driver {

struct KernelFlops;  // kiln/driver/kernel_flops.h

class ArtifactBuilder {
 public:
  // Each returns the new tensor's id (what add_kernel's args refer to). Names need not be
  // unique for intermediates and constants; graph inputs and outputs must have unique names.
  int32_t add_input(const std::string& name, ir::DType dtype, const ir::Shape& shape);
  int32_t add_output(const std::string& name, ir::DType dtype, const ir::Shape& shape);
  int32_t add_constant(const std::string& name, const ir::NDArray& value);
  int32_t add_intermediate(const std::string& name, ir::DType dtype, const ir::Shape& shape);
  // A graph output that is another tensor (an input or a constant returned as is).
  void add_output_alias(const std::string& name, int32_t tensor);
  // One kernel call, in execution order; args are tensor ids (the kernel's params in order);
  // flops: its floating-point operations per call (count_kernel_flops; 0 = unknown).
  void add_kernel(const std::string& symbol, const std::string& fused_ops, const std::vector<int32_t>& args,
                  uint64_t flops = 0, artifact::OpKind op_kind = artifact::OpKind::kFloat);
  // The same with the compiler's count: an int8 kernel (int8_ops > 0) records its int8 ops.
  void add_kernel(const std::string& symbol, const std::string& fused_ops, const std::vector<int32_t>& args,
                  const KernelFlops& work);
  // An ELF relocatable object defining kernels (LLVMModule::object_code()).
  void add_object(std::vector<char> object_code);

  const artifact::Plan& plan() const { return plan_; }
  const std::vector<ir::NDArray>& constants() const { return constants_; }  // per constant tensor, in order
  const std::vector<std::vector<char>>& objects() const { return objects_; }
  const std::vector<artifact::TensorSpec>& inputs() const { return inputs_; }
  const std::vector<artifact::TensorSpec>& outputs() const { return outputs_; }

 private:
  int32_t add_tensor(const std::string& name, artifact::TensorKind kind, ir::DType dtype, const ir::Shape& shape);
  artifact::Plan plan_;
  std::vector<ir::NDArray> constants_;
  std::vector<std::vector<char>> objects_;
  std::vector<artifact::TensorSpec> inputs_, outputs_;
};

struct ArtifactOptions {
  std::string producer;      // what was compiled (e.g. the model's file name), informational
  std::string c_compiler;    // "" = c_compiler_command() for the host; the cross linker for others
  bool keep_temporaries = false;  // keep the temporary directory (assembly, objects) for debugging
  // Tests only: edits the metadata just before it is encoded (to build artifacts a runtime must
  // refuse: another architecture, a CPU feature this machine lacks, another runtime ABI).
  std::function<void(artifact::Metadata&)> edit_metadata;
};

struct ArtifactSummary {
  std::string path;
  artifact::Metadata metadata;
  size_t num_kernels = 0;
  uint64_t weights_bytes = 0;
  uint64_t planned_bytes = 0;  // intermediates after memory planning
  uint64_t naive_bytes = 0;    // intermediates with one buffer each
  std::string link_command;
  std::string temp_dir;        // set when keep_temporaries
};

// The artifact dtype of a Kiln dtype (bool is DLPack's kDLBool, 8 bits).
DLDataType to_dl_dtype(ir::DType dtype);

// The metadata an artifact for `target` would carry (features split into required/unchecked).
artifact::Metadata make_metadata(const codegen::Target& target);

// Writes the artifact to `path` (atomically: a temporary file renamed into place).
ArtifactSummary write_artifact(const ArtifactBuilder& builder, const codegen::Target& target,
                               const std::string& path, const ArtifactOptions& options = {});

}  // namespace kiln::driver

#endif  // KILN_DRIVER_ARTIFACT_H_
