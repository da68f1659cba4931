#include "kiln/support/error.h"
#include "kiln/topi/compute.h"

namespace kiln::topi {

const char* schedule_kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kInjective: return "injective";
    case ScheduleKind::kReduction: return "reduction";
    case ScheduleKind::kMatmul: return "matmul";
    case ScheduleKind::kConv2dNchwc: return "conv2d_nchwc";
    case ScheduleKind::kDepthwise: return "depthwise";
    case ScheduleKind::kConv2dWinograd: return "conv2d_winograd";
    case ScheduleKind::kInt8Conv2d: return "int8_conv2d";
    case ScheduleKind::kInt8Matmul: return "int8_matmul";
  }
  return "?";
}

ComputeRegistry& ComputeRegistry::global() {
  static ComputeRegistry* registry = new ComputeRegistry();
  return *registry;
}

void ComputeRegistry::add(ComputeDef def) {
  KILN_ICHECK(defs_.count(def.op) == 0) << "compute for operator '" << def.op << "' registered twice";
  std::string name = def.op;
  defs_.emplace(std::move(name), std::move(def));
}

const ComputeDef* ComputeRegistry::find(std::string_view op) const {
  auto it = defs_.find(op);
  return it == defs_.end() ? nullptr : &it->second;
}

const ComputeDef& ComputeRegistry::get(std::string_view op) const {
  if (const ComputeDef* d = find(op)) return *d;
  throw UserError(UserErrorKind::kUnsupported, "operator '" + std::string(op) + "'",
                  "has no compute definition in the operator library (src/topi/)",
                  "run it with the reference executor");
}

std::vector<std::string> ComputeRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, def] : defs_) out.push_back(name);
  return out;
}

}  // namespace kiln::topi
