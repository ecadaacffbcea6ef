// A benchmark of the GEMM entry points in one form (precision, layout,
// op(A), op(B), batch) on one device, in one run: the automatic choice, each
// variant of the precision's family forced in turn (OverrideVariant), and
// any routine from outside fatcl (the fatcl command adds CLBlast's same
// call), every result checked on sampled rows against a double-precision
// reference. Reports; never fails on a time.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fatcl/bench.hpp"
#include "fatcl/gemm.hpp"
#include "fatcl/vendor_blas.hpp"

namespace fatcl {

struct GemmForm {
  int bits = 32;  // 16, 32, 64
  Layout layout = Layout::kRowMajor;
  Transpose a_transpose = Transpose::kNo, b_transpose = Transpose::kNo;
  std::size_t batch = 1;  // > 1: GemmStridedBatched
  // "single, row-major, op(A) = A, op(B) = B^T, 100 products"
  std::string describe() const;
};

// Every op(A) x op(B) in each of `layouts` (in that order; NN, NT, TN, TT
// within each), of one precision and batch.
std::vector<GemmForm> gemm_forms(int bits, std::size_t batch, const std::vector<Layout>& layouts);

// One call as the bench makes it: alpha 1, beta 0, the least leading
// dimensions, products one after the other (stride: one matrix).
struct GemmCall {
  std::size_t m = 0, n = 0, k = 0;
  cl_mem a = nullptr, b = nullptr, c = nullptr;
  std::size_t a_ld = 0, b_ld = 0, c_ld = 0;
  std::size_t a_stride = 0, b_stride = 0, c_stride = 0;
};
// A routine from outside fatcl: enqueue the call in the form and return ""
// or why it failed.
struct GemmExternal {
  std::string name;
  std::function<std::string(cl_command_queue, const GemmForm&, const GemmCall&)> run;
};

struct GemmBenchOptions {
  GemmForm form;
  std::vector<BenchShape> shapes;  // empty: default_shapes()
  int repetitions = 5;             // timed runs per kernel and size (median)
  bool variants = true;            // each variant forced, beside the automatic choice
  std::size_t top = 0;             // of those, the family's first N for the device; 0: every one
  // The reference path (gemm_naive_family) as the baseline, timed once
  // after its checked run (it is there to be right, not fast).
  bool reference = true;
  // Each variant in each of these tiers that the device takes it in (timed
  // as separate entries: what fatcl tune --gemm ranks); empty: in the
  // loader's order.
  std::vector<Tier> tiers;
  std::vector<GemmExternal> external;
  // The vendor's BLAS (find_vendor_gemm), timed in the single-precision,
  // row-major, untransposed form of one product (the call VendorGemm
  // makes); `no_vendor` says why none is, or why a form has none.
  std::optional<VendorGemm> vendor;
  std::string no_vendor;
  // Also call each size this many times as a product learning its choice
  // online would (GemmLearnOnline, shipped entries only), each call timed
  // and checked, after the other calls (it clears the entry points' cache).
  int online_calls = 0;
  std::function<void(const std::string&)> progress;  // may be empty
};

struct GemmBenchEntry {
  std::string kernel;   // "auto", "variant", "naive", the external routine's or the vendor's name
  std::string variant;  // the forced variant; "" for auto and external ones
  std::optional<Tier> tier;  // the forced tier; none: the loader's order
  double ms = 0, gflops = 0;
  double relative_error = 0;  // sampled rows against the double-precision reference
  bool ok = false;
  std::string failure;  // why it did not run; "" if it did
  bool vendor = false;  // the vendor's BLAS (GemmBenchOptions::vendor)
  // The automatic choice: the point and tier its checked call ran ("" where
  // none ran), and how (GemmLastCall()'s words: the form it ran as, its
  // passes and launches).
  std::string chosen;
  Tier chosen_tier = Tier::Source;
  std::string ran;
};
struct GemmBenchRow {
  BenchShape shape;
  std::vector<GemmBenchEntry> entries;
  // 0: none ran right
  double best_fatcl_gflops = 0, external_gflops = 0, vendor_gflops = 0;
  // A tuning entry measured on this device at the size class the automatic
  // choice's product ran at ranked its point (as fatcl bench counts sizes).
  bool tuned = false;
  std::optional<BenchOnline> online;  // GemmBenchOptions::online_calls
};
struct GemmBenchReport {
  std::string device;
  GemmForm form;
  std::string vendor;  // its name, or "none: " and why
  std::vector<GemmBenchRow> rows;
  std::string to_text() const;
  std::string to_json() const;
};

// Throws fatcl::Error where the device lacks the precision, or a size does
// not fit (check_problem_fits, per product times the batch).
GemmBenchReport run_gemm_bench(const cl::Context& context, const cl::Device& device,
                               const GemmBenchOptions& options);

// The tuning entries a bench row makes (fatcl tune --gemm): one per family
// of the form's precision whose variants ran (the blocked one; the rows,
// dot and axpy ones where the row timed their points), each variant forced
// in a tier that ran right, fastest first, keyed by the row-major twin's
// form ("NN", "NT", "TN", "TT": a column-major call runs as the row-major
// product of its operands swapped, so its entry is that product's, M and N
// swapped) and the problem {M, N, K, batch}; none where no variant in a
// tier ran right.
// `who`: TuningEntry::provenance's first words ("fatcl tune").
std::vector<TuningEntry> gemm_tuning_entries(const GemmForm& form, const GemmBenchRow& row,
                                             const DeviceCaps& caps, const std::string& who);
// The form key and the problem of a call in `form` of m x n x k
// (gemm_tuning_entries', and what the entry points look up).
std::string gemm_tuning_form(const GemmForm& form);
std::vector<std::size_t> gemm_tuning_problem(const GemmForm& form, std::size_t m, std::size_t n,
                                             std::size_t k);

// Every layout x op(A) x op(B) of one precision and batch at each size,
// through the automatic choice, beside any routine from outside fatcl in
// the same forms, each result checked, then all of them timed in turn
// (interleaved_median_ms, so that a machine's drift hits each alike): what
// a transpose or the column-major layout costs against the row-major,
// untransposed call of the same size, and each form against CLBlast's.
struct GemmFormsOptions {
  int bits = 32;
  std::size_t batch = 1;
  std::vector<BenchShape> shapes;  // empty: default_shapes()
  int repetitions = 5;
  std::vector<GemmExternal> external;
  std::function<void(const std::string&)> progress;  // may be empty
};
struct GemmFormTiming {
  GemmForm form;
  std::string kernel;  // "auto" or the external routine's name
  double ms = 0, gflops = 0, relative_error = 0;
  bool ok = false;
  std::string failure;
};
struct GemmFormsRow {
  BenchShape shape;
  std::vector<GemmFormTiming> timings;  // fatcl's eight forms first, row-major NN the first
};
struct GemmFormsReport {
  std::string device;
  int bits = 32;
  std::size_t batch = 1;
  std::vector<GemmFormsRow> rows;
  std::string to_text() const;
  std::string to_json() const;
};
GemmFormsReport run_gemm_forms_bench(const cl::Context& context, const cl::Device& device,
                                     const GemmFormsOptions& options);

}  // namespace fatcl
