// Whole-file writing (see file_io.h).
#include "kiln/support/file_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "kiln/support/error.h"

namespace kiln {

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError(UserErrorKind::kIO, path, "cannot create the file: " + std::string(std::strerror(errno)));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw UserError(UserErrorKind::kIO, path, "writing failed: " + std::string(std::strerror(errno)));
}

}  // namespace kiln
