/* The runtime's C API used from C11, linked against libkiln_runtime only: versions, tensors,
 * errors and parallel_for. Prints each failed check and exits non-zero when any failed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kiln/runtime/c_api.h"

static int failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s (last error: '%s')\n",      \
              __FILE__, __LINE__, #cond, kiln_get_last_error());           \
      ++failures;                                                          \
    }                                                                      \
  } while (0)


static int32_t square_body(int64_t begin, int64_t end, void* closure) {
  float* data = (float*)closure;
  for (int64_t i = begin; i < end; ++i) data[i] = (float)(i * i);
  return 0;
}

static int32_t failing_body(int64_t begin, int64_t end, void* closure) {
  (void)closure;
  if (begin == 0) {
    kiln_set_last_error("failed from C");
    return 1;
  }
  (void)end;
  return 0;
}

int main(void) {
  CHECK(kiln_runtime_abi_version() == KILN_RUNTIME_ABI_VERSION);
  CHECK(strlen(kiln_runtime_version()) > 0);

  int64_t shape[2] = {37, 11};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLTensor* t = NULL;
  CHECK(kiln_tensor_alloc(shape, 2, f32, &t) == 0);
  if (t == NULL) return 1;
  CHECK(((uintptr_t)t->data % KILN_TENSOR_ALIGNMENT) == 0);
  size_t nbytes = 0;
  CHECK(kiln_tensor_nbytes(t, &nbytes) == 0 && nbytes == 37 * 11 * sizeof(float));

  CHECK(kiln_set_num_threads(3) == 0);
  CHECK(kiln_get_num_threads() == 3);
  CHECK(kiln_parallel_for(square_body, t->data, 37 * 11) == 0);
  const float* v = (const float*)t->data;
  for (int64_t i = 0; i < 37 * 11; ++i) {
    if (v[i] != (float)(i * i)) {
      fprintf(stderr, "index %lld: got %f, expected %f\n", (long long)i, v[i], (double)(i * i));
      ++failures;
      break;
    }
  }
  CHECK(kiln_parallel_for(failing_body, NULL, 100) == -1);
  CHECK(strcmp(kiln_get_last_error(), "failed from C") == 0);

  int64_t bad[1] = {-7};
  DLTensor* u = NULL;
  CHECK(kiln_tensor_alloc(bad, 1, f32, &u) == -1 && u == NULL);
  CHECK(strcmp(kiln_get_last_error(), "kiln_tensor_alloc: dimension 0 is negative (-7)") == 0);

  DLManagedTensor* m = NULL;
  CHECK(kiln_tensor_to_dlpack(t, &m) == 0 && m != NULL && m->dl_tensor.data == t->data);
  if (m != NULL) m->deleter(m);
  CHECK(kiln_tensor_free(NULL) == 0);

  if (failures == 0) printf("c_api_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
