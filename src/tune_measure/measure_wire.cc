// Encoding of measurement options and results (measure_wire.h).
#include "measure_wire.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

#include "kiln/runtime/artifact_format.h"

namespace kiln::tune::wire {
namespace {

constexpr uint32_t kResultVersion = 1;

uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

double double_of(uint64_t b) {
  double v;
  std::memcpy(&v, &b, 8);
  return v;
}

}  // namespace

std::string encode_result(const MeasureResult& r) {
  artifact::Encoder e;
  e.u32(kResultVersion);
  e.str(r.id);
  e.u8(r.ok ? 1 : 0);
  e.str(r.error);
  e.u64(bits_of(r.seconds));
  e.u32(static_cast<uint32_t>(r.runs.size()));
  for (double t : r.runs) e.u64(bits_of(t));
  e.i32(r.rejected);
  e.u32(static_cast<uint32_t>(r.outputs.size()));
  for (const auto& o : r.outputs) e.str(std::string_view(o.data(), o.size()));
  return std::move(e.bytes());
}

MeasureResult decode_result(const std::string& bytes) {
  artifact::Decoder d(bytes, "measurement result");
  if (d.u32("version") != kResultVersion) d.fail("unknown measurement result version");
  MeasureResult r;
  r.id = d.str("id");
  r.ok = d.u8("ok") != 0;
  r.error = d.str("error");
  r.seconds = double_of(d.u64("seconds"));
  const uint32_t runs = d.count("runs", 8);
  for (uint32_t i = 0; i < runs; ++i) r.runs.push_back(double_of(d.u64("runs")));
  r.rejected = d.i32("rejected");
  const uint32_t outputs = d.count("outputs", 4);
  for (uint32_t i = 0; i < outputs; ++i) {
    const std::string o = d.str("outputs");
    r.outputs.emplace_back(o.begin(), o.end());
  }
  if (!d.at_end()) d.fail("trailing bytes");
  return r;
}

std::string encode_options(const MeasureOptions& o) {
  std::ostringstream s;
  s.precision(17);
  s << "warmup=" << o.warmup << " repeats=" << o.repeats << " min_seconds=" << o.min_seconds
    << " timeout_seconds=" << o.timeout_seconds << " threads=" << o.threads << " seed=" << o.seed
    << " return_outputs=" << (o.return_outputs ? 1 : 0) << " flush_cache=" << (o.flush_cache ? 1 : 0);
  return s.str();
}

MeasureOptions decode_options(const std::string& text) {
  MeasureOptions o;
  std::istringstream s(text);
  std::string item;
  while (s >> item) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("measure options: '" + item + "' is not key=value");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    try {
      if (key == "warmup") o.warmup = std::stoi(value);
      else if (key == "repeats") o.repeats = std::stoi(value);
      else if (key == "min_seconds") o.min_seconds = std::stod(value);
      else if (key == "timeout_seconds") o.timeout_seconds = std::stod(value);
      else if (key == "threads") o.threads = std::stoi(value);
      else if (key == "seed") o.seed = std::stoull(value);
      else if (key == "return_outputs") o.return_outputs = std::stoi(value) != 0;
      else if (key == "flush_cache") o.flush_cache = std::stoi(value) != 0;
      else throw std::invalid_argument("unknown key");
    } catch (const std::exception&) {
      throw std::invalid_argument("measure options: bad '" + item + "'");
    }
  }
  return o;
}

}  // namespace kiln::tune::wire
