// Reading an ONNX initializer's external data, confined to the model's directory.
//
// An ONNX tensor may keep its bytes in another file (`location`, `offset`, `length` in its
// external_data entries). A model is untrusted input, so the file must lie inside the model's
// directory: read_external_data() refuses an empty or absolute location, any `..` component, a
// path that resolves (through symlinks) outside the directory, anything but a regular file, and
// an offset/length that is negative, overflows or reaches past the end of the file. Each refusal
// is a UserError naming the tensor (`subject`) and the path. Nothing is allocated or read before
// these checks pass. (The class of ONNX's CVE-2022-25882 and CVE-2024-27318.)
#ifndef KILN_SRC_FRONTEND_ONNX_EXTERNAL_DATA_H_
#define KILN_SRC_FRONTEND_ONNX_EXTERNAL_DATA_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::frontend::onnx_import {

struct ExternalDataRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: not given
};

// The checked, canonical path of `ref.location` inside `model_dir` ("" = the current directory).
std::string resolve_external_data(const std::string& model_dir, const ExternalDataRef& ref, const std::string& subject);

// Checks `ref` (see above) for a tensor of `nbytes` bytes; returns the resolved path. Call it
// before allocating the tensor.
std::string check_external_data(const std::string& model_dir, const ExternalDataRef& ref, size_t nbytes,
                                const std::string& subject);

// Reads the `nbytes` bytes of a checked reference into `dst`.
void read_external_data(const std::string& file, const ExternalDataRef& ref, void* dst, size_t nbytes,
                        const std::string& subject);

}  // namespace kiln::frontend::onnx_import

#endif  // KILN_SRC_FRONTEND_ONNX_EXTERNAL_DATA_H_
