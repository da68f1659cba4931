// libFuzzer target: libkiln_runtime's C API with random shapes and dtypes. Each input drives
// kiln_tensor_alloc / nbytes / to_dlpack / free with arbitrary ndim, dims and dtypes, and, on the
// artifact named by $KILN_FUZZ_ARTIFACT (loaded once; scripts/fuzz.sh compiles tiny-cnn), binds
// such tensors as inputs (by index and by name, with and without a matching spec) and runs the
// executor when they fit. Every call must return 0 or -1 with a message; a fitting input must run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/runtime/c_api.h"

namespace {

struct Reader {
  const uint8_t* p;
  size_t n;
  template <typename T>
  T take() {
    T v{};
    const size_t k = n < sizeof(T) ? n : sizeof(T);
    std::memcpy(&v, p, k);
    p += k;
    n -= k;
    return v;
  }
};

void check(int rc) {
  if (rc != 0 && (kiln_get_last_error() == nullptr || kiln_get_last_error()[0] == '\0')) std::abort();
}

KilnModule* module_once() {
  static KilnModule* m = [] {
    KilnModule* mod = nullptr;
    const char* path = std::getenv("KILN_FUZZ_ARTIFACT");
    if (path != nullptr && kiln_module_load(path, &mod) != 0) {
      std::fprintf(stderr, "fuzz_runtime_api: cannot load %s: %s\n", path, kiln_get_last_error());
      std::abort();
    }
    return mod;
  }();
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  const auto mode = r.take<uint8_t>();
  int32_t ndim = static_cast<int8_t>(r.take<uint8_t>()) % 9;
  std::vector<int64_t> shape(ndim > 0 ? ndim : 0);
  for (auto& d : shape) {
    const auto raw = r.take<uint16_t>();
    d = (raw & 0x8000) ? static_cast<int64_t>(r.take<uint64_t>()) : raw % 64;
  }
  DLDataType dtype{r.take<uint8_t>(), r.take<uint8_t>(), r.take<uint16_t>()};
  KilnModule* m = module_once();
  if (m != nullptr && (mode & 1)) {  // a spec-fitting input with random dtype/shape mutations
    int32_t num_inputs = 0;
    kiln_module_num_inputs(m, &num_inputs);
    KilnTensorInfo info;
    if (num_inputs > 0 && kiln_module_input_info(m, 0, &info) == 0 && (mode & 2)) {
      shape.assign(info.shape, info.shape + info.ndim);
      ndim = info.ndim;
      if (!(mode & 4)) dtype = info.dtype;
    }
  }
  // Sizes a machine could really hand out above 256 MiB are skipped (the zero-fill would only
  // measure the fuzzer's RSS limit); overflowing and larger-than-memory ones are kept.
  unsigned __int128 want = (dtype.bits + 7) / 8 * static_cast<unsigned __int128>(dtype.lanes);
  for (int64_t d : shape) want = d < 0 ? 0 : (want * static_cast<uint64_t>(d) > (static_cast<unsigned __int128>(1) << 100)
                                                  ? (static_cast<unsigned __int128>(1) << 100)
                                                  : want * static_cast<uint64_t>(d));
  if (want > (256u << 20) && want < (static_cast<unsigned __int128>(1) << 44)) return 0;
  DLTensor* t = nullptr;
  const int rc = kiln_tensor_alloc(shape.data(), ndim, dtype, &t);
  check(rc);
  if (rc != 0) return 0;
  size_t bytes = 0;
  check(kiln_tensor_nbytes(t, &bytes));
  if (bytes > 0) static_cast<unsigned char*>(t->data)[bytes - 1] = 1;
  if (m != nullptr) {
    KilnExecutor* e = nullptr;
    check(kiln_executor_create(m, &e));
    if (e != nullptr) {
      const int32_t index = static_cast<int8_t>(r.take<uint8_t>()) % 3;
      int set = (mode & 8) ? kiln_executor_set_input_by_name(e, (mode & 16) ? "x" : "nope", t)
                           : kiln_executor_set_input(e, index, t);
      check(set);
      if (set == 0) check(kiln_executor_run(e));
      DLTensor out{};
      check(kiln_executor_get_output(e, static_cast<int8_t>(r.take<uint8_t>()) % 2, &out));
      kiln_executor_free(e);
    }
  }
  if (mode & 32) {
    DLManagedTensor* managed = nullptr;
    check(kiln_tensor_to_dlpack(t, &managed));
    if (managed != nullptr) managed->deleter(managed);
    else kiln_tensor_free(t);
  } else {
    check(kiln_tensor_free(t));
  }
  return 0;
}
