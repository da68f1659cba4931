#include "kiln/ir/side_table.h"

#include <filesystem>
#include <fstream>

#include "kiln/ir/npy.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char e = s[++i];
      out += e == 't' ? '\t' : e == 'n' ? '\n' : e;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

void write_side_table(const std::string& dir, const std::map<std::string, NDArray>& table) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path index = std::filesystem::path(dir) / "index.tsv";
  std::ofstream out(index);
  if (!out) throw UserError(UserErrorKind::kIO, index.string(), "cannot be written");
  int k = 0;
  for (const auto& [name, array] : table) {
    const std::string file = "c" + std::to_string(k++) + ".npy";
    write_npy((std::filesystem::path(dir) / file).string(), array);
    out << escape(name) << '\t' << file << '\n';
  }
  if (!out) throw UserError(UserErrorKind::kIO, index.string(), "writing failed");
}

std::map<std::string, NDArray> read_side_table(const std::string& dir) {
  const std::filesystem::path index = std::filesystem::path(dir) / "index.tsv";
  std::ifstream in(index);
  if (!in) throw UserError(UserErrorKind::kNotFound, index.string(), "cannot be opened", "pass the directory given to --side-table");
  std::map<std::string, NDArray> table;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    auto tab = line.rfind('\t');
    if (tab == std::string::npos || tab + 1 == line.size()) {
      throw UserError(UserErrorKind::kParse, index.string() + ":" + std::to_string(line_no), "expected NAME<TAB>FILE");
    }
    const std::string file = line.substr(tab + 1);
    if (file.find('/') != std::string::npos) {
      throw UserError(UserErrorKind::kParse, index.string() + ":" + std::to_string(line_no), "file '" + file + "' is not in the directory");
    }
    table[unescape(line.substr(0, tab))] = read_npy((std::filesystem::path(dir) / file).string());
  }
  return table;
}

}  // namespace kiln::ir
