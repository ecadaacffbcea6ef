// Benchmarks of the bundled SGEMM families on one device, in one run: the
// naive kernel, the tiled variants, the register-blocked variants
// and any external kernel (the fatcl command adds CLBlast), over a list of
// sizes, every result checked against a double-precision reference, with the
// variant the loader chooses by itself measured alongside. A benchmark
// reports; it never fails on a time.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fatcl/checked_run.hpp"
#include "fatcl/matmul.hpp"
#include "fatcl/vendor_blas.hpp"

namespace fatcl {

struct BenchShape {
  std::size_t m, n, k;
  std::string label() const;  // "1024" for a cube, else "4096x4096x256"
  double flop() const { return 2.0 * double(m) * double(n) * double(k); }  // multiply-adds x 2
};
// "1024" or "4096x4096x256", comma-separated; throws fatcl::Error naming the
// entry at fault (each dimension 1 to 65536).
std::vector<BenchShape> parse_shapes(const std::string& text);
// Throws fatcl::Error naming the size and the limit if an M x N x K product
// of floats cannot be held: a matrix larger than the device's largest
// buffer, the three larger than its global memory, or the host copies a
// run makes (A, B and C) larger than this machine's memory. `who` starts
// the message. Checked before anything is allocated.
void check_problem_fits(const DeviceCaps& caps, std::size_t m, std::size_t n, std::size_t k,
                        const std::string& who);
// The default sweep: CPUs 256...2048, GPUs 1024...8192, plus non-square
// shapes of each class.
std::vector<BenchShape> default_shapes(const DeviceCaps& caps);

// Median over `reps` timings of `run` (at least one), by the host clock
// around a finished queue. Not device timestamps: CLBlast's GEMM may run
// several kernels and hands back only its last one's event, and rusticl
// 22.3's timestamps read zero; one clock for every kernel keeps the ratios
// honest. The first timing is of one run; where that took under kBatchMs,
// each later one is of a batch of back-to-back runs lasting about that long
// (at most kMaxBatch), divided by their number: a finished queue's round
// trip (tens of microseconds on NVIDIA's driver) would otherwise count
// against a kernel of a hundred.
constexpr double kBatchMs = 2.0;
constexpr int kMaxBatch = 64;
double median_ms(const cl::CommandQueue& queue, const std::function<void()>& run, int reps);
// The same for several runs taken in turn (run 0, run 1, ..., run 0, ...), so
// that a machine that slows down or speeds up mid-way affects each alike:
// how bench compares one variant's SPIR-V and source tiers.
std::vector<double> interleaved_median_ms(const cl::CommandQueue& queue,
                                          const std::vector<std::function<void()>>& runs, int reps);

// A kernel from outside fatcl timed next to it (CLBlast's SGEMM): enqueue
// C = A * B (row-major, M x N x K) and return; "" or the reason it failed.
struct ExternalKernel {
  std::string name;
  std::function<std::string(const cl::CommandQueue&, const cl::Buffer& a, const cl::Buffer& b,
                            const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k)>
      run;
};

struct BenchOptions {
  std::vector<BenchShape> shapes;  // empty: default_shapes()
  std::size_t top = 0;             // blocked variants: the family's top N; 0: every one
  std::vector<Tier> tiers;         // each fatcl variant in each of these (timed in turn);
                                   // empty: the loader's choice (the automatic choice
                                   // always has it)
  int repetitions = 5;             // timed runs per kernel and size (median)
  // A fatcl kernel that ran at 1/slow_factor of the fastest result or less
  // at one size, taking 50 ms or more there, is still checked at the sizes
  // after, and where a run would
  // take 50 ms or more at its rate then, that checked run is its one timing
  // (its result says so): a CPU's naive kernel takes tens of seconds a run
  // at 2048. At most 1: every kernel gets every round.
  double slow_factor = 10;
  std::vector<ExternalKernel> external;
  // The vendor's BLAS (find_vendor_gemm), timed after the other kernels of
  // each size on the same inputs, its copies untimed; none: `no_vendor`
  // says why, for the report.
  std::optional<VendorGemm> vendor;
  std::string no_vendor;
  // After the other kernels of a size: a fresh Matmul learning online
  // (MatmulOptions::online, with the shipped entries only) called this many
  // times on the size, each call timed and its result checked; 0: none.
  int online_calls = 0;
  // Progress lines ("[i/n] size: kernel (elapsed, about N s left)"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct BenchResult {
  std::string kernel;        // "naive", "tiled", "blocked", an external kernel's or the vendor's name
  std::string variant;       // "" for external kernels
  std::optional<Tier> tier;  // none for external kernels
  double ms = 0;             // median of the timed runs
  double gflops = 0;
  double relative_error = 0;  // against the double-precision reference
  bool ok = false;            // error within kMatmulTolerance
  int rounds = 0;             // timed runs behind `ms`
  std::string note;           // e.g. "timed once: 0.007x the fastest at 1024"
  std::string failure;        // why it did not run, "" if it did
  bool vendor = false;        // the vendor's BLAS (BenchOptions::vendor)
};

// A product's first calls of one shape while the choice is learned online.
// After the calls asked for, the bench calls on (untimed) for at most this
// long until the choice is made, then times it.
constexpr double kOnlineSettleSeconds = 30;
struct BenchOnline {
  // The shape's first use before its first call (the builds: the current
  // choice's, and the candidates' where it learns), then each call, host
  // clock around a finished queue.
  double first_use_ms = 0;
  std::vector<double> call_ms;
  bool all_ok = true;  // every call's result checked right
  // The call after which the choice was made (the bench calls on past
  // call_ms, up to kOnlineSettleSeconds, until it is); 0: not made.
  std::size_t settled_at = 0;
  bool learned = false;  // false: an entry measured here decided, nothing learned
  std::string choice;    // the variant the calls run in the end, and its tier
  std::optional<Tier> choice_tier;
  double choice_gflops = 0;  // timed like the other kernels, after the calls
  std::string report;        // OnlineChoice::report
  // The median of the calls (within call_ms) after the choice was made, and
  // the slowest call over it: of all calls, and of all but the first (whose
  // kernel a driver may still be building, learning or not); 0 where no
  // call ran the choice.
  double choice_call_ms() const;
  double slowest_vs_choice(bool with_first) const;
  // The report's lines (indented, each ending in a newline) and its JSON
  // object, against the size's fastest fatcl rate (0: none ran).
  std::string to_text(double best_gflops) const;
  std::string to_json(double best_gflops) const;
};

// The automatic choice against the fastest fatcl result over a group of
// sizes (a bench's tuned or untuned ones), one ratio a size: how many, their
// geometric mean and the lowest. A ratio of 0 (the automatic choice did not
// run) makes the mean 0. None for no sizes. Both benches' summaries.
struct ChoiceSummary {
  std::size_t sizes = 0;
  double geomean = 0, lowest = 0;
};
std::optional<ChoiceSummary> summarize_choice(const std::vector<double>& auto_vs_best);

struct BenchSize {
  BenchShape shape;
  std::optional<BenchOnline> online;
  std::vector<BenchResult> results;  // in the order run
  std::string auto_variant;          // what fatcl::Matmul chooses by itself for this shape
  std::optional<Tier> auto_tier;     // and in which tier
  std::string auto_tuning;           // the tuning entry that decided, or why none did
  // A tuning entry measured for this size class on this device and driver
  // (its name, or a pattern an older entry used) decided the automatic
  // choice; false: an entry of another size class or of a similar device,
  // or the family's ranking, did.
  bool tuned = false;
  double auto_gflops = 0;
  std::string heuristic_variant;  // what it chooses without the store
  std::optional<Tier> heuristic_tier;
  double heuristic_gflops = 0;
  const BenchResult* best_fatcl() const;  // fastest checked fatcl result, or nullptr
  const BenchResult* vendor() const;      // the vendor's checked result, or nullptr
  const BenchResult* clblast() const;     // an external kernel's checked result, or nullptr
  const BenchResult* find(const std::string& kernel, const std::string& variant = "") const;
};

struct BenchReport {
  std::string device;  // DeviceCaps::summary()
  std::string date;    // UTC, ISO 8601
  std::string vendor;  // the vendor BLAS timed, or "none: <why>"
  std::vector<BenchSize> sizes;
  std::string to_text() const;
  // One document; for each size best_fatcl_vs_clblast (when CLBlast ran),
  // best_fatcl_vs_vendor (when the vendor BLAS ran), auto_vs_best (with the
  // store) and heuristic_vs_best (without).
  std::string to_json() const;
  // GFLOP/s against size, a line per kernel: naive, best tiled, the
  // automatic choice with and without tuning, the best blocked variant,
  // each external kernel.
  std::string to_svg() const;
};

// Runs the benchmark. Throws fatcl::Error if the device cannot run the
// naive kernel or a buffer cannot be allocated; a variant that fails to load
// or compute is a result with its failure.
BenchReport run_bench(const cl::Context& context, const cl::Device& device,
                      const BenchOptions& options);

}  // namespace fatcl
