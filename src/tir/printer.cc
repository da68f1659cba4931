// The loop IR's text form. Infix operators are printed with the fewest parentheses that keep
// the meaning: * binds tighter than + and -, which bind tighter than comparisons, then && and ||.
#include "kiln/tir/printer.h"

#include <cmath>
#include <sstream>
#include <unordered_map>

#include "kiln/ir/tensor_type.h"
#include "kiln/support/error.h"
#include "kiln/tir/ir_visitor.h"
#include "kiln/tir/tensor.h"

namespace kiln::tir {
namespace {

// Precedence of an infix node (lower binds tighter); 0 for atoms and calls.
int precedence(const Expr& e) {
  switch (e.kind()) {
    case IRNodeKind::kMul:
    case IRNodeKind::kDiv: return 2;
    case IRNodeKind::kAdd:
    case IRNodeKind::kSub: return 3;
    case IRNodeKind::kLT:
    case IRNodeKind::kLE:
    case IRNodeKind::kGT:
    case IRNodeKind::kGE: return 4;
    case IRNodeKind::kEQ:
    case IRNodeKind::kNE: return 5;
    case IRNodeKind::kAnd: return 6;
    case IRNodeKind::kOr: return 7;
    default: return 0;
  }
}

class Printer : public IRVisitor {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}

  void print(const Expr& e) {
    if (!e.defined()) {
      os_ << "<undefined>";
      return;
    }
    visit_expr(e);
  }
  void print(const Stmt& s) {
    if (!s.defined()) return;
    visit_stmt(s);
  }

 protected:
  void infix(const Expr& self, const Expr& a, const char* sym, const Expr& b) {
    const int p = precedence(self);
    const int pa = precedence(a), pb = precedence(b);
    paren(a, pa > p);
    os_ << " " << sym << " ";
    paren(b, pb >= p && pb != 0);
  }
  void paren(const Expr& e, bool need) {
    if (need) os_ << "(";
    print(e);
    if (need) os_ << ")";
  }
  void call(const char* name, std::initializer_list<Expr> args) {
    os_ << name << "(";
    bool first = true;
    for (const Expr& a : args) {
      if (!first) os_ << ", ";
      first = false;
      print(a);
    }
    os_ << ")";
  }

  void visit(const IntImm* op) override {
    if (op->type.is_bool()) {
      os_ << (op->value ? "true" : "false");
    } else if (op->type == kIndexType) {
      os_ << op->value;
    } else {
      os_ << "(" << op->type.to_string() << ")" << op->value;
    }
  }
  void visit(const FloatImm* op) override {
    std::ostringstream s;
    s.precision(op->type.dtype == DType::kF64 ? 17 : 9);
    s << op->value;
    std::string text = s.str();
    if (std::isfinite(op->value) && text.find_first_of(".e") == std::string::npos) text += ".0";
    if (!std::isfinite(op->value)) {
      os_ << "(" << op->type.to_string() << ")" << text;  // (f32)-inf, (f32)nan
    } else if (op->type.dtype == DType::kF32) {
      os_ << text << "f";
    } else if (op->type.dtype == DType::kF64) {
      os_ << text;
    } else {
      os_ << "(" << op->type.to_string() << ")" << text;
    }
  }
  void visit(const Variable* op) override { os_ << name_of(op); }

  // Distinct variables that share a name print as name, name_1, name_2 ... (in order of first
  // appearance), so the text never shows two different loops as one.
  const std::string& name_of(const Variable* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    int& count = used_[v->name];
    std::string n = count == 0 ? v->name : v->name + "_" + std::to_string(count);
    ++count;
    return names_[v] = n;
  }
  void visit(const Add* op) override { infix(op, op->a, "+", op->b); }
  void visit(const Sub* op) override { infix(op, op->a, "-", op->b); }
  void visit(const Mul* op) override { infix(op, op->a, "*", op->b); }
  void visit(const Div* op) override { infix(op, op->a, "/", op->b); }
  void visit(const FloorDiv* op) override { call("floordiv", {op->a, op->b}); }
  void visit(const FloorMod* op) override { call("floormod", {op->a, op->b}); }
  void visit(const Min* op) override { call("min", {op->a, op->b}); }
  void visit(const Max* op) override { call("max", {op->a, op->b}); }
  void visit(const EQ* op) override { infix(op, op->a, "==", op->b); }
  void visit(const NE* op) override { infix(op, op->a, "!=", op->b); }
  void visit(const LT* op) override { infix(op, op->a, "<", op->b); }
  void visit(const LE* op) override { infix(op, op->a, "<=", op->b); }
  void visit(const GT* op) override { infix(op, op->a, ">", op->b); }
  void visit(const GE* op) override { infix(op, op->a, ">=", op->b); }
  void visit(const And* op) override { infix(op, op->a, "&&", op->b); }
  void visit(const Or* op) override { infix(op, op->a, "||", op->b); }
  void visit(const Not* op) override {
    os_ << "!";
    paren(op->a, precedence(op->a) != 0);
  }
  void visit(const Select* op) override { call("select", {op->condition, op->true_value, op->false_value}); }
  void visit(const Cast* op) override { call(op->type.to_string().c_str(), {op->value}); }
  void visit(const Call* op) override {
    os_ << call_op_name(op->op) << "(";
    for (size_t i = 0; i < op->args.size(); ++i) {
      if (i) os_ << ", ";
      print(op->args[i]);
    }
    os_ << ")";
  }
  void visit(const Load* op) override {
    os_ << op->buffer->name << "[";
    print(op->index);
    os_ << "]";
  }
  void visit(const Ramp* op) override {
    os_ << "ramp(";
    print(op->base);
    os_ << ", ";
    print(op->stride);
    os_ << ", " << op->lanes << ")";
  }
  void visit(const Broadcast* op) override {
    os_ << "x" << op->lanes << "(";
    print(op->value);
    os_ << ")";
  }
  void visit(const Let* op) override {
    os_ << "(let " << name_of(op->var.node()) << " = ";
    print(op->value);
    os_ << " in ";
    print(op->body);
    os_ << ")";
  }
  void visit(const TensorLoad* op) override {
    os_ << op->op->name << "(";
    for (size_t i = 0; i < op->indices.size(); ++i) {
      if (i) os_ << ", ";
      print(op->indices[i]);
    }
    os_ << ")";
  }
  void visit(const Reduce* op) override {
    os_ << reduce_op_name(op->op) << "(";
    print(op->source);
    os_ << ", axis=[";
    for (size_t i = 0; i < op->axis.size(); ++i) {
      if (i) os_ << ", ";
      os_ << name_of(op->axis[i].var().node());
    }
    os_ << "])";
  }

  // ---- statements ----
  void indent() {
    for (int i = 0; i < indent_; ++i) os_ << "  ";
  }
  void body(const Stmt& s) {
    os_ << " {\n";
    ++indent_;
    print(s);
    --indent_;
    indent();
    os_ << "}\n";
  }

  void visit(const For* op) override {
    indent();
    if (op->kind != ForKind::kSerial) os_ << for_kind_name(op->kind) << " ";
    os_ << "for (" << name_of(op->loop_var.node()) << ", ";
    print(op->min);
    os_ << ", ";
    print(op->extent);
    os_ << ")";
    body(op->body);
  }
  void visit(const Store* op) override {
    indent();
    os_ << op->buffer->name << "[";
    print(op->index);
    os_ << "] = ";
    print(op->value);
    os_ << "\n";
  }
  void visit(const LetStmt* op) override {
    indent();
    os_ << "let " << name_of(op->var.node()) << " = ";
    print(op->value);
    os_ << "\n";
    print(op->body);
  }
  void visit(const IfThenElse* op) override {
    indent();
    os_ << "if (";
    print(op->condition);
    os_ << ")";
    body(op->then_case);
    if (op->else_case.defined()) {
      indent();
      os_ << "else";
      body(op->else_case);
    }
  }
  void visit(const Allocate* op) override {
    indent();
    os_ << "allocate " << op->buffer->name << "[" << ir::dtype_name(op->buffer->dtype) << " * "
        << op->buffer->numel() << "] " << memory_scope_name(op->scope) << " align " << op->alignment;
    body(op->body);
  }
  void visit(const Block* op) override {
    for (const Stmt& s : op->stmts) print(s);
  }
  void visit(const Evaluate* op) override {
    indent();
    print(op->value);
    os_ << "\n";
  }
  void visit(const ProducerStore* op) override {
    indent();
    os_ << op->op->name << "(";
    for (size_t i = 0; i < op->indices.size(); ++i) {
      if (i) os_ << ", ";
      print(op->indices[i]);
    }
    os_ << ") = ";
    print(op->value);
    os_ << "\n";
  }
  void visit(const ProducerRealize* op) override {
    indent();
    os_ << "realize " << op->op->name << "(";
    for (size_t i = 0; i < op->bounds.size(); ++i) {
      if (i) os_ << ", ";
      os_ << "[";
      print(op->bounds[i].min);
      os_ << ", ";
      print(op->bounds[i].extent);
      os_ << "]";
    }
    os_ << ") " << memory_scope_name(op->scope);
    body(op->body);
  }

 private:
  std::ostream& os_;
  int indent_ = 0;
  std::unordered_map<const Variable*, std::string> names_;
  std::unordered_map<std::string, int> used_;
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  Printer(os).print(e);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  Printer(os).print(s);
  return os;
}

std::ostream& operator<<(std::ostream& os, const PrimFunc& f) {
  os << "func " << f->name << "(";
  for (size_t i = 0; i < f->params.size(); ++i) {
    if (i) os << ", ";
    os << f->params[i]->name << ": " << ir::dtype_name(f->params[i]->dtype) << ir::shape_to_string(f->params[i]->shape);
  }
  os << ") {\n";
  std::ostringstream body;
  Printer(body).print(f->body);
  std::istringstream lines(body.str());
  for (std::string line; std::getline(lines, line);) os << "  " << line << "\n";
  os << "}\n";
  return os;
}

std::string to_string(const Expr& e) {
  std::ostringstream s;
  s << e;
  return s.str();
}
std::string to_string(const Stmt& s) {
  std::ostringstream o;
  o << s;
  return o.str();
}
std::string to_string(const PrimFunc& f) {
  std::ostringstream o;
  o << f;
  return o.str();
}

}  // namespace kiln::tir
