/*
 * The C API's cost of one run, for comparing with Python's Module.run (scripts/bench-python-overhead.py).
 * Usage: c_api_run_loop ARTIFACT.so ITERATIONS [bind|copy]
 * Loads the artifact, makes one executor and 64-byte aligned inputs (kiln_tensor_alloc, filled with
 * 0.5 for float32 inputs), then times ITERATIONS of: set every input (bind_input zero-copy, or
 * set_input copying), kiln_executor_run, and kiln_executor_output_view of every output -- the work
 * Module.run asks of the runtime. Prints "ns_per_run N". Exit 1 with the runtime's message on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kiln/runtime/c_api.h"

static int fail(const char* what) {
  fprintf(stderr, "error: %s: %s\n", what, kiln_get_last_error());
  return 1;
}

static double now_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ARTIFACT.so ITERATIONS [bind|copy]\n", argv[0]);
    return 2;
  }
  const long iterations = atol(argv[2]);
  const int bind = argc < 4 || strcmp(argv[3], "copy") != 0;
  KilnModule* module = NULL;
  KilnExecutor* executor = NULL;
  if (kiln_module_load(argv[1], &module) != 0) return fail("kiln_module_load");
  if (kiln_executor_create(module, &executor) != 0) return fail("kiln_executor_create");
  int32_t num_inputs = 0, num_outputs = 0;
  kiln_module_num_inputs(module, &num_inputs);
  kiln_module_num_outputs(module, &num_outputs);
  DLTensor** inputs = calloc((size_t)num_inputs, sizeof(DLTensor*));
  for (int32_t i = 0; i < num_inputs; ++i) {
    KilnTensorInfo info;
    if (kiln_module_input_info(module, i, &info) != 0) return fail("kiln_module_input_info");
    if (kiln_tensor_alloc(info.shape, info.ndim, info.dtype, &inputs[i]) != 0) return fail("kiln_tensor_alloc");
    size_t bytes = 0;
    kiln_tensor_nbytes(inputs[i], &bytes);
    if (info.dtype.code == kDLFloat && info.dtype.bits == 32) {
      for (size_t k = 0; k < bytes / 4; ++k) ((float*)inputs[i]->data)[k] = 0.5f;
    }
  }
  double start = 0, start_cpu = 0;
  for (long it = -iterations / 10; it < iterations; ++it) { /* the first tenth warms up */
    if (it == 0) {
      start = now_ns(CLOCK_MONOTONIC);
      start_cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    }
    for (int32_t i = 0; i < num_inputs; ++i) {
      int rc = bind ? kiln_executor_bind_input(executor, i, inputs[i]) : kiln_executor_set_input(executor, i, inputs[i]);
      if (rc != 0) return fail("set input");
    }
    if (kiln_executor_run(executor) != 0) return fail("kiln_executor_run");
    for (int32_t o = 0; o < num_outputs; ++o) {
      const DLTensor* view = NULL;
      if (kiln_executor_output_view(executor, o, &view) != 0) return fail("kiln_executor_output_view");
    }
  }
  const double cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - start_cpu;
  printf("ns_per_run %.1f cpu_ns_per_run %.1f\n", (now_ns(CLOCK_MONOTONIC) - start) / (double)iterations,
         cpu / (double)iterations);
  for (int32_t i = 0; i < num_inputs; ++i) kiln_tensor_free(inputs[i]);
  free(inputs);
  kiln_executor_free(executor);
  kiln_module_free(module);
  return 0;
}
