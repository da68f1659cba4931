// How a measurement travels between processes (src/tune_measure/): the result a measuring child
// sends its parent over a pipe, and the options and result a Redis job and its answer carry.
// Binary parts use the artifact's little-endian encoding (kiln/runtime/artifact_format.h), so a
// result is read back bit-exactly on any machine Kiln runs on; options travel as readable text
// ("warmup=2 repeats=10 ...") so a job can be inspected with redis-cli.
#ifndef KILN_SRC_TUNE_MEASURE_MEASURE_WIRE_H_
#define KILN_SRC_TUNE_MEASURE_MEASURE_WIRE_H_

#include <string>

#include "kiln/tune/measure.h"

namespace kiln::tune::wire {

// The whole result (id, ok, error, seconds, runs, rejected, outputs). decode_result throws
// artifact::FormatError on a truncated or malformed message.
std::string encode_result(const MeasureResult& result);
MeasureResult decode_result(const std::string& bytes);

// "warmup=2 repeats=10 min_seconds=0.02 timeout_seconds=10 threads=1 seed=1 return_outputs=0".
// decode_options throws std::invalid_argument naming an unknown key or a bad value.
std::string encode_options(const MeasureOptions& options);
MeasureOptions decode_options(const std::string& text);

}  // namespace kiln::tune::wire

#endif  // KILN_SRC_TUNE_MEASURE_MEASURE_WIRE_H_
