// Helpers for the graph-pass tests: random inputs, running one pass, and comparing a graph's
// outputs before and after a rewrite on the reference executor.
#ifndef KILN_TESTS_PASS_PASS_TEST_UTIL_H_
#define KILN_TESTS_PASS_PASS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "kiln/ir/graph.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/pass/pass.h"
#include "kiln/ref/executor.h"

namespace kiln::pass::testing {

using namespace kiln::ir;

inline NDArray random_array(const TensorType& type, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  NDArray a = NDArray::empty(type.dtype, type.shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, dist(rng));
  return a;
}

// A constant of `shape` with deterministic random values.
inline NodePtr random_constant(const std::string& name, Shape shape, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  return make_constant(name, random_array({DType::kF32, std::move(shape)}, seed, lo, hi));
}

// Runs one pass (through the manager: timing, verification).
inline Graph run_one(const std::string& pass, const Graph& graph, PassOptions options = {}) {
  options.verify_each_pass = true;
  return run_passes(graph, {pass}, options).graph;
}

inline int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.topo_order()) {
    n += node->kind() == NodeKind::kCall && node->as_call().op().name == op ? 1 : 0;
  }
  return n;
}

// Max relative error of `actual` against `expected`: max|a - e| / max(max|e|, 1e-30). Prints the
// worst element on failure.
inline ::testing::AssertionResult close_outputs(const std::vector<NDArray>& actual, const std::vector<NDArray>& expected,
                                                double max_rel) {
  if (actual.size() != expected.size()) return ::testing::AssertionFailure() << "output counts differ";
  for (size_t k = 0; k < actual.size(); ++k) {
    if (actual[k].type() != expected[k].type()) {
      return ::testing::AssertionFailure() << "output " << k << " type " << actual[k].type().to_string() << " vs "
                                           << expected[k].type().to_string();
    }
    double max_diff = 0, max_ref = 1e-30;
    int64_t worst = 0;
    for (int64_t i = 0; i < expected[k].numel(); ++i) {
      const double a = actual[k].get_as_double(i), e = expected[k].get_as_double(i);
      const double d = std::isnan(a) != std::isnan(e) ? INFINITY : (std::isnan(a) ? 0 : std::abs(a - e));
      if (d > max_diff) {
        max_diff = d;
        worst = i;
      }
      max_ref = std::max(max_ref, std::abs(e));
    }
    if (max_diff / max_ref > max_rel) {
      return ::testing::AssertionFailure() << "output " << k << ": max|actual - expected| / max|expected| = "
                                           << max_diff / max_ref << " > " << max_rel << "; worst index " << worst
                                           << ": actual " << actual[k].get_as_double(worst) << ", expected "
                                           << expected[k].get_as_double(worst);
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs both graphs on the same random inputs and compares (relative error as close_outputs).
inline ::testing::AssertionResult same_results(const Graph& before, const Graph& after, double max_rel = 0.0,
                                               uint64_t seed = 7) {
  std::vector<std::string> problems = verify_graph(after);
  if (!problems.empty()) return ::testing::AssertionFailure() << "verifier: " << problems[0];
  std::vector<NDArray> inputs;
  for (const auto& in : before.inputs()) inputs.push_back(random_array(in->as_input().type(), seed++));
  return close_outputs(ref::run_graph(after, inputs), ref::run_graph(before, inputs), max_rel);
}

// Text round trip: the printed graph parses back to a structurally equal graph.
inline ::testing::AssertionResult round_trips(const Graph& g) {
  GraphText text = print_graph(g);
  Graph back = parse_graph(text.text, text.side_table);
  std::string why;
  if (!structurally_equal(g, back, &why)) return ::testing::AssertionFailure() << why << "\n" << text.text;
  return ::testing::AssertionSuccess();
}

}  // namespace kiln::pass::testing

#endif  // KILN_TESTS_PASS_PASS_TEST_UTIL_H_
