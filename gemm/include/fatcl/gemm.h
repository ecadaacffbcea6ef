/* fatcl's GEMM for C (C99), with CLBlast's C API: the same argument order,
 * enum values and status codes under the prefix Fatcl instead of CLBlast
 * (CLBlastSgemm -> FatclSgemm, CLBlastLayoutRowMajor ->
 * FatclLayoutRowMajor, CLBlastSuccess -> FatclSuccess). What the calls do,
 * and where fatcl departs from CLBlast (reference BLAS's K = 0 and
 * alpha = 0), is fatcl/gemm.hpp's. Link fatcl::gemm. */
#ifndef FATCL_GEMM_H_
#define FATCL_GEMM_H_

#include <stddef.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum FatclStatusCode_ {
  FatclSuccess = 0,
  FatclOpenCLCompilerNotAvailable = -3,
  FatclTempBufferAllocFailure = -4,
  FatclOpenCLOutOfResources = -5,
  FatclOpenCLOutOfHostMemory = -6,
  FatclOpenCLBuildProgramFailure = -11,
  FatclInvalidValue = -30,
  FatclInvalidCommandQueue = -36,
  FatclInvalidMemObject = -38,
  FatclInvalidBinary = -42,
  FatclInvalidBuildOptions = -43,
  FatclInvalidProgram = -44,
  FatclInvalidProgramExecutable = -45,
  FatclInvalidKernelName = -46,
  FatclInvalidKernelDefinition = -47,
  FatclInvalidKernel = -48,
  FatclInvalidArgIndex = -49,
  FatclInvalidArgValue = -50,
  FatclInvalidArgSize = -51,
  FatclInvalidKernelArgs = -52,
  FatclInvalidLocalNumDimensions = -53,
  FatclInvalidLocalThreadsTotal = -54,
  FatclInvalidLocalThreadsDim = -55,
  FatclInvalidGlobalOffset = -56,
  FatclInvalidEventWaitList = -57,
  FatclInvalidEvent = -58,
  FatclInvalidOperation = -59,
  FatclInvalidBufferSize = -61,
  FatclInvalidGlobalWorkSize = -63,
  FatclNotImplemented = -1024,
  FatclInvalidMatrixA = -1022,
  FatclInvalidMatrixB = -1021,
  FatclInvalidMatrixC = -1020,
  FatclInvalidVectorX = -1019,
  FatclInvalidVectorY = -1018,
  FatclInvalidDimension = -1017,
  FatclInvalidLeadDimA = -1016,
  FatclInvalidLeadDimB = -1015,
  FatclInvalidLeadDimC = -1014,
  FatclInvalidIncrementX = -1013,
  FatclInvalidIncrementY = -1012,
  FatclInsufficientMemoryA = -1011,
  FatclInsufficientMemoryB = -1010,
  FatclInsufficientMemoryC = -1009,
  FatclInsufficientMemoryX = -1008,
  FatclInsufficientMemoryY = -1007,
  FatclInsufficientMemoryTemp = -2050,
  FatclInvalidBatchCount = -2049,
  FatclInvalidOverrideKernel = -2048,
  FatclMissingOverrideParameter = -2047,
  FatclInvalidLocalMemUsage = -2046,
  FatclNoHalfPrecision = -2045,
  FatclNoDoublePrecision = -2044,
  FatclInvalidVectorScalar = -2043,
  FatclInsufficientMemoryScalar = -2042,
  FatclDatabaseError = -2041,
  FatclUnknownError = -2040,
  FatclUnexpectedError = -2039
} FatclStatusCode;

typedef enum FatclLayout_ { FatclLayoutRowMajor = 101, FatclLayoutColMajor = 102 } FatclLayout;
typedef enum FatclTranspose_ {
  FatclTransposeNo = 111,
  FatclTransposeYes = 112,
  FatclTransposeConjugate = 113
} FatclTranspose;

/* C = alpha * op(A) * op(B) + beta * C: one product, a batch at given offsets
 * with an alpha and a beta each, a batch at fixed strides. */
FatclStatusCode FatclSgemm(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const float alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const cl_mem b_buffer,
                           const size_t b_offset, const size_t b_ld, const float beta,
                           cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                           cl_command_queue* queue, cl_event* event);
FatclStatusCode FatclDgemm(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const double alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const cl_mem b_buffer,
                           const size_t b_offset, const size_t b_ld, const double beta,
                           cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                           cl_command_queue* queue, cl_event* event);
FatclStatusCode FatclHgemm(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const cl_half alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const cl_mem b_buffer,
                           const size_t b_offset, const size_t b_ld, const cl_half beta,
                           cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                           cl_command_queue* queue, cl_event* event);
FatclStatusCode FatclSgemmWithTempBuffer(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const float alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const cl_mem b_buffer,
                           const size_t b_offset, const size_t b_ld, const float beta,
                           cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                           cl_command_queue* queue, cl_event* event, cl_mem temp_buffer);
FatclStatusCode FatclDgemmWithTempBuffer(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const double alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const cl_mem b_buffer,
                           const size_t b_offset, const size_t b_ld, const double beta,
                           cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                           cl_command_queue* queue, cl_event* event, cl_mem temp_buffer);
FatclStatusCode FatclHgemmWithTempBuffer(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const cl_half alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const cl_mem b_buffer,
                           const size_t b_offset, const size_t b_ld, const cl_half beta,
                           cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                           cl_command_queue* queue, cl_event* event, cl_mem temp_buffer);
/* The bytes the WithTempBuffer forms' temp_buffer needs for this call on
 * the queue's device, 0 where nothing is packed (fatcl::GemmTempBufferSize;
 * CLBlast's names, a capital G). */
FatclStatusCode FatclSGemmTempBufferSize(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const size_t a_offset, const size_t a_ld,
                           const size_t b_offset, const size_t b_ld, const size_t c_offset,
                           const size_t c_ld, cl_command_queue* queue, size_t* temp_buffer_size);
FatclStatusCode FatclDGemmTempBufferSize(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const size_t a_offset, const size_t a_ld,
                           const size_t b_offset, const size_t b_ld, const size_t c_offset,
                           const size_t c_ld, cl_command_queue* queue, size_t* temp_buffer_size);
FatclStatusCode FatclHGemmTempBufferSize(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const size_t a_offset, const size_t a_ld,
                           const size_t b_offset, const size_t b_ld, const size_t c_offset,
                           const size_t c_ld, cl_command_queue* queue, size_t* temp_buffer_size);
FatclStatusCode FatclSgemmBatched(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const float* alphas, const cl_mem a_buffer,
                           const size_t* a_offsets, const size_t a_ld, const cl_mem b_buffer,
                           const size_t* b_offsets, const size_t b_ld, const float* betas,
                           cl_mem c_buffer, const size_t* c_offsets, const size_t c_ld,
                           const size_t batch_count, cl_command_queue* queue, cl_event* event);
FatclStatusCode FatclDgemmBatched(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const double* alphas, const cl_mem a_buffer,
                           const size_t* a_offsets, const size_t a_ld, const cl_mem b_buffer,
                           const size_t* b_offsets, const size_t b_ld, const double* betas,
                           cl_mem c_buffer, const size_t* c_offsets, const size_t c_ld,
                           const size_t batch_count, cl_command_queue* queue, cl_event* event);
FatclStatusCode FatclHgemmBatched(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const cl_half* alphas, const cl_mem a_buffer,
                           const size_t* a_offsets, const size_t a_ld, const cl_mem b_buffer,
                           const size_t* b_offsets, const size_t b_ld, const cl_half* betas,
                           cl_mem c_buffer, const size_t* c_offsets, const size_t c_ld,
                           const size_t batch_count, cl_command_queue* queue, cl_event* event);
FatclStatusCode FatclSgemmStridedBatched(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const float alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const size_t a_stride,
                           const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
                           const size_t b_stride, const float beta, cl_mem c_buffer,
                           const size_t c_offset, const size_t c_ld, const size_t c_stride,
                           const size_t batch_count, cl_command_queue* queue, cl_event* event);
FatclStatusCode FatclDgemmStridedBatched(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const double alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const size_t a_stride,
                           const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
                           const size_t b_stride, const double beta, cl_mem c_buffer,
                           const size_t c_offset, const size_t c_ld, const size_t c_stride,
                           const size_t batch_count, cl_command_queue* queue, cl_event* event);
FatclStatusCode FatclHgemmStridedBatched(const FatclLayout layout, const FatclTranspose a_transpose,
                           const FatclTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const cl_half alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const size_t a_stride,
                           const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
                           const size_t b_stride, const cl_half beta, cl_mem c_buffer,
                           const size_t c_offset, const size_t c_ld, const size_t c_stride,
                           const size_t batch_count, cl_command_queue* queue, cl_event* event);

/* Half precision to and from float (IEEE 754 binary16, rounding to nearest
 * even). */
float FatclHalfToFloat(cl_half value);
cl_half FatclFloatToHalf(float value);

/* Learning the choice on the calls themselves (nonzero `on`; overrides
 * FATCL_TUNE=online either way), with the default options, the learned
 * entries kept in the user's store (fatcl::GemmLearnOnline). */
FatclStatusCode FatclGemmLearnOnline(int on);
/* Releases the kernels the calls keep (CLBlastClearCache), and forgets
 * what FatclGemmLearnOnline set. */
FatclStatusCode FatclClearCache(void);
/* Why the last call on this thread returned what it did, in words ("" after
 * FatclSuccess); valid until that thread's next call. */
const char* FatclGemmMessage(void);
/* What the last successful call on this thread ran, in words (the point
 * and its tier, the form and sizes it ran as, its passes and launches, then
 * the loader's explanation; "" after a failed call); valid until that
 * thread's next call (fatcl::GemmLastCall). */
const char* FatclGemmLastCall(void);
/* The status's name, e.g. "kInvalidLeadDimA" ("" for one CLBlast does not
 * name). */
const char* FatclStatusName(FatclStatusCode status);

#ifdef __cplusplus
}
#endif

#endif /* FATCL_GEMM_H_ */
