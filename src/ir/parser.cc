// Parser of the graph IR's text form (grammar: docs/ir.md; printer: printer.cc). A hand-written
// lexer + recursive descent; every error names line:column and what was expected.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include "kiln/ir/text.h"
#include "kiln/tir/interval.h"
#include "kiln/tir/simplify.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

enum class Tok { kEnd, kValue, kIdent, kNumber, kString, kPunct, kAt };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // kValue: the symbol key (quoted names keep a leading '"'); kString: unescaped
  int line = 1;
  int col = 1;
};

class Parser {
 public:
  Parser(std::string_view text, const std::map<std::string, NDArray>& side_table, std::string source)
      : src_(text), side_table_(side_table), source_(std::move(source)) {
    advance();
  }

  Graph parse() {
    expect_ident("graph");
    if (accept_punct("<")) parse_dim_decls();
    expect_punct("(");
    std::vector<NodePtr> inputs;
    if (!is_punct(")")) {
      do {
        Token name = expect(Tok::kValue, "an input name like %x");
        expect_punct(":");
        TensorType type = parse_type();
        claim_node_name(name);
        NodePtr node = make_input(display(name), type);
        define(name, node->output(0));
        inputs.push_back(node);
      } while (accept_punct(","));
    }
    expect_punct(")");
    expect_punct("{");
    while (!(cur_.kind == Tok::kIdent && cur_.text == "return")) parse_statement();
    advance();
    std::vector<Value> outputs;
    std::vector<std::string> names;
    do {
      outputs.push_back(use(expect(Tok::kValue, "a value like %3")));
      expect_ident("as");
      Token name = expect(Tok::kString, "an output name string");
      if (name.text.empty()) error(name, "a non-empty output name");
      if (std::find(names.begin(), names.end(), name.text) != names.end()) {
        error(name, "a new output name; \"" + name.text + "\" names an output already");
      }
      names.push_back(name.text);
    } while (accept_punct(","));
    expect_punct("}");
    if (cur_.kind != Tok::kEnd) error(cur_, "the end of the text");
    return Graph(std::move(inputs), std::move(outputs), std::move(names), dim_var_list_);
  }

 private:
  // ---- statements ----
  void parse_statement() {
    std::vector<Token> results{expect(Tok::kValue, "a statement like '%1 = relu(%0) : f32[4]' or 'return'")};
    while (accept_punct(",")) results.push_back(expect(Tok::kValue, "a result name"));
    expect_punct("=");
    Token op = expect(Tok::kIdent, "an operator name or 'constant'");
    if (op.text == "constant") {
      if (results.size() != 1) error(results[1], "one result for a constant");
      parse_constant(results[0]);
      return;
    }
    const OpDef* def = OpRegistry::global().find(op.text);
    if (def == nullptr) {
      throw UserError(UserErrorKind::kParse, where(op), "unknown operator '" + op.text + "'",
                      "registered operators are listed by OpRegistry::names()");
    }
    expect_punct("(");
    std::vector<Value> args;
    Attrs attrs;
    if (!is_punct(")")) {
      do {
        if (cur_.kind == Tok::kValue) {
          if (!attrs.values().empty()) error(cur_, "an attribute (arguments come before attributes)");
          args.push_back(use(cur_));
          advance();
        } else {
          Token key = expect(Tok::kIdent, "an argument %name or an attribute name=value");
          expect_punct("=");
          if (attrs.has(key.text)) error(key, "a new attribute name, not a repeat of '" + key.text + "'");
          attrs.set(key.text, parse_attr_value());
        }
      } while (accept_punct(","));
    }
    expect_punct(")");
    expect_punct(":");
    Token type_tok = cur_;
    std::vector<TensorType> types;
    if (accept_punct("(")) {
      do types.push_back(parse_type());
      while (accept_punct(","));
      expect_punct(")");
    } else {
      types.push_back(parse_type());
    }
    NodePtr node;
    try {
      node = make_call(*def, std::move(args), attrs);
    } catch (const UserError& e) {
      throw UserError(UserErrorKind::kParse, where(op), std::string(e.subject()) + ": " + e.reason(), e.hint());
    }
    if (node->output_types() != types) {
      std::string inferred;
      for (const auto& t : node->output_types()) inferred += (inferred.empty() ? "" : ", ") + t.to_string();
      throw UserError(UserErrorKind::kParse, where(type_tok), "the written type differs from the inferred type " + inferred);
    }
    if (static_cast<int>(results.size()) != node->num_outputs()) {
      throw UserError(UserErrorKind::kParse, where(results[0]),
                      op.text + " has " + std::to_string(node->num_outputs()) + " outputs, " +
                          std::to_string(results.size()) + " result names given");
    }
    for (int i = 0; i < node->num_outputs(); ++i) define(results[i], node->output(i));
  }

  void parse_constant(const Token& result) {
    Token start = cur_;
    NDArray data;
    std::vector<Number> values;
    std::string ref;
    uint64_t checksum = 0;
    if (accept(Tok::kAt)) {
      Token name = cur_;
      if (cur_.kind != Tok::kIdent && cur_.kind != Tok::kString) error(cur_, "a constant name after '@'");
      ref = cur_.text;
      advance();
      expect_punct("{");
      expect_ident("checksum");
      expect_punct("=");
      Token sum = expect(Tok::kIdent, "a hexadecimal checksum like 0x0123456789abcdef");
      char* end = nullptr;
      checksum = std::strtoull(sum.text.c_str(), &end, 16);
      if (sum.text.rfind("0x", 0) != 0 || *end != '\0') error(sum, "a hexadecimal checksum like 0x0123456789abcdef");
      expect_punct("}");
      start = name;
    } else {
      expect_punct("[");
      if (!is_punct("]")) {
        do values.push_back(parse_number());
        while (accept_punct(","));
      }
      expect_punct("]");
    }
    expect_punct(":");
    Token type_tok = cur_;
    TensorType type = parse_type();
    if (!type.is_static()) error(type_tok, "a static type for a constant");
    if (!ref.empty()) {
      auto it = side_table_.find(ref);
      if (it == side_table_.end()) {
        throw UserError(UserErrorKind::kParse, where(start), "constant '@" + ref + "' is not in the side table",
                        "pass the side table printed with the text");
      }
      data = it->second;
      if (data.type() != type) {
        throw UserError(UserErrorKind::kParse, where(type_tok),
                        "constant '@" + ref + "' has type " + data.type().to_string() + " in the side table");
      }
      if (data.checksum() != checksum) {
        throw UserError(UserErrorKind::kParse, where(start), "constant '@" + ref + "' data does not match its checksum");
      }
    } else {
      if (static_cast<int64_t>(values.size()) != type.numel()) {
        throw UserError(UserErrorKind::kParse, where(start),
                        "constant has " + std::to_string(values.size()) + " values, its type " + type.to_string() +
                            " needs " + std::to_string(type.numel()));
      }
      data = NDArray::empty(type.dtype, type.shape);
      for (size_t i = 0; i < values.size(); ++i) {
        if (type.dtype == DType::kI64 && values[i].is_int) {
          data.mutable_data<int64_t>()[i] = values[i].int_value;  // exact beyond 2^53
        } else if (type.dtype == DType::kU64 && values[i].is_int && values[i].int_value >= 0) {
          data.mutable_data<uint64_t>()[i] = static_cast<uint64_t>(values[i].int_value);
        } else {
          data.set_from_double(static_cast<int64_t>(i), values[i].value);
        }
      }
    }
    claim_node_name(result);
    define(result, make_constant(display(result), data)->output(0));
  }

  // ---- pieces ----
  TensorType parse_type() {
    Token t = expect(Tok::kIdent, "a tensor type like f32[1, 3]");
    TensorType type;
    if (!parse_dtype(t.text, &type.dtype)) error(t, "a dtype (f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64, bool)");
    expect_punct("[");
    // The element count and the byte size must fit in int64 (numel() and nbytes() multiply
    // unchecked, and a constant's values are counted against numel()). Symbolic dimensions are
    // checked against their size variables' upper bounds.
    const int64_t max_numel = std::numeric_limits<int64_t>::max() / static_cast<int64_t>(dtype_size(type.dtype));
    int64_t numel = 1;
    if (!is_punct("]")) {
      do {
        Token d = cur_;
        Dim dim = parse_dim();
        const int64_t v = dim.is_static() ? dim.value() : upper_bound(dim, d);
        if (v < 0) error(d, "a non-negative dimension");
        if (v != 0 && numel > max_numel / v) error(d, "a dimension that keeps the tensor's byte size within 64 bits");
        numel *= v;
        type.shape.push_back(dim);
      } while (accept_punct(","));
    }
    expect_punct("]");
    return type;
  }

  // ---- size variables and dimension expressions ----
  // graph<NAME: LO..HI, ...>
  void parse_dim_decls() {
    do {
      Token name = expect(Tok::kIdent, "a size variable name");
      if (!is_dim_var_name(name.text)) error(name, "a size variable name (letters, digits, '_')");
      if (is_dim_function(name.text)) error(name, "a size variable name that is not a function (floordiv, floormod, min, max)");
      if (dim_vars_.count(name.text)) error(name, "a new size variable; '" + name.text + "' is declared already");
      expect_punct(":");
      Token range = expect(Tok::kNumber, "a range LO..HI");
      const size_t dots = range.text.find("..");
      int64_t lo = 0, hi = 0;
      if (dots == std::string::npos || !parse_int(range.text.substr(0, dots), &lo) ||
          !parse_int(range.text.substr(dots + 2), &hi) || lo < 0 || lo > hi) {
        error(range, "a range LO..HI with 0 <= LO <= HI");
      }
      DimVar v = make_dim_var(name.text, lo, hi);
      dim_vars_[name.text] = v;
      dim_var_list_.push_back(v);
    } while (accept_punct(","));
    expect_punct(">");
  }

  static bool is_dim_function(const std::string& name) {
    return name == "floordiv" || name == "floormod" || name == "min" || name == "max";
  }

  static bool parse_int(const std::string& text, int64_t* out) {
    if (text.empty()) return false;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE) return false;
    *out = v;
    return true;
  }

  // The largest value of a symbolic dimension over its variables' declared ranges.
  int64_t upper_bound(const Dim& d, const Token& at) {
    tir::VarBounds bounds;
    for (const DimVar& v : dim_var_list_) bounds[v.var.node()] = tir::Interval::range(v.lo, v.hi);
    const tir::Interval r = tir::bound_of(d.expr(), bounds);
    if (!r.has_hi()) error(at, "a dimension bounded by its size variables' ranges");
    return r.hi;
  }

  // sum := product (('+' | '-') product)*;  product := atom ('*' atom)*
  // atom := INTEGER | NAME | FUNC '(' sum ',' sum ')' | '(' sum ')'
  // The lexer reads '+' and '-' as the start of a number: "+1" is the operator and a number.
  Dim parse_dim() { return Dim::of(parse_dim_sum()); }

  // At a list element that can only be a dimension expression: a size variable, a function, '('.
  bool starts_dim_expression() const {
    return is_punct("(") || (cur_.kind == Tok::kIdent && cur_.text != "inf" && cur_.text != "nan");
  }
  // After a number: an operator that continues it as an expression.
  bool continues_dim_expression() const {
    return is_punct("*") || (cur_.kind == Tok::kNumber && (cur_.text[0] == '+' || cur_.text[0] == '-'));
  }

  tir::Expr parse_dim_sum() { return parse_dim_sum_from(parse_dim_atom()); }

  // The rest of a sum whose first atom is `first`.
  tir::Expr parse_dim_sum_from(tir::Expr first) {
    tir::Expr e = parse_dim_product_rest(std::move(first));
    while (cur_.kind == Tok::kNumber && (cur_.text[0] == '+' || cur_.text[0] == '-')) {
      const bool minus = cur_.text[0] == '-';
      tir::Expr rhs;
      if (cur_.text.size() == 1) {
        advance();
        rhs = parse_dim_product();
      } else {
        Token t = cur_;
        int64_t v = 0;
        if (!parse_int(t.text.substr(1), &v)) error(t, "an integer");
        advance();
        rhs = parse_dim_product_rest(tir::make_int(v));
      }
      e = minus ? e - rhs : e + rhs;
    }
    return e;
  }

  tir::Expr parse_dim_product() { return parse_dim_product_rest(parse_dim_atom()); }

  tir::Expr parse_dim_product_rest(tir::Expr e) {
    while (accept_punct("*")) e = e * parse_dim_atom();
    return e;
  }

  tir::Expr parse_dim_atom() {
    Token t = cur_;
    if (t.kind == Tok::kNumber) {
      int64_t v = 0;
      if (!parse_int(t.text, &v) || v < 0) error(t, "a non-negative integer dimension (put spaces around + and - in an expression)");
      advance();
      return tir::make_int(v);
    }
    if (accept_punct("(")) {
      tir::Expr e = parse_dim_sum();
      expect_punct(")");
      return e;
    }
    if (t.kind != Tok::kIdent) error(t, "a dimension (an integer, a size variable or an expression)");
    advance();
    if (is_dim_function(t.text)) {
      expect_punct("(");
      tir::Expr a = parse_dim_sum();
      expect_punct(",");
      tir::Expr b = parse_dim_sum();
      expect_punct(")");
      if (t.text == "min") return tir::min(a, b);
      if (t.text == "max") return tir::max(a, b);
      int64_t divisor = 0;
      if (!tir::as_const_int(tir::simplify(b), &divisor) || divisor <= 0) error(t, t.text + " by a positive integer");
      return t.text == "floordiv" ? tir::floordiv(a, b) : tir::floormod(a, b);
    }
    auto it = dim_vars_.find(t.text);
    if (it == dim_vars_.end()) error(t, "a size variable declared in graph<...> ('" + t.text + "' is not)");
    return it->second.var;
  }

  struct Number {
    double value = 0;
    bool is_int = false;
    int64_t int_value = 0;  // exact, when is_int
  };

  Number parse_number() {
    Token t = cur_;
    if (t.kind == Tok::kIdent && (t.text == "inf" || t.text == "nan")) {
      advance();
      return {t.text == "inf" ? INFINITY : NAN, false, 0};
    }
    if (t.kind != Tok::kNumber) error(t, "a number");
    advance();
    if (t.text == "-inf") return {-INFINITY, false, 0};
    if (t.text == "-nan" || t.text == "+nan") return {NAN, false, 0};
    if (t.text == "+inf") return {INFINITY, false, 0};
    char* end = nullptr;
    Number n;
    n.value = std::strtod(t.text.c_str(), &end);
    if (*end != '\0') error(t, "a number");
    n.is_int = t.text.find_first_of(".eE") == std::string::npos;
    if (n.is_int) {
      errno = 0;
      n.int_value = std::strtoll(t.text.c_str(), &end, 10);
      if (errno == ERANGE) error(t, "an integer that fits in 64 bits");
    }
    return n;
  }

  AttrValue parse_attr_value() {
    if (cur_.kind == Tok::kString) {
      std::string s = cur_.text;
      advance();
      return s;
    }
    if (accept_punct("[")) {
      std::vector<double> values;
      std::vector<int64_t> ints;
      bool all_int = true;
      // A list with a size variable or an expression (`[batch, seq * 12, 64]`) is a shape.
      Shape dims;
      bool symbolic = false;
      if (!is_punct("]")) {
        do {
          if (!symbolic && starts_dim_expression()) {
            if (!all_int) error(cur_, "a number (a list mixes floats and dimensions)");
            symbolic = true;
            dims = Shape(ints);
          }
          if (symbolic) {
            dims.push_back(parse_dim());
            continue;
          }
          Number n = parse_number();
          if (n.is_int && n.int_value >= 0 && continues_dim_expression()) {
            symbolic = all_int;
            if (!symbolic) error(cur_, "',' or ']' (a list mixes floats and dimensions)");
            dims = Shape(ints);
            dims.push_back(Dim::of(parse_dim_sum_from(tir::make_int(n.int_value))));
            continue;
          }
          values.push_back(n.value);
          ints.push_back(n.int_value);
          all_int = all_int && n.is_int;
        } while (accept_punct(","));
      }
      expect_punct("]");
      if (symbolic) return dims;
      if (all_int) return ints;
      return values;
    }
    if (cur_.kind == Tok::kIdent && cur_.text != "inf" && cur_.text != "nan") {
      DType dtype;
      if (!parse_dtype(cur_.text, &dtype)) error(cur_, "an attribute value (number, \"string\", [list] or dtype)");
      advance();
      return dtype;
    }
    Number n = parse_number();
    if (n.is_int) return n.int_value;
    return n.value;
  }

  // ---- symbols ----
  static std::string display(const Token& t) { return t.text[0] == '"' ? t.text.substr(1) : t.text; }

  void define(const Token& name, Value value) {
    if (symbols_.count(name.text)) error(name, "a new name; %" + display(name) + " is already defined");
    symbols_[name.text] = std::move(value);
  }

  // Inputs and constants are named nodes: their names (%x and %"x" alike) must be unique.
  void claim_node_name(const Token& name) {
    if (!node_names_.insert(display(name)).second) {
      error(name, "a new name; an input or constant is already named \"" + display(name) + "\"");
    }
  }

  Value use(const Token& name) {
    auto it = symbols_.find(name.text);
    if (it == symbols_.end()) {
      throw UserError(UserErrorKind::kParse, where(name), "%" + display(name) + " is not defined before this use");
    }
    return it->second;
  }

  // ---- lexer ----
  void advance() {
    skip_space();
    cur_ = Token{};
    cur_.line = line_;
    cur_.col = col_;
    if (pos_ >= src_.size()) return;
    char c = src_[pos_];
    if (c == '%') {
      take();
      cur_.kind = Tok::kValue;
      if (pos_ < src_.size() && src_[pos_] == '"') {
        cur_.text = "\"" + lex_string();
      } else {
        cur_.text = lex_while([](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.'; });
        if (cur_.text.empty()) error(cur_, "a name after '%'");
      }
    } else if (c == '"') {
      cur_.kind = Tok::kString;
      cur_.text = lex_string();
    } else if (c == '@') {
      take();
      cur_.kind = Tok::kAt;
      cur_.text = "@";
    } else if (std::isdigit(static_cast<unsigned char>(c)) || ((c == '-' || c == '+') && pos_ + 1 < src_.size())) {
      if (c == '0' && pos_ + 1 < src_.size() && (src_[pos_ + 1] == 'x')) {
        cur_.kind = Tok::kIdent;  // hexadecimal checksum
        cur_.text = lex_while([](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; });
        return;
      }
      cur_.kind = Tok::kNumber;
      std::string text(1, take());
      text += lex_while([](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '+';
      });
      cur_.text = text;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      cur_.kind = Tok::kIdent;
      cur_.text = lex_while([](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.'; });
    } else if (std::string_view("(){}[],:=*<>").find(c) != std::string_view::npos) {
      cur_.kind = Tok::kPunct;
      cur_.text = std::string(1, take());
    } else {
      error(cur_, std::string("a token, not '") + c + "'");
    }
  }

  void skip_space() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') take();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        take();
      } else {
        break;
      }
    }
  }

  char take() {
    char c = src_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }

  template <typename Pred>
  std::string lex_while(Pred pred) {
    std::string out;
    while (pos_ < src_.size() && pred(src_[pos_])) out += take();
    return out;
  }

  std::string lex_string() {
    Token start = cur_;
    take();  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= src_.size()) error(start, "a closing '\"' for this string");
      char c = take();
      if (c == '"') break;
      if (c == '\\') {
        if (pos_ >= src_.size()) error(start, "a closing '\"' for this string");
        char e = take();
        out += e == 'n' ? '\n' : e;
      } else {
        out += c;
      }
    }
    return out;
  }

  // ---- helpers ----
  std::string where(const Token& t) const { return source_ + ":" + std::to_string(t.line) + ":" + std::to_string(t.col); }

  [[noreturn]] void error(const Token& t, const std::string& expected) const {
    std::string found = t.kind == Tok::kEnd ? "the end of the text" : "'" + (t.kind == Tok::kValue ? "%" + display(t) : t.text) + "'";
    throw UserError(UserErrorKind::kParse, where(t), "expected " + expected + ", found " + found);
  }

  bool is_punct(const char* p) const { return cur_.kind == Tok::kPunct && cur_.text == p; }
  bool accept_punct(const char* p) {
    if (!is_punct(p)) return false;
    advance();
    return true;
  }
  bool accept(Tok kind) {
    if (cur_.kind != kind) return false;
    advance();
    return true;
  }
  void expect_punct(const char* p) {
    if (!accept_punct(p)) error(cur_, std::string("'") + p + "'");
  }
  void expect_ident(const char* word) {
    if (cur_.kind != Tok::kIdent || cur_.text != word) error(cur_, std::string("'") + word + "'");
    advance();
  }
  Token expect(Tok kind, const std::string& what) {
    if (cur_.kind != kind) error(cur_, what);
    Token t = cur_;
    advance();
    return t;
  }

  std::string_view src_;
  const std::map<std::string, NDArray>& side_table_;
  std::string source_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  Token cur_;
  std::map<std::string, Value> symbols_;
  std::set<std::string> node_names_;  // display names of inputs and constants
  std::map<std::string, DimVar> dim_vars_;  // size variables by name
  std::vector<DimVar> dim_var_list_;        // ... in declared order
};

}  // namespace

Graph parse_graph(std::string_view text, const std::map<std::string, NDArray>& side_table, const std::string& source) {
  return Parser(text, side_table, source).parse();
}

}  // namespace kiln::ir
