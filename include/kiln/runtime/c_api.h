/*
 * Kiln runtime C API: the stable ABI of libkiln_runtime.so.
 *
 * Conventions (after TVM's c_runtime_api.h):
 *   - Every function that can fail returns an int status: 0 on success, -1 on failure. The
 *     message of the last failure on the calling thread is returned by kiln_get_last_error().
 *   - No C++ exception ever crosses this boundary.
 *   - Tensors are described by DLPack's DLTensor so they exchange with numpy, PyTorch and others
 *     without copies. Tensors allocated here are 64-byte aligned, C-contiguous, on kDLCPU.
 *   - Generated kernels call kiln_parallel_for() for their parallel loops.
 * Nothing here includes or needs a compiler header: this file is the whole contract.
 */
#ifndef KILN_RUNTIME_C_API_H_
#define KILN_RUNTIME_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(KILN_RUNTIME_BUILDING)
#define KILN_RUNTIME_API __attribute__((visibility("default")))
#else
#define KILN_RUNTIME_API
#endif

/* The ABI number this header describes. kiln_runtime_abi_version() returns the number the loaded
 * library was built with; a program compares the two to detect a mismatched libkiln_runtime. */
#define KILN_RUNTIME_ABI_VERSION 1

/* Alignment, in bytes, of every buffer kiln_tensor_alloc() returns. */
#define KILN_TENSOR_ALIGNMENT 64

/* ---- Versions ---------------------------------------------------------------------------- */

/* Kiln's version of the loaded library, e.g. "0.1.0". Never NULL. */
KILN_RUNTIME_API const char* kiln_runtime_version(void);
/* ABI number of the loaded library (compare with KILN_RUNTIME_ABI_VERSION). */
KILN_RUNTIME_API int32_t kiln_runtime_abi_version(void);

/* ---- Errors ------------------------------------------------------------------------------ */

/* Message of the last failed call on this thread ("" when none). Valid until the next call on
 * this thread that fails. */
KILN_RUNTIME_API const char* kiln_get_last_error(void);
/* Sets this thread's last-error message (used by generated code and language bindings). */
KILN_RUNTIME_API void kiln_set_last_error(const char* message);

/* ---- Tensors ----------------------------------------------------------------------------- */

/* Allocates a C-contiguous CPU tensor of `ndim` dimensions, zero-filled, with its data 64-byte
 * aligned. `shape` is copied. On success *out owns the data and the shape: release it with
 * kiln_tensor_free(). A 0-d tensor (ndim 0, shape may be NULL) holds one element; a tensor with a
 * zero dimension holds none but still gets a valid (non-NULL, aligned) data pointer. Fails, with
 * *out set to NULL, on out == NULL, ndim < 0, shape == NULL with ndim > 0, a negative dimension,
 * an unsupported dtype (code not int/uint/float/bfloat/complex/bool, lanes != 1, or bits not a
 * positive multiple of 8), a byte size that overflows, or when memory runs out. */
KILN_RUNTIME_API int kiln_tensor_alloc(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                       DLTensor** out);
/* Releases a tensor from kiln_tensor_alloc() (and only such a tensor). NULL is accepted and does
 * nothing. Always returns 0. */
KILN_RUNTIME_API int kiln_tensor_free(DLTensor* tensor);
/* Wraps a tensor from kiln_tensor_alloc() as a DLManagedTensor for zero-copy exchange (e.g. numpy
 * or PyTorch from_dlpack). Ownership moves to *out; its deleter frees the data. */
KILN_RUNTIME_API int kiln_tensor_to_dlpack(DLTensor* tensor, DLManagedTensor** out);
/* Number of bytes of a tensor's data (product of the shape times the element size). */
KILN_RUNTIME_API int kiln_tensor_nbytes(const DLTensor* tensor, size_t* out);

/* ---- Thread pool ------------------------------------------------------------------------- */

/* Body of a parallel loop: runs iterations [begin, end) of the loop described by `closure`.
 * Returns 0, or non-zero after calling kiln_set_last_error(). */
typedef int32_t (*kiln_parallel_body)(int64_t begin, int64_t end, void* closure);

/* Runs body over [0, n) split into contiguous chunks, at most one per thread (the calling thread
 * takes part), and returns when all have finished; every index is covered by exactly one chunk.
 * Returns 0, or -1 when any chunk failed: the body returned non-zero or (from C++) threw; the
 * first failure's message becomes the caller's last error. Loops from several threads at once
 * are run one after another. A call from inside a running parallel body runs serially on the
 * calling thread. n <= 0 does nothing; body == NULL fails. */
KILN_RUNTIME_API int kiln_parallel_for(kiln_parallel_body body, void* closure, int64_t n);
/* Sets the number of threads parallel loops use (1..1024; 0 means one per core). The initial
 * value is read once, at first use, from the environment variable KILN_NUM_THREADS (same range;
 * an invalid value is reported on stderr and one thread per core is used). Fails when called
 * from inside a parallel body. */
KILN_RUNTIME_API int kiln_set_num_threads(int32_t num_threads);
/* Number of threads parallel loops use. */
KILN_RUNTIME_API int32_t kiln_get_num_threads(void);

/* ---- Artifacts: modules and executors ------------------------------------------------------
 * An artifact is the shared library `kiln compile` writes (docs/artifact.md). Loading it checks
 * the FILE first (format version, checksums, architecture, runtime ABI, this CPU's features)
 * and refuses with a message instead of running code this machine cannot execute. */

typedef struct KilnModule KilnModule;
typedef struct KilnExecutor KilnExecutor;

/* A graph input or output. `name` and `shape` stay valid while the module is alive. */
typedef struct {
  const char* name;
  DLDataType dtype;
  int32_t ndim;
  const int64_t* shape;
} KilnTensorInfo;

/* Reads and checks the artifact at `path`, then loads it (dlopen) and resolves its kernels. */
KILN_RUNTIME_API int kiln_module_load(const char* path, KilnModule** out);
/* Releases the caller's reference; executors created from it keep the module alive. NULL is
 * accepted. Always returns 0. */
KILN_RUNTIME_API int kiln_module_free(KilnModule* module);
KILN_RUNTIME_API int kiln_module_num_inputs(const KilnModule* module, int32_t* out);
KILN_RUNTIME_API int kiln_module_num_outputs(const KilnModule* module, int32_t* out);
KILN_RUNTIME_API int kiln_module_input_info(const KilnModule* module, int32_t index, KilnTensorInfo* out);
KILN_RUNTIME_API int kiln_module_output_info(const KilnModule* module, int32_t index, KilnTensorInfo* out);
/* Index of the input/output called `name`; fails (naming the model's inputs/outputs) when none. */
KILN_RUNTIME_API int kiln_module_find_input(const KilnModule* module, const char* name, int32_t* out);
KILN_RUNTIME_API int kiln_module_find_output(const KilnModule* module, const char* name, int32_t* out);

/* A description of the artifact at `path` (versions, target, CPU features, inputs, outputs,
 * kernels, memory, whether it can run here) read from the file alone: none of the artifact's
 * code is loaded or run. *out_text is malloc'ed; release it with kiln_free_text(). */
KILN_RUNTIME_API int kiln_artifact_describe(const char* path, char** out_text);
KILN_RUNTIME_API void kiln_free_text(char* text);
/* The CPU features the loader checks artifacts against, as detected on this machine (cpuid and
 * xgetbv on x86-64, getauxval on AArch64; LLVM's names, comma-separated, sorted), after removing
 * any listed in $KILN_RUNTIME_HIDE_CPU_FEATURES. *out_text is released with kiln_free_text(). */
KILN_RUNTIME_API int kiln_runtime_cpu_features(char** out_text);

/* An executor owns the buffers one run needs (allocated once, reused by every run). One
 * executor is used by one thread at a time; several executors of one module may run at once. */
KILN_RUNTIME_API int kiln_executor_create(KilnModule* module, KilnExecutor** out);
KILN_RUNTIME_API int kiln_executor_free(KilnExecutor* executor);
/* Copies `value` into an input. Its dtype and shape must equal the input's; CPU, C-contiguous. */
KILN_RUNTIME_API int kiln_executor_set_input(KilnExecutor* executor, int32_t index, const DLTensor* value);
KILN_RUNTIME_API int kiln_executor_set_input_by_name(KilnExecutor* executor, const char* name,
                                                     const DLTensor* value);
/* Zero-copy: the input reads `value`'s memory (64-byte aligned, kept valid by the caller) until
 * the next set_input/bind_input of that input. */
KILN_RUNTIME_API int kiln_executor_bind_input(KilnExecutor* executor, int32_t index, const DLTensor* value);
/* Runs every kernel of the plan in order. */
KILN_RUNTIME_API int kiln_executor_run(KilnExecutor* executor);
/* Copies output `index` into `out` (dtype and shape must match; CPU, C-contiguous). */
KILN_RUNTIME_API int kiln_executor_get_output(KilnExecutor* executor, int32_t index, DLTensor* out);
/* A read-only view of output `index`, valid until the next run or kiln_executor_free. */
KILN_RUNTIME_API int kiln_executor_output_view(KilnExecutor* executor, int32_t index, const DLTensor** out);

/* Profiler: when enabled, each run times every kernel. Enabling or disabling resets the counts. */
KILN_RUNTIME_API int kiln_executor_set_profiling(KilnExecutor* executor, int32_t enabled);
typedef struct {
  const char* symbol;     /* kernel symbol */
  const char* fused_ops;  /* the graph ops fused into it, e.g. "conv2d+add+relu" */
  int64_t calls;
  double total_seconds;
} KilnKernelProfile;
KILN_RUNTIME_API int kiln_executor_num_kernels(const KilnExecutor* executor, int32_t* out);
KILN_RUNTIME_API int kiln_executor_kernel_profile(const KilnExecutor* executor, int32_t kernel,
                                                  KilnKernelProfile* out);
/* The profile as a table, one row per kernel (its call sites summed), slowest first: time per
 * run, % and cumulative % of the total, calls per run, time per call, GFLOP/s (from the flop
 * count the compiler stored per kernel), % of peak and GB/s over its arguments' bytes. */
KILN_RUNTIME_API int kiln_executor_profile_report(const KilnExecutor* executor, char** out_text);
/* The same with the % of peak column filled: peak_gflops is the machine's peak for the threads
 * the runs used (the runtime cannot measure it; `kiln run --profile` does). */
KILN_RUNTIME_API int kiln_executor_profile_report_with_peak(const KilnExecutor* executor, double peak_gflops,
                                                            char** out_text);
/* The same with the roofline check too: bandwidth_gbps is the machine's memory bandwidth for the
 * threads used. A %roof column (the time of max(flops / peak, argument bytes / bandwidth) over the
 * measured time) and, on a kernel far below both ceilings that takes a visible share of the run,
 * the flag "<< below roofline", explained in a line after the totals. 0 for either: no check. */
KILN_RUNTIME_API int kiln_executor_profile_report_with_roofline(const KilnExecutor* executor, double peak_gflops,
                                                                double bandwidth_gbps, char** out_text);
/* The same with the int8 kernels (those the compiler counted in int8 ops) rated in GOP/s against
 * int8_peak_gops, the machine's int8 peak for the threads used (0: unknown). */
KILN_RUNTIME_API int kiln_executor_profile_report_with_int8_peak(const KilnExecutor* executor, double peak_gflops,
                                                                 double bandwidth_gbps, double int8_peak_gops,
                                                                 char** out_text);

/* Tracer: when enabled, each run records every kernel launch (start, duration, thread).
 * Enabling or disabling drops what was recorded and restarts the trace's clock at 0. */
KILN_RUNTIME_API int kiln_executor_set_tracing(KilnExecutor* executor, int32_t enabled);
/* The recorded runs in Chrome's trace-event JSON format (opens in Perfetto and chrome://tracing):
 * one complete event per kernel launch per run, with the kernel's fused ops, symbol, tensors and
 * shapes, flop count and argument bytes as arguments, and one event per run. `process_name`
 * (may be NULL) names the process row. *out_text is released with kiln_free_text(). */
KILN_RUNTIME_API int kiln_executor_trace_json(const KilnExecutor* executor, const char* process_name,
                                              char** out_text);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_API_H_ */
