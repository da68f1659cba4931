// Candidate artifacts of one tuning task (include/kiln/tune/candidate.h).
#include "kiln/tune/candidate.h"

#include "kiln/codegen/llvm_module.h"
#include "kiln/driver/artifact.h"
#include "kiln/driver/kernel_flops.h"
#include "kiln/support/error.h"
#include "kiln/tir/schedule.h"
#include "kiln/topi/build.h"

namespace kiln::tune {

bool knobs_accepted(const topi::GroupCompute& compute, const topi::Knobs& knobs, std::string* why) {
  try {
    tir::Schedule s(compute.result.outputs);
    topi::apply_schedule(s, compute.result, knobs);
    return true;
  } catch (const UserError& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
}

CandidateBuild build_candidate(const TuningTask& task, const topi::Knobs& knobs, const codegen::Target& target,
                               const std::string& path) {
  CandidateBuild out;
  out.path = path;
  try {
    topi::OpKernelOptions ko;
    ko.kernel_name = "kiln_tune_candidate";
    ko.knobs = knobs;
    const driver::KernelGroup& g = task.group;
    const tir::PrimFunc f = topi::build_group_kernel(g.members, g.input_types, g.outputs, target, -1, ko);
    codegen::LLVMModule module(target, "kiln_tune_candidate");
    module.add_prim_func(f);
    driver::ArtifactBuilder b;
    std::vector<int32_t> args;
    for (size_t i = 0; i < g.input_types.size(); ++i) {
      args.push_back(b.add_input("in" + std::to_string(i), g.input_types[i].dtype, g.input_types[i].shape));
    }
    for (size_t i = 0; i < g.output_types.size(); ++i) {
      args.push_back(b.add_output("out" + std::to_string(i), g.output_types[i].dtype, g.output_types[i].shape));
    }
    b.add_kernel(f->name, driver::join_member_ops(g), args, driver::count_kernel_flops(f).flops);
    b.add_object(module.object_code());
    driver::ArtifactOptions ao;
    ao.producer = "kiln tune candidate " + task.signature + " " + knobs.to_string();
    driver::write_artifact(b, target, path, ao);
    out.ok = true;
  } catch (const Error& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace kiln::tune
