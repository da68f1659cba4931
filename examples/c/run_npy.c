/* Runs a Kiln artifact on inputs from .npy files and writes its outputs as .npy files, from C,
 * linking only libkiln_runtime: the runner a device (or qemu-aarch64) needs, nothing else.
 *
 *   kiln-run-npy ARTIFACT.so OUT_DIR [NAME=FILE.npy | FILE.npy ...]
 *
 * Each NAME=FILE.npy sets the artifact's input NAME, a bare FILE.npy the next input by position
 * (little-endian, C order, the input's dtype and shape: the runtime checks them). Output i is written to OUT_DIR/output_<i>.npy and one line
 * "output <i> <name> <file>" is printed per output. Any failure prints "error: ..." (with
 * kiln_get_last_error() for runtime calls) and exits 1; bad usage exits 2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/runtime/c_api.h"

#define MAX_DIMS 16

typedef struct {
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[MAX_DIMS];
  void* data;
  size_t nbytes;
} NpyArray;

static int fail(const char* what) {
  fprintf(stderr, "error: %s: %s\n", what, kiln_get_last_error());
  return 1;
}

static int npy_error(const char* path, const char* why) {
  fprintf(stderr, "error: %s: %s\n", path, why);
  return 1;
}

/* numpy's descr (without the byte-order character) -> DLPack dtype; 0 when unsupported. */
static int dtype_of_descr(const char* d, DLDataType* out) {
  static const struct { const char* descr; uint8_t code; uint8_t bits; } kTable[] = {
      {"f2", kDLFloat, 16}, {"f4", kDLFloat, 32}, {"f8", kDLFloat, 64}, {"i1", kDLInt, 8},
      {"i2", kDLInt, 16},   {"i4", kDLInt, 32},   {"i8", kDLInt, 64},   {"u1", kDLUInt, 8},
      {"u2", kDLUInt, 16},  {"u4", kDLUInt, 32},  {"u8", kDLUInt, 64},  {"b1", 6 /* kDLBool */, 8},
      {"V2", kDLBfloat, 16} /* bfloat16 as 2 raw bytes, as Kiln's npy writer spells it */};
  size_t i;
  for (i = 0; i < sizeof kTable / sizeof kTable[0]; ++i) {
    if (strcmp(d, kTable[i].descr) == 0) {
      out->code = kTable[i].code;
      out->bits = kTable[i].bits;
      out->lanes = 1;
      return 1;
    }
  }
  return 0;
}

static const char* descr_of_dtype(DLDataType t) {
  switch (t.code) {
    case kDLFloat: return t.bits == 16 ? "<f2" : t.bits == 32 ? "<f4" : t.bits == 64 ? "<f8" : NULL;
    case kDLInt: return t.bits == 8 ? "|i1" : t.bits == 16 ? "<i2" : t.bits == 32 ? "<i4" : t.bits == 64 ? "<i8" : NULL;
    case kDLUInt: return t.bits == 8 ? "|u1" : t.bits == 16 ? "<u2" : t.bits == 32 ? "<u4" : t.bits == 64 ? "<u8" : NULL;
    case 6: return "|b1";
    case kDLBfloat: return t.bits == 16 ? "|V2" : NULL;
    default: return NULL;
  }
}

/* Reads an .npy file (format 1.0-3.0, little-endian, C order). */
static int read_npy(const char* path, NpyArray* a) {
  unsigned char pre[12];
  char header[4096], descr[8] = {0};
  const char *p, *q;
  size_t header_len, count = 1, n;
  int32_t i;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return npy_error(path, strerror(errno));
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    fclose(f);
    return npy_error(path, "not an .npy file (no \\x93NUMPY magic)");
  }
  if (pre[6] == 1) {
    header_len = (size_t)pre[8] | ((size_t)pre[9] << 8);
  } else {
    if (fread(pre + 10, 1, 2, f) != 2) { fclose(f); return npy_error(path, "truncated header"); }
    header_len = (size_t)pre[8] | ((size_t)pre[9] << 8) | ((size_t)pre[10] << 16) | ((size_t)pre[11] << 24);
  }
  if (header_len >= sizeof header || fread(header, 1, header_len, f) != header_len) {
    fclose(f);
    return npy_error(path, "header too long or truncated");
  }
  header[header_len] = '\0';
  if (strstr(header, "'fortran_order': True") != NULL) { fclose(f); return npy_error(path, "Fortran order is not supported; save it in C order"); }
  p = strstr(header, "'descr':");
  if (p == NULL || (p = strchr(p + 8, '\'')) == NULL || (q = strchr(p + 1, '\'')) == NULL || q - p - 1 < 2 || q - p - 1 > 6) {
    fclose(f);
    return npy_error(path, "no 'descr' in the header");
  }
  if (p[1] == '>') { fclose(f); return npy_error(path, "big-endian data is not supported"); }
  memcpy(descr, p + 2, (size_t)(q - p - 2));
  if (!dtype_of_descr(descr, &a->dtype)) { fclose(f); return npy_error(path, "unsupported dtype (descr)"); }
  p = strstr(header, "'shape':");
  if (p == NULL || (p = strchr(p, '(')) == NULL) { fclose(f); return npy_error(path, "no 'shape' in the header"); }
  a->ndim = 0;
  for (++p; *p != ')' && *p != '\0';) {
    char* end;
    long long d = strtoll(p, &end, 10);
    if (end == p) { ++p; continue; }
    if (a->ndim == MAX_DIMS || d < 0) { fclose(f); return npy_error(path, "bad shape"); }
    a->shape[a->ndim++] = d;
    count *= (size_t)d;
    p = end;
  }
  a->nbytes = count * (a->dtype.bits / 8);
  a->data = malloc(a->nbytes ? a->nbytes : 1);
  n = a->nbytes ? fread(a->data, 1, a->nbytes, f) : 0;
  fclose(f);
  if (n != a->nbytes) {
    free(a->data);
    return npy_error(path, "fewer data bytes than the shape needs");
  }
  for (i = a->ndim; i < MAX_DIMS; ++i) a->shape[i] = 0;
  return 0;
}

static int write_npy(const char* path, const DLTensor* t) {
  char header[4096];
  int len, i, pad;
  size_t count = 1, nbytes;
  const char* descr = descr_of_dtype(t->dtype);
  FILE* f;
  if (descr == NULL || t->dtype.lanes != 1) return npy_error(path, "the output's dtype has no .npy spelling");
  len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (i = 0; i < t->ndim; ++i) {
    len += snprintf(header + len, sizeof header - (size_t)len, "%lld,%s", (long long)t->shape[i],
                    i + 1 < t->ndim ? " " : "");
    count *= (size_t)t->shape[i];
  }
  if (t->ndim > 1) --len; /* numpy writes (2, 3), but (4,) for one dimension */
  len += snprintf(header + len, sizeof header - (size_t)len, "), }");
  pad = 64 - (int)((10 + len + 1) % 64);
  if (pad == 64) pad = 0;
  memset(header + len, ' ', (size_t)pad);
  len += pad;
  header[len++] = '\n';
  nbytes = count * (t->dtype.bits / 8);
  f = fopen(path, "wb");
  if (f == NULL) return npy_error(path, strerror(errno));
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(len & 0xff, f);
  fputc((len >> 8) & 0xff, f);
  fwrite(header, 1, (size_t)len, f);
  if (nbytes) fwrite((const char*)t->data + t->byte_offset, 1, nbytes, f);
  if (fclose(f) != 0) return npy_error(path, "cannot write the file");
  return 0;
}

int main(int argc, char** argv) {
  KilnModule* module = NULL;
  KilnExecutor* exec = NULL;
  int32_t num_outputs = 0, i, position = 0;
  int a;
  if (argc < 3) {
    fprintf(stderr, "usage: %s ARTIFACT.so OUT_DIR [NAME=FILE.npy | FILE.npy ...]\n", argv[0]);
    return 2;
  }
  if (kiln_module_load(argv[1], &module) != 0) return fail("loading the artifact");
  if (kiln_executor_create(module, &exec) != 0) return fail("creating an executor");
  for (a = 3; a < argc; ++a) {
    NpyArray arr;
    DLTensor value;
    char* eq = strchr(argv[a], '=');
    const char* file = eq == NULL ? argv[a] : eq + 1;
    if (eq != NULL) *eq = '\0';
    if (read_npy(file, &arr) != 0) return 1;
    memset(&value, 0, sizeof value);
    value.data = arr.data;
    value.device.device_type = kDLCPU;
    value.ndim = arr.ndim;
    value.dtype = arr.dtype;
    value.shape = arr.shape;
    if ((eq != NULL ? kiln_executor_set_input_by_name(exec, argv[a], &value)
                    : kiln_executor_set_input(exec, position++, &value)) != 0) {
      return fail("setting an input");
    }
    free(arr.data); /* set_input copied it */
  }
  if (kiln_executor_run(exec) != 0) return fail("running");
  kiln_module_num_outputs(module, &num_outputs);
  for (i = 0; i < num_outputs; ++i) {
    KilnTensorInfo info;
    const DLTensor* out = NULL;
    char path[4096];
    if (kiln_module_output_info(module, i, &info) != 0) return fail("output info");
    if (kiln_executor_output_view(exec, i, &out) != 0) return fail("reading an output");
    snprintf(path, sizeof path, "%s/output_%d.npy", argv[2], (int)i);
    if (write_npy(path, out) != 0) return 1;
    printf("output %d %s %s\n", (int)i, info.name, path);
  }
  kiln_executor_free(exec);
  kiln_module_free(module);
  return 0;
}
