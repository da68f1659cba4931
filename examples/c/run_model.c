/* Runs a Kiln artifact from C, linking only libkiln_runtime:
 *
 *   cc -std=c11 run_model.c -I KILN/include -L KILN/build/lib -lkiln_runtime -o run_model
 *   ./run_model model.so [RUNS]
 *
 * It loads the artifact (the runtime checks it against this machine first), fills every f32
 * input element i with ((i % 13) - 6) / 4 (other dtypes stay zero), runs it RUNS times (default
 * 1), and prints each output's first values and the sum of all of them. Every failing call
 * prints kiln_get_last_error() and exits 1. */
#include <stdio.h>
#include <stdlib.h>

#include "kiln/runtime/c_api.h"

static int fail(const char* what) {
  fprintf(stderr, "error: %s: %s\n", what, kiln_get_last_error());
  return 1;
}

static int is_f32(DLDataType t) { return t.code == kDLFloat && t.bits == 32 && t.lanes == 1; }

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s ARTIFACT.so [RUNS]\n", argv[0]);
    return 2;
  }
  const int runs = argc == 3 ? atoi(argv[2]) : 1;
  KilnModule* module = NULL;
  KilnExecutor* exec = NULL;
  if (kiln_module_load(argv[1], &module) != 0) return fail("loading the artifact");
  if (kiln_executor_create(module, &exec) != 0) return fail("creating an executor");

  int32_t num_inputs = 0, num_outputs = 0;
  kiln_module_num_inputs(module, &num_inputs);
  kiln_module_num_outputs(module, &num_outputs);
  for (int32_t i = 0; i < num_inputs; ++i) {
    KilnTensorInfo info;
    DLTensor* value = NULL;
    if (kiln_module_input_info(module, i, &info) != 0) return fail("input info");
    if (kiln_tensor_alloc(info.shape, info.ndim, info.dtype, &value) != 0) return fail("allocating an input");
    if (is_f32(info.dtype)) {
      size_t bytes = 0;
      kiln_tensor_nbytes(value, &bytes);
      float* data = (float*)value->data;
      for (size_t k = 0; k < bytes / sizeof(float); ++k) data[k] = (float)((int)(k % 13) - 6) / 4.0f;
    }
    if (kiln_executor_set_input(exec, i, value) != 0) return fail("setting an input");
    kiln_tensor_free(value);  /* set_input copied it */
  }
  for (int r = 0; r < runs; ++r) {
    if (kiln_executor_run(exec) != 0) return fail("running");
  }
  for (int32_t i = 0; i < num_outputs; ++i) {
    KilnTensorInfo info;
    const DLTensor* out = NULL;
    if (kiln_module_output_info(module, i, &info) != 0) return fail("output info");
    if (kiln_executor_output_view(exec, i, &out) != 0) return fail("reading an output");
    printf("output %s:", info.name);
    if (!is_f32(info.dtype)) {
      printf(" (not f32, not printed)\n");
      continue;
    }
    size_t bytes = 0;
    kiln_tensor_nbytes(out, &bytes);
    const float* data = (const float*)out->data;
    const size_t n = bytes / sizeof(float);
    double sum = 0;
    for (size_t k = 0; k < n; ++k) {
      if (k < 8) printf(" %.9g", data[k]);
      sum += data[k];
    }
    printf("\nsum %s: %.17g\n", info.name, sum);
  }
  kiln_executor_free(exec);
  kiln_module_free(module);
  return 0;
}
