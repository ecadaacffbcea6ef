// fatcl tune: measures the SGEMM variants that fit a device (by default of
// the family that serves each size), for one or more problem sizes, within a time budget, every
// result checked against a double-precision reference, and turns the measurements into tuning
// entries (fatcl/store.hpp) that the loader then trusts.
//
// The search: the family's own ranking first, then the variant nearest in
// parameters to the fastest so far (refining around the best), every third
// pick the next of the ranking (so a poor start cannot trap it); all of them
// when the budget allows, which it estimates from the measurements so far.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fatcl/bench.hpp"
#include "fatcl/store.hpp"

namespace fatcl {

struct TuneOptions {
  std::vector<BenchShape> shapes;  // empty: default_tune_shapes()
  double budget_seconds = 30;      // for all shapes together, builds included
  int repetitions = 5;             // timed launches per variant (median), at least 5
  // Measure in this tier only; none: each variant in every tier the device
  // takes for it (SPIR-V, PTX, source), each a candidate of its own.
  std::optional<Tier> tier;
  // Progress lines (variant i of n, elapsed, best so far, time left); may be empty.
  std::function<void(const std::string&)> progress;
  // Set (e.g. by a SIGINT handler) to stop after the measurement in flight;
  // what was measured is kept.
  const std::atomic<bool>* stop = nullptr;
  // The families to measure at each shape, one entry each, so that Auto
  // weighs them against each other (choose_matmul_family): each listed
  // family that may serve the shape (few-rows only where M <= kMatmulSkinny,
  // few-columns only where N <= kMatmulSkinny). Empty: the one family that
  // serves the shape by the rule (matmul_family_for). The budget is shared
  // equally by every (shape, family).
  std::vector<MatmulKernel> families;
};

// The families run_tune measures at a shape (TuneOptions::families).
std::vector<MatmulKernel> tune_families(const TuneOptions& options, const BenchShape& shape,
                                        const DeviceCaps& caps);

// CPUs 1024^3; GPUs 4096^3 and 8192^3.
std::vector<BenchShape> default_tune_shapes(const DeviceCaps& caps);

struct TuneMeasurement {
  std::string variant;
  Tier tier = Tier::SpirV;  // the tier it was measured in
  double ms = 0;            // median launch time
  double gflops = 0;
  double relative_error = 0;
  bool ok = false;
  std::string failure;  // why it did not run or load, "" if it did
};

struct TuneShapeResult {
  BenchShape shape;
  std::string family;                     // the family tuned for it
  std::size_t candidates = 0;             // (variant, tier) builds the device takes
  std::vector<TuneMeasurement> measured;  // in the order measured
  bool exhaustive = false;                // every candidate measured
  std::optional<TuningEntry> entry;       // the checked results ranked, if any ran
};

struct TuneReport {
  std::string device;  // DeviceCaps::summary()
  std::string date;
  std::string timing;  // how launches were timed
  double seconds = 0;  // wall time
  bool interrupted = false;
  std::size_t unmeasured = 0;  // (size, family) pairs left out: the budget was spent
  std::vector<TuneShapeResult> shapes;
  std::string to_text() const;
  std::string to_json() const;
};

// Runs the search. Throws fatcl::Error if the device cannot be queried or a
// buffer cannot be allocated; variants that fail are results with reasons.
TuneReport run_tune(const cl::Context& context, const cl::Device& device,
                    const TuneOptions& options);

// One thing tune measures: a variant in a tier.
struct TuneCandidate {
  const Variant* variant = nullptr;
  Tier tier = Tier::SpirV;
  std::string key() const;  // "variant/tier"
};

// The search order, apart from any device (what the tests drive with
// made-up timings): the ranking's first, then the unmeasured candidate
// nearest in parameters (the sum of log2 distances) to the fastest so far,
// every third pick the ranking's next unmeasured one, and the ranking's
// next while nothing has run; each candidate once.
class TuneSearch {
 public:
  explicit TuneSearch(std::vector<TuneCandidate> ranked);
  TuneSearch(const TuneSearch&) = delete;  // best() points into it
  TuneSearch& operator=(const TuneSearch&) = delete;
  // The next candidate to measure; null once every one was.
  const TuneCandidate* next();
  // What the candidate next() gave ran at; 0 (or less) where it failed.
  void record(const TuneCandidate& candidate, double gflops);
  const TuneCandidate* best() const { return best_; }
  double best_gflops() const { return best_gflops_; }
  std::size_t picked() const { return picked_; }
  std::size_t size() const { return ranked_.size(); }

 private:
  std::vector<TuneCandidate> ranked_;
  std::vector<bool> done_;
  std::size_t picked_ = 0, next_in_ranking_ = 0;
  const TuneCandidate* best_ = nullptr;
  double best_gflops_ = 0;
};

// Parses "30s", "2m", "90" (seconds); throws fatcl::Error naming the text.
double parse_budget(const std::string& text);

}  // namespace fatcl
