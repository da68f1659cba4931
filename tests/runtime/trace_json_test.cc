// The trace's JSON (src/runtime/trace_json.h) on injected events: strings escaped for JSON and
// invalid UTF-8 replaced, one complete event per launch carrying the plan's facts, threads named
// once. (tests/python/test_cli_run.py parses whole trace files of real runs with Python's json.)
#include "runtime/trace_json.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using kiln::runtime::format_trace_json;
using kiln::runtime::json_string;
using kiln::runtime::TraceEvent;
namespace artifact = kiln::artifact;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(TraceJsonTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_string("conv2d+add"), "\"conv2d+add\"");
  EXPECT_EQ(json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_string(std::string("x\ny\tz\x01\x7f", 7)), "\"x\\u000ay\\u0009z\\u0001\\u007f\"");
  EXPECT_EQ(json_string(std::string("nul\0end", 7)), "\"nul\\u0000end\"");
}

TEST(TraceJsonTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(json_string("gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x94\xa5"), "\"gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x94\xa5\"");
  EXPECT_EQ(json_string("\xff"), "\"\\ufffd\"");
  EXPECT_EQ(json_string("a\xc3"), "\"a\\ufffd\"");                    // truncated sequence
  EXPECT_EQ(json_string("\xc0\xaf"), "\"\\ufffd\\ufffd\"");           // overlong '/'
  EXPECT_EQ(json_string("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
  EXPECT_EQ(json_string("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // past U+10FFFF
}

TEST(TraceJsonTest, OneCompleteEventPerLaunchWithThePlansFacts) {
  artifact::Plan plan;
  plan.tensors.push_back({"in\"put", artifact::TensorKind::kInput, {kDLFloat, 32, 1}, {1, 4}, -1, 0, 16});
  plan.tensors.push_back({"out", artifact::TensorKind::kOutput, {kDLInt, 8, 1}, {4}, -1, 0, 4});
  plan.kernels.push_back({"kiln_fused_0", "matmul+relu", {0, 1}, 32, artifact::OpKind::kFloat});
  plan.kernels.push_back({"kiln_q_1", "", {1, 1}, 8, artifact::OpKind::kInt8});
  const std::vector<TraceEvent> events = {
      {0, 0, 1.0, 2.5, 77}, {1, 0, 3.5, 0.25, 77}, {-1, 0, 0.5, 4.0, 77},
      {0, 1, 10.0, 2.0, 78}, {1, 1, 12.0, 0.5, 78}, {-1, 1, 9.5, 4.0, 78}};
  const std::string json = format_trace_json(plan, events, "kiln: m\xff.so");

  EXPECT_EQ(json.rfind("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [", 0), 0u);
  EXPECT_EQ(count(json, "\"ph\": \"X\""), 6u);
  EXPECT_EQ(count(json, "\"cat\": \"kernel\""), 4u);
  EXPECT_EQ(count(json, "\"cat\": \"run\""), 2u);
  EXPECT_EQ(count(json, "\"name\": \"thread_name\""), 2u);  // one per thread, not per event
  EXPECT_NE(json.find("\"args\": {\"name\": \"kiln: m\\ufffd.so\"}"), std::string::npos);
  EXPECT_NE(json.find("{\"name\": \"matmul+relu\", \"cat\": \"kernel\", \"ph\": \"X\", \"ts\": 1.000, "
                      "\"dur\": 2.500, \"pid\": 1, \"tid\": 77, \"args\": {\"symbol\": \"kiln_fused_0\", "
                      "\"step\": 1, \"run\": 0, \"flops\": 32, \"op_kind\": \"float\", \"bytes\": 20, "
                      "\"tensors\": [\"in\\\"put: f32[1, 4]\", \"out: i8[4]\"]}}"),
            std::string::npos)
      << json;
  // A kernel without fused ops is named by its symbol; int8 counts say so.
  EXPECT_NE(json.find("{\"name\": \"kiln_q_1\", \"cat\": \"kernel\""), std::string::npos);
  EXPECT_NE(json.find("\"op_kind\": \"int8\", \"bytes\": 8"), std::string::npos);
  EXPECT_NE(json.find("{\"name\": \"run 1\", \"cat\": \"run\", \"ph\": \"X\", \"ts\": 9.500, \"dur\": 4.000, "
                      "\"pid\": 1, \"tid\": 78, \"args\": {\"run\": 1, \"kernels\": 2}}"),
            std::string::npos);
  EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
}

TEST(TraceJsonTest, NoEventsIsStillAValidTrace) {
  const std::string json = format_trace_json(artifact::Plan{}, {}, "kiln");
  EXPECT_EQ(json, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n{\"name\": \"process_name\", \"ph\": \"M\", "
                  "\"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"kiln\"}}\n]}\n");
}

}  // namespace
