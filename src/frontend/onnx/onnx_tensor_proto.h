// onnx_model.cc's TensorProto reader and file reader, for the other protobuf user of the frontend
// (onnx_qdq_writer.cc). Only files that include <onnx/onnx_pb.h> may include this header.
#ifndef KILN_FRONTEND_ONNX_ONNX_TENSOR_PROTO_H_
#define KILN_FRONTEND_ONNX_ONNX_TENSOR_PROTO_H_

#include <string>

#include "kiln/ir/ndarray.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace kiln::frontend::onnx_import {

// The tensor's data (raw, typed fields or external data relative to `model_dir`); UserError naming
// `subject` for a malformed or unsupported one.
ir::NDArray onnx_tensor_to_ndarray(const onnx::TensorProto& t, const std::string& model_dir, const std::string& subject);

// The bytes of the file at `path`; UserError(kNotFound/kIO) naming it.
std::string read_model_file(const std::string& path);

}  // namespace kiln::frontend::onnx_import

#endif  // KILN_FRONTEND_ONNX_ONNX_TENSOR_PROTO_H_
