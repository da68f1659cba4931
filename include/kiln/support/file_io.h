// Writing a whole file at once, with the error a user can act on.
#ifndef KILN_SUPPORT_FILE_IO_H_
#define KILN_SUPPORT_FILE_IO_H_

#include <string>
#include <string_view>

namespace kiln {

// Creates or truncates `path` and writes `bytes` to it. UserError(kIO) naming the file and the
// system's reason when it cannot be created or written.
void write_file(const std::string& path, std::string_view bytes);

}  // namespace kiln

#endif  // KILN_SUPPORT_FILE_IO_H_
