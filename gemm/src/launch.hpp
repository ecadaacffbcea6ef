// What the GEMM entry points share with the families' trial launch: one
// launch of gemm_blocked (kernels/gemm_blocked.cl) over a batch.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "fatcl/gemm.hpp"

namespace fatcl::detail {

// One launch's arguments, row-major (the entry points turn a column-major
// call around): C = alpha * op(A) * op(B) + beta * C over K from k_begin
// (k elements of it), beta taken as 1 where `accumulate`. Per product z of
// the batch: offsets *_offset + z * *_stride, or, with `per_batch`, read
// from batch_offsets (A, B, C per product) and batch_scalars (alpha, beta).
struct GemmLaunch {
  std::size_t m = 0, n = 0, k = 0, k_begin = 0;
  bool accumulate = false;
  double alpha = 1, beta = 0;  // in the kernel's type (float for half)
  cl_mem a = nullptr, b = nullptr, c = nullptr;
  std::size_t a_offset = 0, b_offset = 0, c_offset = 0;
  std::size_t a_ld = 0, b_ld = 0, c_ld = 0;
  bool a_trans = false, b_trans = false;
  std::size_t a_stride = 0, b_stride = 0, c_stride = 0;
  std::size_t batch = 1;
  bool per_batch = false;
  cl_mem batch_offsets = nullptr;  // cl_long, 3 per product
  cl_mem batch_scalars = nullptr;  // the kernel's type, 2 per product
  // The device's compute units: the rows family with op(B) = B^T shares C
  // among them (rows_grid).
  std::size_t units = 1;
};

// What the last successful entry-point call on this thread ran, as
// GemmLastCall() words it: the point and its tier, then `how` (the form and
// sizes it ran as, its passes and launches) and why the loader chose the
// point. A quick return (nothing to compute) has `how` alone.
struct GemmLastRun {
  std::string variant;
  Tier tier = Tier::Source;
  std::string how;
  std::shared_ptr<const Explanation> explanation;
  // A tuning entry measured on this device at the product's size class
  // ranked the point (fatcl bench --gemm's tuned sizes).
  bool tuned = false;
  // Where the call's class was being learned (GemmLearnOnline): the
  // learning's report.
  std::string online;
};
GemmLastRun gemm_last_run();

// Enqueues `kernel` (a variant of gemm_family(bits)) for `l` after `wait`
// and returns its event, or nullptr where `event` is false (NVIDIA's driver
// spends about 1.6 us of the device's time on each launch's event: 10,000
// products of 32^3 took 43.0 us a call with one, 41.4 without, H200,
// 2026-12-04). Throws fatcl::Error naming the call that failed.
cl_event launch_gemm(cl_command_queue queue, cl_kernel kernel, const Variant& variant, int bits,
                     const GemmLaunch& l, const std::vector<cl_event>& wait, bool event = true);

// The rows family with op(B) = B^T (kernels/gemm_rows.cl) transposes B a
// tile at a time (rows_tile_width columns: NV vectors of the precision's
// register, 16 floats or 8 doubles), and a work-item computes a share of C
// that the NDRange sets: `groups` shares of C's rows (of about
// kRowsGroupRows rows) times `stripes` shares of its columns (whole tiles,
// up to the variant's NWG), fewer stripes where that still gives
// kRowsItemsPerUnit work-items a compute unit, then more groups (none under
// kRowsLeastGroupRows rows where C has them). A tile serves a share's rows;
// a stripe's tiles read the same block of A, which the caches keep for a
// few hundred rows. At 900 x 320 x 700 (Intel's CPU runtime, 2 Xeon cores,
// 2026-12-07) stripes one tile wide over shares of 64, 128, 256 and all 900
// rows took 1.21, 1.16, 1.17 and 1.48 times row NN's time (A read again
// for every tile), at 512^3 1.11, 1.03, 0.99 and 0.97.
inline constexpr std::size_t kRowsGroupRows = 256, kRowsItemsPerUnit = 2, kRowsLeastGroupRows = 64;
struct RowsGrid {
  std::size_t stripes, groups;
};
std::size_t rows_tile_width(const Variant& variant, int bits);
RowsGrid rows_grid(std::size_t m, std::size_t n, std::size_t batch, std::size_t units,
                   std::size_t tile_width, std::size_t stripe_most);

// The share of a blocked variant's tiles over an m x n C that is C's, not
// padding (1 where nothing pads).
double tiles_share_of_c(const Variant& variant, std::size_t m, std::size_t n);

// gemm_transpose (kernels/gemm_transpose.cl), one variant per element
// size: BITS 16, 32, 64.
const Family& gemm_transpose_family();
// Enqueues T[z] = X[z]^T for a rows x cols row-major X (leading dimension
// ld, product z at offset + z * stride, or, where per_batch, at the GEMM's
// offsets batch_offsets[3z + which]: 0 A's, 1 B's), T cols x rows per
// product with rows t_ld apart, from element t_offset of t (product z at
// t_offset + z * cols * t_ld): `blocks` (gemm_transpose) moves the whole
// blocks of 8 rows and 16 columns, `edge` (gemm_transpose_edge) the rest,
// each launched where it has work, after `wait`; returns their events,
// which the caller owns.
std::vector<cl_event> launch_transpose(cl_command_queue queue, cl_kernel blocks, cl_kernel edge,
                                       std::size_t rows, std::size_t cols, cl_mem x,
                                       std::size_t offset, std::size_t ld, std::size_t stride,
                                       cl_mem batch_offsets, bool per_batch, int which, cl_mem t,
                                       std::size_t t_offset, std::size_t t_ld, std::size_t batch,
                                       const std::vector<cl_event>& wait);

// The parts of K that the axpy family's point `variant` takes an m x n x k
// product in on a GPU (1 elsewhere): enough work-groups for several a
// compute unit, each part at least 16 of its steps of K.
std::size_t axpy_k_parts(const Variant& variant, const DeviceCaps& caps, std::size_t m,
                         std::size_t n, std::size_t k);

// gemm_sum_parts (kernels/gemm_sum_parts.cl), one variant per precision:
// PRECISION 32, 64.
const Family& gemm_sum_parts_family();
// Enqueues C = alpha * (the sum of `parts` partial m x n products) + beta *
// C after `wait` (C not read where beta is 0): part p in rows of n from
// element w_offset + p * m * n of w, C m x n from c_offset with rows c_ld
// apart; returns its event, which the caller owns.
cl_event launch_sum_parts(cl_command_queue queue, cl_kernel kernel, int bits, std::size_t m,
                          std::size_t n, std::size_t parts, cl_mem w, std::size_t w_offset,
                          double alpha, double beta, cl_mem c, std::size_t c_offset,
                          std::size_t c_ld, const std::vector<cl_event>& wait);

// An operand of `rows` x `cols` as a call stores it (the transpose where
// `trans`): its rows and columns and, in `layout`, its extent along its
// leading dimension (`one`) and across it (`two`).
struct Stored {
  char name;
  std::size_t rows, cols, one, two;
};
Stored stored(char name, Layout layout, bool trans, std::size_t rows, std::size_t cols);

// Element i of a host copy of `bits`-bit elements, read and written as a
// double (half through float, rounding to nearest even).
double element(const std::vector<unsigned char>& bytes, int bits, std::size_t i);
void set_element(std::vector<unsigned char>& bytes, int bits, std::size_t i, double x);

// IEEE 754 binary16 <-> float, rounding to nearest even.
float half_to_float(cl_half h);
cl_half float_to_half(float f);

}  // namespace fatcl::detail
