// Reading the calibration samples of `kiln quantize` (quantize_parts.h: load_calibration_set).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "kiln/ir/npy.h"
#include "kiln/support/error.h"
#include "quantize_parts.h"

namespace kiln::driver {

CalibrationSource parse_calibration_option(const std::string& spec) {
  CalibrationSource s;
  const size_t eq = spec.find('=');
  if (eq == std::string::npos) {
    s.path = spec;
  } else {
    s.input = spec.substr(0, eq);
    s.path = spec.substr(eq + 1);
  }
  if (s.path.empty() || (eq != std::string::npos && s.input.empty())) {
    throw UserError(UserErrorKind::kInvalidArgument, "--calibration " + spec, "expected FILE.npy, DIR or NAME=FILE.npy",
                    "e.g. --calibration images.npy or --calibration input=images.npy");
  }
  return s;
}

namespace quantize_detail {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return s + "]";
}

std::vector<std::string> npy_files(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".npy") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    throw UserError(UserErrorKind::kNotFound, path, "the calibration directory holds no .npy files",
                    "put one .npy file per sample (or per batch of samples) in it, e.g. numpy.save('dir/0.npy', x)");
  }
  return files;
}

void check_finite(const ir::NDArray& a, const std::string& file) {
  if (a.dtype() != ir::DType::kF32 && a.dtype() != ir::DType::kF64 && a.dtype() != ir::DType::kF16) return;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double v = a.get_as_double(i);
    if (!std::isfinite(v)) {
      throw UserError(UserErrorKind::kInvalidArgument, file,
                      "holds a non-finite value (" + std::to_string(v) + ") at flat index " + std::to_string(i),
                      "calibration data must be finite: clean the samples (e.g. numpy.nan_to_num) or drop them");
    }
  }
}

// Appends the slices of `a` (samples stacked on axis 0) of shape `sample` to `out`.
void slice_samples(const ir::NDArray& a, const ir::Shape& sample, std::vector<ir::NDArray>* out) {
  const int64_t per = ir::shape_numel(sample);
  const size_t bytes = static_cast<size_t>(per) * ir::dtype_size(a.dtype());
  const int64_t count = per == 0 ? 0 : a.numel() / per;
  for (int64_t i = 0; i < count; ++i) {
    ir::NDArray s = ir::NDArray::empty(a.dtype(), sample);
    std::memcpy(s.mutable_raw_data(), static_cast<const char*>(a.raw_data()) + static_cast<size_t>(i) * bytes, bytes);
    out->push_back(std::move(s));
  }
}

}  // namespace

CalibrationSet load_calibration_set(const frontend::qdq::ModelFacts& facts, const std::vector<CalibrationSource>& sources,
                                    const std::map<std::string, ir::Shape>& input_shapes) {
  std::string input_list;
  for (const auto& in : facts.inputs) input_list += (input_list.empty() ? "" : ", ") + in.name;
  if (sources.empty()) {
    throw UserError(UserErrorKind::kInvalidArgument, facts.path, "no calibration data given",
                    "pass --calibration FILE.npy (samples stacked on axis 0) or --calibration NAME=FILE.npy per input (" +
                        input_list + ")");
  }
  std::map<std::string, const CalibrationSource*> by_input;
  for (const auto& s : sources) {
    std::string name = s.input;
    if (name.empty()) {
      if (facts.inputs.size() != 1) {
        throw UserError(UserErrorKind::kInvalidArgument, "--calibration " + s.path,
                        "the model has " + std::to_string(facts.inputs.size()) + " inputs (" + input_list + ")",
                        "name the input of each file: --calibration NAME=" + s.path);
      }
      name = facts.inputs[0].name;
    }
    if (std::none_of(facts.inputs.begin(), facts.inputs.end(), [&](const auto& in) { return in.name == name; })) {
      throw UserError(UserErrorKind::kNotFound, "--calibration " + name + "=" + s.path, "the model has no input '" + name + "'",
                      "its inputs are: " + input_list);
    }
    if (!by_input.emplace(name, &s).second) {
      throw UserError(UserErrorKind::kInvalidArgument, "--calibration " + name, "input '" + name + "' given twice",
                      "give one file or directory per input");
    }
  }
  CalibrationSet set;
  size_t count = 0;
  std::string first_input;
  for (const auto& in : facts.inputs) {
    auto src = by_input.find(in.name);
    if (src == by_input.end()) {
      throw UserError(UserErrorKind::kNotFound, facts.path, "no calibration data for input '" + in.name + "'",
                      "add --calibration " + in.name + "=FILE.npy (every input needs samples: " + input_list + ")");
    }
    std::vector<int64_t> dims = in.dims;
    if (auto fixed = input_shapes.find(in.name); fixed != input_shapes.end()) dims.assign(fixed->second.begin(), fixed->second.end());
    std::vector<ir::NDArray> samples;
    for (const std::string& file : npy_files(src->second->path)) {
      const ir::NDArray a = ir::read_npy(file);
      const std::string subject = file + " (calibration data of input '" + in.name + "')";
      if (in.has_dtype && a.dtype() != in.dtype) {
        throw UserError(UserErrorKind::kInvalidArgument, subject,
                        std::string("dtype ") + ir::dtype_name(a.dtype()) + ", but the input is " + ir::dtype_name(in.dtype),
                        std::string("save the samples as ") + ir::dtype_name(in.dtype) + " (e.g. x.astype(numpy." +
                            (in.dtype == ir::DType::kF32 ? "float32" : ir::dtype_name(in.dtype)) + "))");
      }
      const ir::Shape& shape = a.shape();
      const std::string expected = dims_text(dims);
      const std::string got = ir::shape_to_string(shape);
      if (!dims.empty() && shape.size() != dims.size()) {
        throw UserError(UserErrorKind::kInvalidArgument, subject,
                        "shape " + got + " has rank " + std::to_string(shape.size()) + ", the input " + expected + " has rank " +
                            std::to_string(dims.size()),
                        "stack the samples on axis 0 keeping the batch axis: N samples of " + expected + " as [N*batch, ...]");
      }
      for (size_t d = 1; d < dims.size(); ++d) {
        if (dims[d] >= 0 && shape[d] != dims[d]) {
          throw UserError(UserErrorKind::kInvalidArgument, subject,
                          "shape " + got + " does not match the input's shape " + expected + " at axis " + std::to_string(d),
                          "resize the samples to " + expected + " (axis 0 stacks the samples)");
        }
      }
      const int64_t batch = dims.empty() || dims[0] < 0 ? 1 : dims[0];
      if (shape.empty() || shape[0] == 0) {
        throw UserError(UserErrorKind::kInvalidArgument, subject, "holds no samples (shape " + got + ")",
                        "give at least one sample (tens to hundreds are typical)");
      }
      if (shape[0] % batch != 0) {
        throw UserError(UserErrorKind::kInvalidArgument, subject,
                        "axis 0 has " + std::to_string(shape[0]) + " rows, not a multiple of the model's batch " + std::to_string(batch),
                        "give a multiple of " + std::to_string(batch) + " rows (each run takes " + std::to_string(batch) + ")");
      }
      check_finite(a, file);
      ir::Shape sample = shape;
      sample[0] = batch;
      slice_samples(a, sample, &samples);
    }
    if (set.names.empty()) {
      count = samples.size();
      first_input = in.name;
      set.samples.resize(count);
    } else if (samples.size() != count) {
      throw UserError(UserErrorKind::kInvalidArgument, "--calibration " + in.name,
                      std::to_string(samples.size()) + " samples, but input '" + first_input + "' has " + std::to_string(count),
                      "give every input the same number of samples");
    }
    set.names.push_back(in.name);
    for (size_t i = 0; i < count; ++i) set.samples[i].push_back(std::move(samples[i]));
  }
  return set;
}

}  // namespace quantize_detail
}  // namespace kiln::driver
