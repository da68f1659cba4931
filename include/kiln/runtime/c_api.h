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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_API_H_ */
