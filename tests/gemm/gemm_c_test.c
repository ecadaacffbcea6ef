/* The C API (fatcl/gemm.h) from a program written in C99, as a CLBlast C
 * user calls it with the prefix changed: single, double and half precision
 * where the device has them, a strided batch, and a bad leading dimension.
 * The runtime: FATCL_TEST_PLATFORM (a substring of the platform's name),
 * FATCL_TEST_NEEDS (a file it needs); exit 77 (skipped) where it is
 * missing, 1 under FATCL_REQUIRE_RUNTIMES. Prints "gemm-c OK". */
/* clCreateCommandQueue: Oclgrind is an OpenCL 1.2 device. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "fatcl/gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(int ok, const char* what) {
  if (!ok) {
    printf("FAILED: %s (%s)\n", what, FatclGemmMessage());
    ++failures;
  }
}

static int missing(const char* why) {
  printf("runtime missing: %s\n", why);
  return getenv("FATCL_REQUIRE_RUNTIMES") ? 1 : 77;
}

/* Column-major C = alpha * A^T * B^T + beta * C (A stored K x M, B N x K)
 * with offsets and leading dimensions above the least, in double on the
 * host. */
enum { M = 5, N = 7, K = 3, LDA = K + 2, LDB = N + 1, LDC = M + 3, OFF = 2 };
#define A_SIZE (OFF + LDA * M)
#define B_SIZE (OFF + LDB * K)
#define C_SIZE (OFF + LDC * N)

static void reference(const double* a, const double* b, double* c, double alpha, double beta) {
  for (int j = 0; j < N; ++j) {
    for (int i = 0; i < M; ++i) {
      double sum = 0;
      for (int p = 0; p < K; ++p) sum += a[OFF + i * LDA + p] * b[OFF + p * LDB + j];
      c[OFF + j * LDC + i] = alpha * sum + beta * c[OFF + j * LDC + i];
    }
  }
}

static double value(int i) { return (double)((i * 37) % 11 - 5) / 4.0; }

/* One precision: elements of `bytes` each, written and read through `put`
 * and `get`. */
typedef void (*Put)(void* p, int i, double x);
typedef double (*Get)(const void* p, int i);
static void put_s(void* p, int i, double x) { ((float*)p)[i] = (float)x; }
static double get_s(const void* p, int i) { return ((const float*)p)[i]; }
static void put_d(void* p, int i, double x) { ((double*)p)[i] = x; }
static double get_d(const void* p, int i) { return ((const double*)p)[i]; }
static void put_h(void* p, int i, double x) { ((cl_half*)p)[i] = FatclFloatToHalf((float)x); }
static double get_h(const void* p, int i) { return FatclHalfToFloat(((const cl_half*)p)[i]); }

static void check_precision(cl_context context, cl_command_queue queue, char which, size_t bytes,
                            Put put, Get get, double tolerance) {
  double a[A_SIZE], b[B_SIZE], c[C_SIZE];
  unsigned char ha[A_SIZE * 8], hb[B_SIZE * 8], hc[C_SIZE * 8];
  for (int i = 0; i < A_SIZE; ++i) put(ha, i, value(i)), a[i] = get(ha, i);
  for (int i = 0; i < B_SIZE; ++i) put(hb, i, value(i + 3)), b[i] = get(hb, i);
  for (int i = 0; i < C_SIZE; ++i) put(hc, i, value(i + 5)), c[i] = get(hc, i);
  cl_int err = CL_SUCCESS;
  cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, A_SIZE * bytes, ha, &err);
  cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, B_SIZE * bytes, hb, &err);
  cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, C_SIZE * bytes, hc, &err);
  expect(err == CL_SUCCESS, "clCreateBuffer");
  cl_event event = NULL;
  FatclStatusCode s = FatclSuccess;
  if (which == 'S') {
    s = FatclSgemm(FatclLayoutColMajor, FatclTransposeYes, FatclTransposeYes, M, N, K, 1.5f, da,
                   OFF, LDA, db, OFF, LDB, 0.5f, dc, OFF, LDC, &queue, &event);
  } else if (which == 'D') {
    s = FatclDgemm(FatclLayoutColMajor, FatclTransposeYes, FatclTransposeYes, M, N, K, 1.5, da,
                   OFF, LDA, db, OFF, LDB, 0.5, dc, OFF, LDC, &queue, &event);
  } else {
    s = FatclHgemm(FatclLayoutColMajor, FatclTransposeYes, FatclTransposeYes, M, N, K,
                   FatclFloatToHalf(1.5f), da, OFF, LDA, db, OFF, LDB, FatclFloatToHalf(0.5f), dc,
                   OFF, LDC, &queue, &event);
  }
  expect(s == FatclSuccess, "the call succeeds");
  if (s == FatclSuccess) {
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
    clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, C_SIZE * bytes, hc, 0, NULL, NULL);
    reference(a, b, c, 1.5, 0.5);
    int wrong = 0;
    for (int i = 0; i < C_SIZE; ++i) {
      if (!(fabs(get(hc, i) - c[i]) <= tolerance * (1 + fabs(c[i])))) ++wrong;
    }
    printf("%cgemm: %d of %d elements of C wrong\n", which, wrong, C_SIZE);
    expect(wrong == 0, "C matches the reference, and the guard elements are unchanged");
  }
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
}

int main(void) {
  const char* wanted = getenv("FATCL_TEST_PLATFORM");
  if (!wanted) return missing("FATCL_TEST_PLATFORM is not set (run through ctest)");
  const char* needs = getenv("FATCL_TEST_NEEDS");
  if (needs && *needs) {
    FILE* f = fopen(needs, "r");
    if (!f) return missing(needs);
    fclose(f);
  }
  cl_platform_id platforms[16];
  cl_uint count = 0;
  if (clGetPlatformIDs(16, platforms, &count) != CL_SUCCESS) count = 0;
  cl_device_id device = NULL;
  for (cl_uint i = 0; i < count && !device; ++i) {
    char name[256] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
    if (!strstr(name, wanted)) continue;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) device = NULL;
  }
  if (!device) return missing("no platform of that name with a device");
  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  if (err != CL_SUCCESS) return missing("clCreateContext failed");
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  if (err != CL_SUCCESS) return missing("clCreateCommandQueue failed");
  char extensions[8192] = {0};
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof extensions - 1, extensions, NULL);

  check_precision(context, queue, 'S', 4, put_s, get_s, 1e-5);
  if (strstr(extensions, "cl_khr_fp64")) check_precision(context, queue, 'D', 8, put_d, get_d, 1e-12);
  if (strstr(extensions, "cl_khr_fp16")) check_precision(context, queue, 'H', 2, put_h, get_h, 2e-3);

  /* A strided batch of two, row-major, beta 0 over NaN. */
  {
    float a[2 * 6], b[2 * 6], c[2 * 4];
    for (int i = 0; i < 12; ++i) a[i] = (float)value(i), b[i] = (float)value(i + 1);
    for (int i = 0; i < 8; ++i) c[i] = NAN;
    cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &err);
    cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof c, c, &err);
    FatclStatusCode s = FatclSgemmStridedBatched(
        FatclLayoutRowMajor, FatclTransposeNo, FatclTransposeNo, 2, 2, 3, 1.0f, da, 0, 3, 6, db, 0,
        2, 6, 0.0f, dc, 0, 2, 4, 2, &queue, NULL);
    expect(s == FatclSuccess, "FatclSgemmStridedBatched succeeds");
    clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
    int wrong = 0;
    for (int z = 0; z < 2; ++z) {
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          double sum = 0;
          for (int p = 0; p < 3; ++p) sum += (double)a[z * 6 + i * 3 + p] * b[z * 6 + p * 2 + j];
          if (!(fabs(c[z * 4 + i * 2 + j] - sum) <= 1e-5 * (1 + fabs(sum)))) ++wrong;
        }
      }
    }
    printf("Sgemm strided batch: %d of 8 elements wrong\n", wrong);
    expect(wrong == 0, "the strided batch matches the reference");
    expect(strstr(FatclGemmLastCall(), " tier) for 2 products of row-major 2 x 2 x 3") != NULL,
           "FatclGemmLastCall names the batch it ran");

    /* A leading dimension below the least: CLBlast's status and a cause. */
    s = FatclSgemm(FatclLayoutRowMajor, FatclTransposeNo, FatclTransposeNo, 2, 2, 3, 1.0f, da, 0,
                   2, db, 0, 2, 0.0f, dc, 0, 2, &queue, NULL);
    printf("lda 2 for 3 columns: %s: %s\n", FatclStatusName(s), FatclGemmMessage());
    expect(s == FatclInvalidLeadDimA, "lda below K gives FatclInvalidLeadDimA");
    expect(strstr(FatclGemmMessage(), "leading dimension") != NULL, "the message names the cause");
    expect(FatclGemmLastCall()[0] == '\0', "a refused call ran nothing");

    /* The temporary buffer's size (CLBlast's name, a capital G): at most
     * A^T and B^T packed; no place for the answer is an invalid value. */
    size_t temp = (size_t)-1;
    s = FatclSGemmTempBufferSize(FatclLayoutRowMajor, FatclTransposeYes, FatclTransposeYes, 2, 2,
                                 3, 0, 2, 0, 3, 0, 2, &queue, &temp);
    printf("temporary buffer for a 2x2x3 TT product: %s, %zu bytes\n", FatclStatusName(s), temp);
    expect(s == FatclSuccess && temp <= (2 * 3 + 3 * 2) * sizeof(float),
           "FatclSGemmTempBufferSize answers at most both operands' bytes");
    s = FatclSGemmTempBufferSize(FatclLayoutRowMajor, FatclTransposeYes, FatclTransposeYes, 2, 2,
                                 3, 0, 2, 0, 3, 0, 2, &queue, NULL);
    expect(s == FatclInvalidValue, "a null temp_buffer_size gives FatclInvalidValue");
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseMemObject(dc);
  }
  /* Learning switched off (it builds more points, which the C++ tests
   * check): the switch links from C and answers FatclSuccess. */
  expect(FatclGemmLearnOnline(0) == FatclSuccess, "FatclGemmLearnOnline(0) succeeds");
  FatclClearCache();
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (failures) return 1;
  printf("gemm-c OK\n");
  return 0;
}
