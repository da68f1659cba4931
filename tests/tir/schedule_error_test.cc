// Every user-facing error of schedules, lowering and the interpreter, and the debug dump of the
// lowering steps.
#include <gtest/gtest.h>

#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/tir/interpreter.h"
#include "kiln/tir/lower.h"
#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

struct Pipeline {
  Tensor a = placeholder({8, 8}, DType::kF32, "A");
  IterVar k = reduce_axis(8, "k");
  Tensor b = compute({8, 8}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) + 1.0f; }, "B", {"i", "j"});
  Tensor r = compute({8}, [&](const std::vector<Var>& i) { return sum(b(i[0], k), {k}); }, "R", {"i"});
  Tensor c = compute({8}, [&](const std::vector<Var>& i) { return r(i[0]) * 2.0f; }, "C", {"i"});
};

// Runs `fn`, expects a UserError of `kind` whose text contains `piece`.
template <typename Fn>
void expect_user_error(Fn fn, UserErrorKind kind, const std::string& piece) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << piece << "'";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
  }
}

TEST(ScheduleErrorTest, AxisMisuse) {
  Pipeline p;
  Schedule s({p.c});
  Stage sb = s[p.b];
  IterVar i = sb.axis(0);
  sb.split(i, 4);
  expect_user_error([&] { sb.split(i, 2); }, UserErrorKind::kInvalidArgument, "axis 'i' is not a current loop");
  expect_user_error([&] { sb.split(sb.axis(1), 0); }, UserErrorKind::kInvalidArgument, "factor 0");
  expect_user_error([&] { sb.split_nparts(sb.axis(1), -1); }, UserErrorKind::kInvalidArgument, "-1 parts");
  expect_user_error([&] { sb.axis(2); }, UserErrorKind::kInvalidArgument, "has no axis 2");
  expect_user_error([&] { s[p.r].reduce_axis(1); }, UserErrorKind::kInvalidArgument, "has no reduction axis 1");
  const auto& leaf = sb.leaf_axes();  // i.outer, i.inner, j
  expect_user_error([&] { sb.fuse(leaf[0], leaf[2]); }, UserErrorKind::kInvalidArgument, "not immediately outside");
  expect_user_error([&] { sb.reorder({leaf[0], leaf[0]}); }, UserErrorKind::kInvalidArgument, "twice");
  expect_user_error([&] { s[p.r].vectorize(s[p.r].reduce_axis(0)); }, UserErrorKind::kInvalidArgument,
                    "would race on the accumulator");
  expect_user_error([&] { s[p.c].vectorize(sb.axis(1)); }, UserErrorKind::kInvalidArgument, "is not a current loop");
  expect_user_error([&] { s[p.a]; }, UserErrorKind::kNotFound, "has no stage");
}

TEST(ScheduleErrorTest, AttachmentMisuse) {
  Pipeline p;
  Schedule s({p.c});
  expect_user_error([&] { s[p.c].compute_inline(); }, UserErrorKind::kInvalidArgument, "compute_inline of an output");
  expect_user_error([&] { s[p.r].compute_inline(); }, UserErrorKind::kInvalidArgument, "compute_inline of a reduction");
  Tensor other = compute({8}, [&](const std::vector<Var>& i) { return p.a(i[0], i[0]); }, "Other");
  Schedule so({p.c, other});
  expect_user_error([&] { so[p.b].compute_at(so[other], so[other].axis(0)); }, UserErrorKind::kInvalidArgument,
                    "stage 'Other' does not read it");
  {
    // C reads B only through R, which is computed at the root: nothing inside C's loop reads B.
    Pipeline q;
    Schedule t({q.c});
    t[q.b].compute_at(t[q.c], t[q.c].axis(0));
    expect_user_error([&] { lower(t, {q.a, q.c}, "k"); }, UserErrorKind::kInvalidArgument,
                      "neither that stage nor a stage attached to it reads it");
  }
  {
    // B inside C's inner loop, but its reader R outside it.
    Pipeline q;
    Schedule t({q.c});
    auto [o, i] = t[q.c].split(t[q.c].axis(0), 2);
    t[q.r].compute_at(t[q.c], o);
    t[q.b].compute_at(t[q.c], i);
    expect_user_error([&] { lower(t, {q.a, q.c}, "k"); }, UserErrorKind::kInvalidArgument,
                      "its reader 'R' is computed outside that loop");
  }
  expect_user_error([&] { s[p.c].compute_at(s[p.r], s[p.r].axis(0)); }, UserErrorKind::kInvalidArgument,
                    "compute_at of an output");
  s[p.b].split(s[p.b].axis(0), 2);
  expect_user_error([&] { s.cache_write(p.b); }, UserErrorKind::kInvalidArgument, "cache_write must come before");
  // Nested attachment lowers: B inside R's loop, R inside C's loop.
  Pipeline q;
  Schedule t({q.c});
  t[q.b].compute_at(t[q.r], t[q.r].axis(0));
  t[q.r].compute_at(t[q.c], t[q.c].axis(0));
  EXPECT_NO_THROW(lower(t, {q.a, q.c}, "ok"));
  // X attached to Y, but Y is inlined away: X has no loop to live in.
  Tensor a = placeholder({4}, DType::kF32, "A");
  Tensor x = compute({4}, [&](const std::vector<Var>& i) { return a(i[0]) + 1.0f; }, "X");
  Tensor y = compute({4}, [&](const std::vector<Var>& i) { return x(i[0]) * 2.0f; }, "Y");
  Tensor z = compute({4}, [&](const std::vector<Var>& i) { return y(i[0]) + 3.0f; }, "Z");
  Schedule u({z});
  u[x].compute_at(u[y], u[y].axis(0));
  u[y].compute_inline();
  expect_user_error([&] { lower(u, {a, z}, "k"); }, UserErrorKind::kInvalidArgument, "stage 'X'");
}

TEST(ScheduleErrorTest, LowerArgumentErrors) {
  Pipeline p;
  Schedule s({p.c});
  expect_user_error([&] { lower(s, {p.c}, "k"); }, UserErrorKind::kInvalidArgument, "tensor 'A'");
  expect_user_error([&] { lower(s, {p.a}, "k"); }, UserErrorKind::kInvalidArgument, "output 'C' is not among");
  expect_user_error([&] { lower(s, {p.a, p.b, p.c}, "k"); }, UserErrorKind::kInvalidArgument, "intermediate compute");
  expect_user_error([&] { lower(s, {p.a, p.a, p.c}, "k"); }, UserErrorKind::kInvalidArgument, "passed twice");
  expect_user_error([&] { Schedule bad({p.a}); }, UserErrorKind::kInvalidArgument, "is not a compute");
}

TEST(ScheduleErrorTest, NestedParallelLoopsAreRejected) {
  Pipeline p;
  Schedule s({p.b});
  s[p.b].parallel(s[p.b].axis(0)).parallel(s[p.b].axis(1));
  expect_user_error([&] { lower(s, {p.a, p.b}, "k"); }, UserErrorKind::kUnsupported, "parallel inside another parallel");
}

TEST(ScheduleErrorTest, InterpreterChecksArguments) {
  Pipeline p;
  Schedule s({p.b});
  PrimFunc f = lower(s, {p.a, p.b}, "k");
  ir::NDArray a = ir::NDArray::empty(DType::kF32, {8, 8});
  expect_user_error([&] { interpret(f, {a}); }, UserErrorKind::kInvalidArgument, "takes 2 buffers, got 1");
  expect_user_error([&] { interpret(f, {a, ir::NDArray::empty(DType::kF32, {8, 7})}); },
                    UserErrorKind::kInvalidArgument, "expects f32[8, 8], got f32[8, 7]");
}

TEST(ScheduleErrorTest, InterpreterCatchesOutOfBoundsAccess) {
  Buffer b = Buffer::make("B", DType::kF32, {4});
  Var i("i");
  PrimFunc f = PrimFunc::make("oob", {b}, For::make(i, make_int(0), make_int(5), ForKind::kSerial,
                                                    Store::make(b, make_const(Type(DType::kF32), 1), i)));
  try {
    interpret(f, {ir::NDArray::empty(DType::kF32, {4})});
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("out-of-bounds access B[4], size 4"), std::string::npos) << e.what();
  }
}

TEST(ScheduleErrorTest, StepsArePrintableData) {
  Pipeline p;
  Schedule s({p.c});
  auto [o, i] = s[p.c].split(s[p.c].axis(0), 4);
  s[p.c].parallel(o);
  s[p.r].compute_at(s[p.c], o);
  s[p.b].compute_inline();
  EXPECT_EQ(s.to_string(),
            "split(C, i, factor=4) -> i.outer, i.inner\n"
            "parallel(C, i.outer)\n"
            "compute_at(R, C, i.outer)\n"
            "compute_inline(B)\n");
}

TEST(ScheduleErrorTest, LoweringStepsAreLoggedAtDebugLevel) {
  Pipeline p;
  Schedule s({p.c});
  set_log_spec("tir=debug");
  ::testing::internal::CaptureStderr();
  lower(s, {p.a, p.c}, "logged");
  const std::string err = ::testing::internal::GetCapturedStderr();
  set_log_spec("warning");
  for (const char* step : {"after schedule_ops", "after storage_flatten", "after simplify", "after vectorize_loops",
                           "after unroll_loops"}) {
    EXPECT_NE(err.find(std::string("logged: ") + step), std::string::npos) << step << "\n" << err;
  }
  EXPECT_NE(err.find("(unchanged)"), std::string::npos) << err;
  EXPECT_NE(err.find("realize B("), std::string::npos) << err;  // TE-level dump before flattening
}

}  // namespace
}  // namespace kiln::tir

namespace kiln::tir {
namespace {

TEST(ScheduleReplayTest, ReplayingTheStepsReproducesTheLoopNest) {
  Pipeline p;
  Schedule s({p.c});
  Tensor local = s.cache_write(p.c);
  auto [o, i] = s[p.c].split(s[p.c].axis(0), 4);
  s[p.c].parallel(o);
  s[local].compute_at(s[p.c], o);
  s[p.b].compute_inline();
  auto [lo, li] = s[local].split(s[local].axis(0), 2);
  s[local].unroll(li);
  auto [ko, ki] = s[p.r].split_nparts(s[p.r].reduce_axis(0), 2);
  s[p.r].fuse(ko, ki);
  Schedule t({p.c});
  std::string text = s.to_string();
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    t.apply(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  EXPECT_EQ(t.to_string(), text);
  EXPECT_EQ(to_string(lower(t, {p.a, p.c}, "k")), to_string(lower(s, {p.a, p.c}, "k")));
}

TEST(ScheduleReplayTest, MalformedOrUnknownStepsAreErrors) {
  Pipeline p;
  Schedule s({p.c});
  expect_user_error([&] { s.apply("split C"); }, UserErrorKind::kParse, "expected primitive(arguments)");
  expect_user_error([&] { s.apply("split(C, i, by=3)"); }, UserErrorKind::kParse, "factor=N or nparts=N");
  expect_user_error([&] { s.apply("split(C, i, factor=x)"); }, UserErrorKind::kParse, "is not an integer");
  expect_user_error([&] { s.apply("twist(C, i)"); }, UserErrorKind::kParse, "unknown primitive 'twist'");
  expect_user_error([&] { s.apply("fuse(C, i)"); }, UserErrorKind::kParse, "takes 3 arguments");
  expect_user_error([&] { s.apply("parallel(D, i)"); }, UserErrorKind::kNotFound, "no stage named 'D'");
  expect_user_error([&] { s.apply("parallel(C, q)"); }, UserErrorKind::kNotFound, "no loop named 'q'");
  expect_user_error([&] { s.apply("cache_write(C, l2)"); }, UserErrorKind::kParse, "unknown memory scope");
}

}  // namespace
}  // namespace kiln::tir
