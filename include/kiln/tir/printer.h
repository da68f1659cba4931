// Human-readable text of the loop IR, for debugging, logs and tests that check a loop nest's shape.
// Format (stable; tests compare it): infix arithmetic with full parentheses only where needed,
// `floordiv(a, b)`, `floormod(a, b)`, `B[i]` loads, `for (i, 0, 16) parallel {` ... `}`.
#ifndef KILN_TIR_PRINTER_H_
#define KILN_TIR_PRINTER_H_

#include <ostream>
#include <string>

#include "kiln/tir/stmt.h"

namespace kiln::tir {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);
std::string to_string(const PrimFunc& f);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

}  // namespace kiln::tir

#endif  // KILN_TIR_PRINTER_H_
