// The end-to-end models that scripts/gen_test_models.py writes into ${build}/models (CTest fixture
// test_models): where each model's ONNX file, input and PyTorch output live, and whether they exist.
#ifndef KILN_TESTS_E2E_GENERATED_MODELS_H_
#define KILN_TESTS_E2E_GENERATED_MODELS_H_

#include <filesystem>
#include <string>

namespace kiln::testing {

struct GeneratedModel {
  std::filesystem::path dir, onnx, input, expected_output;

  bool present() const {
    return std::filesystem::exists(onnx) && std::filesystem::exists(input) &&
           std::filesystem::exists(expected_output);
  }
  // The GTEST_SKIP message when they are not.
  std::string missing_reason() const {
    return "model files missing in " + dir.string() +
           " (scripts/gen_test_models.py failed or was not run; it needs /usr/bin/python3 with torch and torchvision)";
  }
};

inline GeneratedModel generated_model(const std::string& name, const std::string& input_name) {
  GeneratedModel m;
  m.dir = std::filesystem::path(KILN_BINARY_DIR) / "models";
  m.onnx = m.dir / (name + ".onnx");
  m.input = m.dir / (name + "." + input_name + ".npy");
  m.expected_output = m.dir / (name + ".output.npy");
  return m;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_E2E_GENERATED_MODELS_H_
