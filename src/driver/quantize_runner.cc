// Running ONNX models compiled by Kiln for `kiln quantize` (quantize_parts.h: CompiledModel). The artifact lives in a private temporary directory removed with the object.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "kiln/driver/artifact.h"
#include "kiln/driver/compile.h"
#include "kiln/frontend/onnx.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/support/error.h"
#include "quantize_parts.h"

namespace kiln::driver::quantize_detail {

struct CompiledModel::Impl {
  std::filesystem::path dir;
  runtime::Module module;
  std::unique_ptr<runtime::Executor> exec;
  std::map<std::string, int32_t> outputs;  // f32 outputs
};

CompiledModel::CompiledModel(const std::string& model_bytes, const std::string& model_path,
                             const std::map<std::string, ir::Shape>& shapes, const std::string& target, const std::string& label)
    : impl_(std::make_unique<Impl>()) {
  static std::atomic<int> counter{0};
  impl_->dir = std::filesystem::temp_directory_path() /
               ("kiln-quantize-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(impl_->dir);
  frontend::OnnxImportOptions import;
  import.input_shapes = shapes;
  const std::string model_dir = std::filesystem::path(model_path).parent_path().string();
  const ir::Graph graph = frontend::import_onnx_bytes(model_bytes, model_dir, import, model_path + " (" + label + ")");
  CompileOptions options;
  options.target = target;
  options.artifact.producer = "kiln quantize (" + label + ")";
  const std::string so = (impl_->dir / "model.so").string();
  compile_graph(graph, so, options);
  impl_->module = runtime::Module::load(so);
  impl_->exec = std::make_unique<runtime::Executor>(impl_->module);
  for (int32_t i = 0; i < impl_->module.num_outputs(); ++i) {
    const KilnTensorInfo info = impl_->module.output_info(i);
    const DLDataType f32 = runtime::dtype_f32();
    if (info.dtype.code == f32.code && info.dtype.bits == f32.bits && info.dtype.lanes == 1) impl_->outputs[info.name] = i;
  }
}

CompiledModel::~CompiledModel() {
  impl_->exec.reset();
  impl_->module = runtime::Module();
  std::error_code ec;
  std::filesystem::remove_all(impl_->dir, ec);
}

void CompiledModel::run(const std::vector<std::string>& input_names, const std::vector<ir::NDArray>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    DLTensor t{};
    t.data = const_cast<void*>(inputs[i].raw_data());
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(inputs[i].shape().size());
    t.dtype = to_dl_dtype(inputs[i].dtype());
    t.shape = const_cast<int64_t*>(inputs[i].sizes().data());
    try {
      impl_->exec->set_input(input_names[i], t);
    } catch (const runtime::RuntimeError& e) {
      throw UserError(UserErrorKind::kInvalidArgument, "calibration input '" + input_names[i] + "'", e.what(),
                      "give samples of the shape the model takes (fix symbolic dimensions with --input-shape)");
    }
  }
  impl_->exec->run();
}

bool CompiledModel::has_f32_output(const std::string& name) const { return impl_->outputs.count(name) != 0; }

const float* CompiledModel::f32_output(const std::string& name, int64_t* numel) const {
  auto it = impl_->outputs.find(name);
  if (it == impl_->outputs.end()) return nullptr;
  const DLTensor& v = impl_->exec->output(it->second);
  int64_t n = 1;
  for (int32_t d = 0; d < v.ndim; ++d) n *= v.shape[d];
  *numel = n;
  return static_cast<const float*>(v.data);
}

ir::Shape CompiledModel::f32_output_shape(const std::string& name) const {
  auto it = impl_->outputs.find(name);
  if (it == impl_->outputs.end()) return {};
  const DLTensor& v = impl_->exec->output(it->second);
  return ir::Shape(v.shape, v.shape + v.ndim);
}

}  // namespace kiln::driver::quantize_detail
