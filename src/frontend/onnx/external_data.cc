// External data confined to the model's directory (see external_data.h).
#include "external_data.h"

#include <filesystem>
#include <fstream>

#include "kiln/support/error.h"

namespace kiln::frontend::onnx_import {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHint =
    "external data must be a file inside the model's directory, named by a relative path without '..' "
    "(re-save the model with onnx.save_model(..., save_as_external_data=True))";

// True when `path` is `dir` or below it (both canonical).
bool is_within(const fs::path& dir, const fs::path& path) {
  auto d = dir.begin(), p = path.begin();
  for (; d != dir.end(); ++d, ++p) {
    if (d->empty() && std::next(d) == dir.end()) break;  // a trailing separator
    if (p == path.end() || *d != *p) return false;
  }
  return true;
}

}  // namespace

std::string resolve_external_data(const std::string& model_dir, const ExternalDataRef& ref, const std::string& subject) {
  const std::string named = "external data location '" + ref.location + "'";
  if (ref.location.empty()) throw UserError(UserErrorKind::kParse, subject, "external data without a location", kHint);
  if (ref.location.find('\0') != std::string::npos) {
    throw UserError(UserErrorKind::kParse, subject, named + " contains a NUL byte", kHint);
  }
  const fs::path location(ref.location);
  if (location.has_root_path()) {
    throw UserError(UserErrorKind::kInvalidArgument, subject, named + " is an absolute path: refused, it could read any file",
                    kHint);
  }
  for (const auto& part : location) {
    if (part == "..") {
      throw UserError(UserErrorKind::kInvalidArgument, subject, named + " climbs out of the model's directory with '..'",
                      kHint);
    }
  }
  std::error_code ec;
  const fs::path dir = fs::canonical(model_dir.empty() ? fs::path(".") : fs::path(model_dir), ec);
  if (ec) {
    throw UserError(UserErrorKind::kNotFound, subject, "the model's directory '" + model_dir + "' cannot be resolved: " +
                    ec.message());
  }
  const fs::path joined = dir / location;
  const fs::path file = fs::canonical(joined, ec);
  if (ec) {
    throw UserError(UserErrorKind::kNotFound, subject, "external data file '" + joined.string() + "' cannot be opened: " +
                    ec.message(), "keep the weights file next to the model");
  }
  if (!is_within(dir, file)) {
    throw UserError(UserErrorKind::kInvalidArgument, subject,
                    named + " resolves to '" + file.string() + "', outside the model's directory '" + dir.string() +
                        "' (a symbolic link?)",
                    kHint);
  }
  if (!fs::is_regular_file(file, ec)) {
    throw UserError(UserErrorKind::kInvalidArgument, subject,
                    "external data file '" + file.string() + "' is not a regular file", kHint);
  }
  return file.string();
}

std::string check_external_data(const std::string& model_dir, const ExternalDataRef& ref, size_t nbytes,
                                const std::string& subject) {
  const std::string file = resolve_external_data(model_dir, ref, subject);
  if (ref.offset < 0) throw UserError(UserErrorKind::kParse, subject, "external data offset is negative");
  if (ref.length >= 0 && static_cast<uint64_t>(ref.length) != nbytes) {
    throw UserError(UserErrorKind::kParse, subject,
                    "external data length " + std::to_string(ref.length) + " differs from the " + std::to_string(nbytes) +
                        " bytes its type and shape need",
                    "the file is truncated or corrupt");
  }
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec) throw UserError(UserErrorKind::kIO, subject, "cannot read the size of '" + file + "': " + ec.message());
  const auto offset = static_cast<uint64_t>(ref.offset);
  if (offset > size || nbytes > size - offset) {
    throw UserError(UserErrorKind::kParse, subject,
                    "external data at offset " + std::to_string(offset) + " with " + std::to_string(nbytes) +
                        " bytes reaches past the end of '" + file + "' (" + std::to_string(size) + " bytes)",
                    "the weights file is truncated or does not belong to this model");
  }
  return file;
}

void read_external_data(const std::string& file, const ExternalDataRef& ref, void* dst, size_t nbytes,
                        const std::string& subject) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError(UserErrorKind::kIO, subject, "external data file '" + file + "' cannot be opened");
  in.seekg(static_cast<std::streamoff>(ref.offset));
  in.read(static_cast<char*>(dst), static_cast<std::streamsize>(nbytes));
  if (!in || static_cast<size_t>(in.gcount()) != nbytes) {
    throw UserError(UserErrorKind::kIO, subject, "reading " + std::to_string(nbytes) + " bytes of external data from '" +
                                                     file + "' failed");
  }
}

}  // namespace kiln::frontend::onnx_import
