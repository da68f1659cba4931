#include "kiln/ir/npy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "kiln/support/error.h"
#include "kiln/support/file_io.h"

namespace kiln::ir {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

[[noreturn]] void fail_parse(const std::string& name, const std::string& reason) {
  throw UserError(UserErrorKind::kParse, name, "not a valid .npy file: " + reason,
                  "write it with numpy.save (or Kiln) again");
}

struct Descr {
  DType dtype;
  bool big_endian;
};

// The descr's type part ("f4", "b1", "V2", ...) without the byte-order character.
bool dtype_of_code(std::string_view code, DType* out) {
  static const std::pair<const char*, DType> kCodes[] = {
      {"f4", DType::kF32}, {"f8", DType::kF64}, {"f2", DType::kF16}, {"V2", DType::kBF16}, {"i1", DType::kI8},
      {"u1", DType::kU8},  {"i2", DType::kI16}, {"i4", DType::kI32}, {"i8", DType::kI64}, {"b1", DType::kBool},
      {"u2", DType::kU16}, {"u4", DType::kU32}, {"u8", DType::kU64},
  };
  for (const auto& [c, d] : kCodes) {
    if (code == c) {
      *out = d;
      return true;
    }
  }
  return false;
}

Descr parse_descr(const std::string& descr, const std::string& name) {
  if (descr.size() < 2) fail_parse(name, "descr '" + descr + "' is too short");
  const char order = descr[0];
  std::string_view code(descr);
  bool big = false;
  if (order == '<' || order == '>' || order == '=' || order == '|') {
    code.remove_prefix(1);
    big = order == '>';
  }
  Descr d{DType::kF32, big};
  if (!dtype_of_code(code, &d.dtype)) {
    throw UserError(UserErrorKind::kUnsupported, name, "numpy dtype '" + descr + "' is not supported",
                    "Kiln reads f4, f8, f2, i1, u1, i2, u2, i4, u4, i8, u8, b1 and V2 (bf16); convert with numpy's astype");
  }
  return d;
}

// A tiny reader of the header's Python dict literal.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  void parse(std::string* descr, bool* fortran, Shape* shape) {
    bool has_descr = false, has_fortran = false, has_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[') {
          throw UserError(UserErrorKind::kUnsupported, name_, "structured numpy dtypes are not supported",
                          "save a plain numeric array");
        }
        *descr = parse_string();
        has_descr = true;
      } else if (key == "fortran_order") {
        *fortran = parse_bool();
        has_fortran = true;
      } else if (key == "shape") {
        *shape = parse_shape();
        has_shape = true;
      } else {
        fail_parse(name_, "unknown header key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') ++pos_;
    }
    if (!has_descr || !has_fortran || !has_shape) {
      fail_parse(name_, "the header lacks one of 'descr', 'fortran_order', 'shape'");
    }
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail_parse(name_, std::string("header: expected '") + c + "' at offset " + std::to_string(pos_));
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail_parse(name_, "header: expected a string at offset " + std::to_string(pos_));
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail_parse(name_, "header: unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail_parse(name_, "header: fortran_order is not True or False");
  }
  Shape parse_shape() {
    expect('(');
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      int64_t v = 0;
      size_t digits = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (int64_t{1} << 50)) fail_parse(name_, "header: a dimension is too large");
        v = v * 10 + (peek() - '0');
        ++pos_;
        ++digits;
      }
      while (peek() == 'L') ++pos_;  // Python 2 longs
      if (digits == 0) fail_parse(name_, "header: bad shape at offset " + std::to_string(pos_));
      shape.push_back(v);
      skip_space();
      if (peek() == ',') ++pos_;
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

uint32_t read_le(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Reverses the axes of a C-order array (Fortran data read as C order of the reversed shape).
NDArray reverse_axes(const NDArray& a) {
  const Shape& s = a.shape();
  const int rank = static_cast<int>(s.size());
  Shape out_shape(s.rbegin(), s.rend());
  NDArray out = NDArray::empty(a.dtype(), out_shape);
  const size_t es = dtype_size(a.dtype());
  std::vector<int64_t> in_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * s[d + 1];
  std::vector<int64_t> counter(rank, 0);  // over out_shape
  auto* dst = static_cast<uint8_t*>(out.mutable_raw_data());
  const auto* src = static_cast<const uint8_t*>(a.raw_data());
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += counter[d] * in_strides[rank - 1 - d];
    std::memcpy(dst + i * es, src + off * es, es);
    for (int d = rank - 1; d >= 0; --d) {
      if (++counter[d] < out_shape[d]) break;
      counter[d] = 0;
    }
  }
  return out;
}

}  // namespace

NDArray parse_npy(std::string_view bytes, const std::string& name) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    fail_parse(name, "it does not start with the .npy magic \\x93NUMPY");
  }
  const int major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0) {
    throw UserError(UserErrorKind::kUnsupported, name,
                    ".npy format version " + std::to_string(major) + "." + std::to_string(minor) + " is not supported",
                    "Kiln reads versions 1.0, 2.0 and 3.0");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_bytes) fail_parse(name, "truncated before the header length");
  const size_t header_len = read_le(p + 8, static_cast<int>(len_bytes));
  const size_t data_start = 8 + len_bytes + header_len;
  if (bytes.size() < data_start) {
    fail_parse(name, "truncated in the header (" + std::to_string(header_len) + " header bytes announced, " +
                         std::to_string(bytes.size() - 8 - len_bytes) + " present)");
  }
  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(bytes.substr(8 + len_bytes, header_len), name).parse(&descr, &fortran, &shape);
  const Descr d = parse_descr(descr, name);
  const TensorType type{d.dtype, shape};
  const size_t nbytes = type.nbytes();
  if (bytes.size() - data_start < nbytes) {
    fail_parse(name, "truncated data: " + type.to_string() + " needs " + std::to_string(nbytes) + " bytes, the file has " +
                         std::to_string(bytes.size() - data_start));
  }
  NDArray a = NDArray::empty(d.dtype, shape);
  auto* dst = static_cast<uint8_t*>(a.mutable_raw_data());
  if (nbytes > 0) std::memcpy(dst, bytes.data() + data_start, nbytes);
  const size_t es = dtype_size(d.dtype);
  if (d.big_endian && es > 1) {
    for (size_t i = 0; i < nbytes; i += es) std::reverse(dst + i, dst + i + es);
  }
  if (d.dtype == DType::kBool) {
    for (size_t i = 0; i < nbytes; ++i) dst[i] = dst[i] != 0;
  }
  if (fortran && shape.size() > 1) {
    // Fortran order stores the transpose's C order.
    Shape reversed(shape.rbegin(), shape.rend());
    return reverse_axes(a.reshaped(reversed));
  }
  return a;
}

NDArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UserError(UserErrorKind::kNotFound, path, "cannot open the file: " + std::string(std::strerror(errno)));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw UserError(UserErrorKind::kIO, path, "reading failed");
  const std::string bytes = buf.str();
  return parse_npy(bytes, path);
}

std::string encode_npy(const NDArray& array) {
  const char* code = nullptr;
  switch (array.dtype()) {
    case DType::kF32: code = "<f4"; break;
    case DType::kF64: code = "<f8"; break;
    case DType::kF16: code = "<f2"; break;
    case DType::kBF16: code = "<V2"; break;
    case DType::kI8: code = "|i1"; break;
    case DType::kU8: code = "|u1"; break;
    case DType::kI16: code = "<i2"; break;
    case DType::kI32: code = "<i4"; break;
    case DType::kI64: code = "<i8"; break;
    case DType::kBool: code = "|b1"; break;
    case DType::kU16: code = "<u2"; break;
    case DType::kU32: code = "<u4"; break;
    case DType::kU64: code = "<u8"; break;
  }
  std::string shape = "(";
  for (size_t i = 0; i < array.shape().size(); ++i) {
    shape += std::to_string(array.shape()[i]) + ",";
    if (array.shape().size() > 1 && i + 1 < array.shape().size()) shape += " ";
  }
  if (array.shape().size() > 1) shape.pop_back();  // "(2, 3)" but "(5,)"
  shape += ")";
  std::string header = "{'descr': '" + std::string(code) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that magic + version + length + header + '\n' is a multiple of 64.
  const bool v2 = header.size() + 1 + 10 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const size_t len = header.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += header;
  // Kiln's data is little-endian (x86-64, AArch64): copy the bytes.
  out.append(static_cast<const char*>(array.raw_data()), array.nbytes());
  return out;
}

void write_npy(const std::string& path, const NDArray& array) { write_file(path, encode_npy(array)); }

}  // namespace kiln::ir
