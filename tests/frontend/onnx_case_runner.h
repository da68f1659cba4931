// The ONNX node-test case runner now lives in tools/node_suite/node_case.h (shared by the tests and
// the whole-suite runner kiln_node_suite); this header keeps the old include path working.
#ifndef KILN_TESTS_FRONTEND_ONNX_CASE_RUNNER_H_
#define KILN_TESTS_FRONTEND_ONNX_CASE_RUNNER_H_

#include "node_suite/node_case.h"

#endif  // KILN_TESTS_FRONTEND_ONNX_CASE_RUNNER_H_
