// fatcl's GEMM with CLBlast's entry points: C = alpha * op(A) * op(B) +
// beta * C on OpenCL buffers, row- or column-major, with offsets and leading
// dimensions, one product, a batch of products at given offsets, or a batch
// at fixed strides; in single (float), double and half (cl_half) precision.
// A product written against clblast.h switches by including this header
// and calling fatcl:: instead of clblast:: (the C API: fatcl/gemm.h).
//
// Semantics are reference BLAS's:
// - beta = 0 ignores what C held (a NaN there included); alpha = 0 reads
//   neither A nor B (C = beta * C); K = 0 makes C = beta * C. (CLBlast
//   answers K = 0 with kInvalidDimension and reads A and B where alpha is
//   0.) M = 0 or N = 0 is a product with nothing to do: kSuccess, and the
//   event (where asked) a marker on the queue.
// - kConjugate means kYes: the types are real.
// The kernel runs per device, precision and shape is chosen by fatcl's
// loader (kernels/gemm_blocked.cl, one family per precision; see
// fatcl/loader.hpp), built on the first call that needs it and kept per
// OpenCL context and device for the process, shared between threads.
// Half precision is stored as half and computed in float.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fatcl/loader.hpp"
#include "fatcl/online.hpp"

namespace fatcl {

// CLBlast's status codes, with its names and values: OpenCL's own errors
// pass through under their OpenCL values.
enum class StatusCode {
  kSuccess = 0,
  kOpenCLCompilerNotAvailable = -3,
  kTempBufferAllocFailure = -4,
  kOpenCLOutOfResources = -5,
  kOpenCLOutOfHostMemory = -6,
  kOpenCLBuildProgramFailure = -11,
  kInvalidValue = -30,
  kInvalidCommandQueue = -36,
  kInvalidMemObject = -38,
  kInvalidBinary = -42,
  kInvalidBuildOptions = -43,
  kInvalidProgram = -44,
  kInvalidProgramExecutable = -45,
  kInvalidKernelName = -46,
  kInvalidKernelDefinition = -47,
  kInvalidKernel = -48,
  kInvalidArgIndex = -49,
  kInvalidArgValue = -50,
  kInvalidArgSize = -51,
  kInvalidKernelArgs = -52,
  kInvalidLocalNumDimensions = -53,
  kInvalidLocalThreadsTotal = -54,
  kInvalidLocalThreadsDim = -55,
  kInvalidGlobalOffset = -56,
  kInvalidEventWaitList = -57,
  kInvalidEvent = -58,
  kInvalidOperation = -59,
  kInvalidBufferSize = -61,
  kInvalidGlobalWorkSize = -63,
  kNotImplemented = -1024,
  kInvalidMatrixA = -1022,
  kInvalidMatrixB = -1021,
  kInvalidMatrixC = -1020,
  kInvalidVectorX = -1019,
  kInvalidVectorY = -1018,
  kInvalidDimension = -1017,
  kInvalidLeadDimA = -1016,
  kInvalidLeadDimB = -1015,
  kInvalidLeadDimC = -1014,
  kInvalidIncrementX = -1013,
  kInvalidIncrementY = -1012,
  kInsufficientMemoryA = -1011,
  kInsufficientMemoryB = -1010,
  kInsufficientMemoryC = -1009,
  kInsufficientMemoryX = -1008,
  kInsufficientMemoryY = -1007,
  kInsufficientMemoryTemp = -2050,
  kInvalidBatchCount = -2049,
  kInvalidOverrideKernel = -2048,
  kMissingOverrideParameter = -2047,
  kInvalidLocalMemUsage = -2046,
  kNoHalfPrecision = -2045,
  kNoDoublePrecision = -2044,
  kInvalidVectorScalar = -2043,
  kInsufficientMemoryScalar = -2042,
  kDatabaseError = -2041,
  kUnknownError = -2040,
  kUnexpectedError = -2039,
};

enum class Layout { kRowMajor = 101, kColMajor = 102 };
enum class Transpose { kNo = 111, kYes = 112, kConjugate = 113 };

// Half precision as OpenCL's host API holds it (as CLBlast's half), and
// its conversions (CLBlast's clblast_half.h names): IEEE 754 binary16,
// rounding to nearest even.
using half = cl_half;
float HalfToFloat(half value);
half FloatToHalf(float value);

// C = alpha * op(A) * op(B) + beta * C. op(A) is m x k, op(B) k x n, C
// m x n, each stored in `layout` from its offset (in elements) with its
// leading dimension. `queue` (not null) is the queue to enqueue on; its
// context and device choose the kernel. `event` (may be null) gets the
// event of the last launch. `temp_buffer` (may be null): where the
// packing passes put A^T or B^T for the kernels that read an operand
// from global memory (the CPU-shaped ones), and B (or B^T, or A^T) in rows
// one cache line longer where its rows lie a multiple of 4 KiB apart (on
// a CPU: such rows share cache sets; matmul_padded_ldb; B only where 3 or
// more rows of the kernel's tiles read it), or, for one
// product whose B rows lie a page apart, op(B) packed into panels
// (matmul_b_panel_width: k x n elements in all), and C^T where one product
// runs as its transpose (a thin side: the pass then packs the thin
// operand, not the large one), and the partial products of a K split into
// parts (GemmKParts), of at least
// GemmTempBufferSize bytes (else kInsufficientMemoryTemp); null: a space
// fatcl keeps per in-order queue (ClearCache frees it), or one per call on
// an out-of-order queue.
// Returns kSuccess, the status of the first bad argument (checked in
// CLBlast's order: dimensions, leading dimensions, then each buffer's size
// against its offset and matrix), kNoDoublePrecision / kNoHalfPrecision on
// a device without the precision (nothing built), or the OpenCL error of the
// call that failed. GemmMessage() says why, in words.
template <typename T>
StatusCode Gemm(const Layout layout, const Transpose a_transpose, const Transpose b_transpose,
                const size_t m, const size_t n, const size_t k, const T alpha,
                const cl_mem a_buffer, const size_t a_offset, const size_t a_ld,
                const cl_mem b_buffer, const size_t b_offset, const size_t b_ld, const T beta,
                cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                cl_command_queue* queue, cl_event* event = nullptr,
                cl_mem temp_buffer = nullptr);

// The bytes Gemm's temp_buffer needs for this call on `queue`'s device
// (0 where the kernel chosen packs nothing), in temp_buffer_size; the
// kernel is chosen (and built) as the call would. The arguments are checked
// as Gemm checks them, but for the buffers.
template <typename T>
StatusCode GemmTempBufferSize(const Layout layout, const Transpose a_transpose,
                              const Transpose b_transpose, const size_t m, const size_t n,
                              const size_t k, const size_t a_offset, const size_t a_ld,
                              const size_t b_offset, const size_t b_ld, const size_t c_offset,
                              const size_t c_ld, cl_command_queue* queue,
                              size_t& temp_buffer_size);

// batch_count products, product i with alphas[i], betas[i] and its
// matrices at a_offsets[i], b_offsets[i], c_offsets[i]: one launch over the
// batch. kInvalidBatchCount where batch_count is 0.
template <typename T>
StatusCode GemmBatched(const Layout layout, const Transpose a_transpose,
                       const Transpose b_transpose, const size_t m, const size_t n,
                       const size_t k, const T* alphas, const cl_mem a_buffer,
                       const size_t* a_offsets, const size_t a_ld, const cl_mem b_buffer,
                       const size_t* b_offsets, const size_t b_ld, const T* betas,
                       cl_mem c_buffer, const size_t* c_offsets, const size_t c_ld,
                       const size_t batch_count, cl_command_queue* queue,
                       cl_event* event = nullptr);

// batch_count products, product i at a_offset + i * a_stride (B and C
// alike), all with alpha and beta: one launch over the batch.
template <typename T>
StatusCode GemmStridedBatched(const Layout layout, const Transpose a_transpose,
                              const Transpose b_transpose, const size_t m, const size_t n,
                              const size_t k, const T alpha, const cl_mem a_buffer,
                              const size_t a_offset, const size_t a_ld, const size_t a_stride,
                              const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
                              const size_t b_stride, const T beta, cl_mem c_buffer,
                              const size_t c_offset, const size_t c_ld, const size_t c_stride,
                              const size_t batch_count, cl_command_queue* queue,
                              cl_event* event = nullptr);

// fatcl's own, beyond CLBlast's API: the family of kernels the entry
// points choose from for `bits`-bit elements (16, 32, 64: hgemm_blocked,
// sgemm_blocked, dgemm_blocked), with its variants and ranking. Throws
// fatcl::Error for other bits.
const Family& gemm_family(int bits);
// The reference path for `bits`-bit elements (hgemm_naive, sgemm_naive,
// dgemm_naive: one work-item per element of C, every form): never chosen
// by itself; OverrideVariant forces its variant. Throws fatcl::Error for
// other bits.
const Family& gemm_naive_family(int bits);

// Batches of small products (hgemm_lanes, sgemm_lanes, dgemm_lanes: a
// work-item a column of a 32 x 32 tile, the blocked kernel's arguments,
// every form read in place). Not chosen by the entry points yet (its
// speed on the H200 against the blocked family's 32 x 32 points is not
// measured); OverrideVariant forces its points, and fatcl bench --gemm
// times them where GemmLanesFit says. Throws fatcl::Error for other bits.
const Family& gemm_lanes_family(int bits);
// Where gemm_lanes_family is meant for: on a GPU, two products or more, M,
// N and K each up to 45 (their size class, the nearest power of two, at
// most 32, as the entry points key their choices).
bool GemmLanesFit(const DeviceCaps& caps, std::size_t m, std::size_t n, std::size_t k,
                  std::size_t batch);
// Thin products on CPUs (hgemm_rows, sgemm_rows, dgemm_rows: a work-item
// all of C's rows over a stripe of columns, K in blocks on the outside, so
// that B is read along its rows; the blocked kernel's arguments, every
// form). The entry points run a product on it where GemmRowsFit holds (as
// the product runs, after a column-major call is turned around or a
// product taken as its transpose); OverrideVariant forces its points.
// Half precision keeps a chunk's running sum in float (MWG x NWG of it in
// local memory), C written once. Throws fatcl::Error for other bits.
const Family& gemm_rows_family(int bits);
// The most rows, and the fewest columns, of a few-rows product the entry
// points run on gemm_rows_family; a product of fewer columns than
// kGemmRowsFewColumns, or of up to kGemmRowsShortKColumns with K up to
// kGemmRowsShortK, or of rows of kGemmRowsLeastRowBytes or more (64 floats,
// 32 doubles) with K below kGemmRowsMostK, runs there whatever its rows; in
// half precision every product does (GemmRowsFit).
inline constexpr std::size_t kGemmRowsMostRows = 64, kGemmRowsLeastColumns = 256,
                             kGemmRowsFewColumns = 16, kGemmRowsShortKColumns = 64,
                             kGemmRowsShortK = 128, kGemmRowsLeastRowBytes = 256,
                             kGemmRowsMostK = 1024;
// Where gemm_rows_family is meant for: a CPU device without a loop limit
// (the driver quirk loop-limit-65536), K > 0; in single or double
// precision `batch` products of 1 to kGemmRowsMostRows rows and
// kGemmRowsLeastColumns columns or more, of a few columns, or of wide
// enough rows over a K below kGemmRowsMostK (above), with op(B) = B as they
// run (the last kind in every form, a product of a few columns also with
// op(B) = B^T where op(A) = A: the kernel transposes B^T a tile at a time),
// whose stripes of columns and blocks of rows (a work-item each) are at
// least the compute units; in half precision every product, op(B) = B^T
// too but with op(A) = A^T only over 64 columns or more that are not a few
// (the rows points ran 1.04 to 33 times the blocked ones' speed).
bool GemmRowsFit(const DeviceCaps& caps, int bits, std::size_t m, std::size_t n, std::size_t k,
                 std::size_t batch, bool b_trans, bool a_trans = false);
// A matrix times a vector whose matrix lies along K in memory (hgemm_dot,
// sgemm_dot, dgemm_dot: each row of it read once a pass of NS columns of
// the small operand, dot products, K over many work-items on a GPU and in
// one on a CPU; the blocked kernel's arguments, every form right, a product
// of fewer rows than columns taken as its transpose in place). The entry
// points run a product on it where GemmDotFit holds; OverrideVariant
// forces its points. Throws fatcl::Error for other bits.
const Family& gemm_dot_family(int bits);
// The most columns (of C's small side) a product the entry points run on
// gemm_dot_family has, and the fewest rows (its large side) and K.
inline constexpr std::size_t kGemmDotMostColumns = 1, kGemmDotLeastRows = 64,
                             kGemmDotLeastK = 256;
// Where gemm_dot_family is meant for: a GPU without a loop limit (the
// driver quirk loop-limit-65536), C's small side (the fewer of M
// and N, as the product runs) of kGemmDotMostColumns and its large side of
// kGemmDotLeastRows or more, K of kGemmDotLeastK or more, and the large
// operand along K (op(A) = A where M >= N, op(B) = B^T where M < N). On an
// H100 (2026-12-07) 8192 x 1 x 8192 ran 1.44 TFLOP/s there, 0.84 on the
// blocked family's thin tiles; with 4 columns it ran 0.71 of their speed.
// At K 256, 512 and 1000 (4096, 8192 and 1000 rows) it ran 1.45, 1.49 and
// 5.2 times their speed, at K 64 to 100 level (a launch's time).
bool GemmDotFit(const DeviceCaps& caps, std::size_t m, std::size_t n, std::size_t k,
                bool a_trans, bool b_trans);
// A vector times a matrix whose matrix lies along C's long side in memory
// (hgemm_axpy, sgemm_axpy, dgemm_axpy: each row of it read once a pass of
// MS rows of C, scaled and added, K over the work-group's rows of
// work-items and, where its columns leave a GPU's units idle, over parts
// that a second pass adds; the blocked kernel's arguments, every form
// right, a product of fewer columns than rows taken as its transpose in
// place). The entry points run a product on it where GemmAxpyFit holds;
// OverrideVariant forces its points. Throws fatcl::Error for other bits.
const Family& gemm_axpy_family(int bits);
// The most rows (C's small side) a product the entry points run on
// gemm_axpy_family has, and the fewest columns (its long side) and K.
inline constexpr std::size_t kGemmAxpyMostRows = 1, kGemmAxpyLeastColumns = 64,
                             kGemmAxpyLeastK = 64;
// Where gemm_axpy_family is meant for: a GPU without a loop limit, C's
// small side of kGemmAxpyMostRows and its long side of
// kGemmAxpyLeastColumns or more, K of kGemmAxpyLeastK or more, and the
// large operand along C's long side (op(B) = B where M <= N, op(A) = A^T
// where M > N): the forms of a one-row or one-column product that
// GemmDotFit does not take.
bool GemmAxpyFit(const DeviceCaps& caps, std::size_t m, std::size_t n, std::size_t k,
                 bool a_trans, bool b_trans);
// The families above for `bits`-bit elements, in that order: the blocked
// one, the reference path's, the lanes one, the rows one, the dot one, the
// axpy one (what OverrideVariant looks a name up in, and what fatcl
// validate --bundled predicts).
std::vector<const Family*> gemm_families(int bits);

// Forces the variant (one of gemm_family(bits)'s, gemm_naive_family(bits)'s
// or gemm_lanes_family(bits)'s, by name) and, where given, the tier that
// the entry points run `bits`-bit products with on `device`, for tests,
// benchmarks and experiments (CLBlast's OverrideParameters); "" lifts it. kInvalidOverrideKernel
// (GemmMessage() says why) for a name the families lack; a variant that
// then does not load makes the calls fail with the loader's reason.
StatusCode OverrideVariant(cl_device_id device, int bits, const std::string& variant,
                           std::optional<Tier> tier = std::nullopt);

// fatcl's own: the parts the entry points split one product's K into on
// `caps`'s device (a batch over the parts into the temporary space, then a
// pass that adds them into C): on a GPU whose compute units outnumber the
// product's 64 x 64 tiles, as many as bring the parts' tiles to 16 a unit
// at most, each part 512 of K at least, a power of two up to 32; 1
// elsewhere (a CPU, half precision). A batch is never split.
std::size_t GemmKParts(const DeviceCaps& caps, int bits, std::size_t m, std::size_t n,
                       std::size_t k);
// Forces the parts (1: none) that one `bits`-bit product's K is split into
// on `device` (32 and 64; for tests and experiments); 0 lifts it.
// kInvalidValue for half precision or more parts than kGemmMaxKParts.
constexpr std::size_t kGemmMaxKParts = 64;
StatusCode OverrideKParts(cl_device_id device, int bits, std::size_t parts);

// fatcl's own: learning the choice on the calls themselves (fatcl/online.hpp;
// also FATCL_TUNE=online, which `on` overrides either way). With it, the
// first calls of a (context, device, precision, form, size classes and
// alignments of M, N, K and the batch) that no entry measured on this
// device names run the current choice and up to options.candidates - 1
// more points of its family (online_candidates), each call computing the
// whole product; the learning calls finish the queue before and after
// themselves and are timed by the host clock, their passes included. Once
// every candidate ran its warm-up and timed rounds or was dropped, the
// fastest is kept for the class (the current choice unless another ran
// options.margin faster) and its tuning entry goes into `store` (null:
// the user's store, Store::user()), which the entry points then rank by,
// so the next run takes it at once. The class's first call builds the
// candidates (OnlineOptions::build_first). While a class is learned,
// GemmTempBufferSize gives the most any candidate's passes need; a call
// whose temporary buffer holds less than a candidate's passes need runs
// the current choice and leaves that candidate out. GemmLastCall() says
// which candidate a call ran and the learning's report. kSuccess.
StatusCode GemmLearnOnline(bool on, const OnlineOptions& options = {},
                           std::shared_ptr<Store> store = nullptr);

// Releases the kernels the entry points keep (CLBlast's ClearCache), and
// forgets what OverrideVariant, OverrideKParts and GemmLearnOnline set
// and the classes being learned; the next call builds again. kSuccess.
StatusCode ClearCache();

// The status's name, e.g. "kInvalidLeadDimA" ("" for a value CLBlast does
// not name).
const char* to_string(StatusCode status);
// Why the last entry-point call on this thread returned what it did, in
// words: the argument and the bound it broke, the device that lacks a
// precision, the OpenCL call that failed. "" after kSuccess.
std::string GemmMessage();
// What the last successful entry-point call on this thread ran, in words:
// the point and its tier, the row-major form and sizes it ran as (a
// column-major call, a product computed as its transpose), the passes
// before it (A^T or B^T packed, B in panels or longer rows, K in parts)
// and its launches; then, on the lines after, the loader's explanation of
// that choice (the tuning entry and the model's figures that ranked it).
// "" after a call that failed or only asked GemmTempBufferSize.
std::string GemmLastCall();

}  // namespace fatcl
