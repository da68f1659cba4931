// Run by CTest with KILN_LOG set (see tests.cmake): logs one message per component and level, so
// the test can check which ones the environment's filter let through.
#include "kiln/support/logging.h"

int main() {
  KILN_LOG(codegen, kDebug) << "codegen debug message";
  KILN_LOG(codegen, kTrace) << "codegen trace message";
  KILN_LOG(ir, kInfo) << "ir info message";
  KILN_LOG(ir, kWarning) << "ir warning message";
  return 0;
}
