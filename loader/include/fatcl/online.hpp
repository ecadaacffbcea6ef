// Learning in the field (opt-in: FATCL_TUNE=online, or a family user's
// option such as MatmulOptions::online). On the first calls of a problem
// class that no entry measured on this device names, a family's user times
// the leading candidates on the real calls, one candidate per call, each
// call still computing its whole result with a variant that loaded; the
// fastest is then kept as a tuning entry in the store, so that the next run
// loads it at once. The other candidates are built when the class is first
// met, before its first call runs (OnlineOptions::build_first), or on a
// thread of their own while the calls go on; the timing starts once they
// are built.
//
// What it costs, bounded: the class's first use builds up to `candidates`
// - 1 more variants (from the program cache where it has them); while
// learning, each timed call waits for the queue to finish before and after
// it (the calls in between stay asynchronous), and each candidate is timed
// at most `rounds` times after `warmup` calls, one that ran `drop_factor`
// times slower than the fastest no more after that.
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fatcl/loader.hpp"

namespace fatcl {

// FATCL_TUNE=online.
bool online_tuning_requested();

struct OnlineOptions {
  std::size_t candidates = 3;  // the current choice and up to 2 more
  int rounds = 2;              // timed calls per candidate (after the warm-up)
  double drop_factor = 3;      // slower than this times the fastest: timed once only
  // Calls per candidate before its timings count: a driver may finish
  // building a kernel at its first launch (PoCL compiles for the work-group
  // size then), which is not the kernel's speed.
  int warmup = 1;
  // Another candidate replaces the current choice only when its lowest time
  // is at least this much faster than the current's: two timings a
  // candidate are noisy on a busy CPU (on 2 cores of a Zen 4, 2026-12-01,
  // learning without a margin kept variants the bench then timed at
  // 0.75-0.84 of the current choice).
  double margin = 1.10;
  // Build the other candidates when the class is first met, before its
  // first call (true), or on a thread of their own while the calls run the
  // current choice (false). A call made beside a build waits for the driver
  // on NVIDIA (16x the choice's time at 2000x2000x300 on the H200,
  // 2026-12-01) and shares the cores on a CPU; building first puts that
  // cost into the first use, which builds the current choice anyway, and
  // lets the timing start at the first call.
  bool build_first = true;
};

// Which candidate the next call runs, apart from any device (the tests
// drive it with made-up timings). Candidate 0 is the current choice, ready
// from the start; the others become ready as they are built, or fail. Once
// none is still being built (a build takes cores from a CPU's call), each
// ready candidate runs `warmup` calls and is then timed `rounds` times, the
// least run first; one slower than drop_factor times the fastest so far is
// not run again (a warm-up: than the fastest call of any kind so far, since
// each candidate's first call is a warm-up).
// Meanwhile, and once settled, the calls run the fastest so far.
class OnlineTrial {
 public:
  explicit OnlineTrial(std::size_t candidates, const OnlineOptions& options = {});

  void ready(std::size_t candidate);
  void fail(std::size_t candidate);
  struct Turn {
    std::size_t candidate = 0;
    bool timed = false;  // the call is one of the candidate's timings
  };
  Turn next() const;
  void record(std::size_t candidate, double ms);
  // Every candidate failed, or was timed its rounds or dropped.
  bool settled() const;
  // The candidate with the lowest time so far, the current choice (0)
  // unless another is `margin` faster (0 before any timing).
  std::size_t best() const;
  // Its lowest time; infinity where it has none.
  double best_ms(std::size_t candidate) const;
  std::size_t timings(std::size_t candidate) const;
  bool dropped(std::size_t candidate) const;
  std::size_t size() const { return state_.size(); }

 private:
  struct State {
    bool ready = false, failed = false, dropped = false;
    int runs = 0;            // warm-up calls included
    std::vector<double> ms;  // the timings that count
  };
  std::vector<State> state_;
  OnlineOptions options_;
  double fastest_seen_ = std::numeric_limits<double>::infinity();  // any call, warm-ups too
};

// The variants an online choice tries for a problem, at most `n`: `current`
// first, then the plan load() would walk for these options (a tuning entry's
// order, else the family's model of the problem, else its ranking), then
// the fastest of each entry measured on a device of this platform and type
// near the problem (each size within 4 times the problem's: the store's and
// the family's shipped entries, this device's other size classes among
// them), the most similar device first; none that the entry ranking the
// plan predicts at under a third of the current choice's rate (its rates
// carried to the problem by the family's model), or, without an entry,
// the family's model of the problem (Ranking::shape_score) does.
std::vector<std::string> online_candidates(const Family& family, const DeviceCaps& caps,
                                           const LoadOptions& options, const std::string& current,
                                           std::size_t n);

// One problem class being learned: the candidates' builds, their timings,
// and at the end the entry in the store.
class OnlineChoice {
 public:
  // `current` is the kernel the calls would run otherwise (candidate 0);
  // the other variants are loaded with `load` (its store and cache) here
  // (OnlineOptions::build_first) or on a thread of this object's, each in
  // the tier `load`'s ranked plan tries it first (a tuning entry's tier
  // where it measured one), else the first that loads. The entry goes into
  // load.store (null: Store::user()).
  OnlineChoice(const cl::Context& context, const cl::Device& device, const Family& family,
               std::vector<std::size_t> problem, LoadedKernel current,
               std::vector<std::string> variants, LoadOptions load,
               const OnlineOptions& options = {});
  ~OnlineChoice();  // waits for a build and a save in flight
  OnlineChoice(const OnlineChoice&) = delete;
  OnlineChoice& operator=(const OnlineChoice&) = delete;

  struct Turn {
    const LoadedKernel* kernel = nullptr;
    std::size_t candidate = 0;
    bool timed = false;  // time this call (host clock around a finished queue)
  };
  Turn next();
  // A timed turn's call took `ms` for `operations` (the entry's rate is
  // operations / ms, as GFLOP/s for a flop count). Once every candidate is
  // settled, the entry is put into the store, and the store saved on a
  // thread of this object's (a store that cannot be written leaves a note
  // in report()): the call that settles does not wait for the file.
  void record(const Turn& turn, double ms, double operations);
  bool settled() const;
  // The store is being saved (keep this object until it is not, or let
  // its destructor wait).
  bool saving() const;
  // The fastest so far; once settled, its explanation's tuning paragraph
  // says what was timed.
  const LoadedKernel& choice() const;
  // "online: 4 candidates for 1024x1024x1024, 8 timed calls: <variant>
  // 2.10 ms (chosen), ...".
  std::string report() const;
  // The candidates, and each one's kernel once built (null before, or where
  // it did not load or was left out).
  std::size_t size() const;
  const LoadedKernel* candidate(std::size_t c) const;
  // Leaves candidate c (not the current choice, 0) out of the trial for a
  // reason the caller knows (a call cannot run it: the GEMM entry points'
  // temporary buffer too small for its passes), said in report().
  void leave_out(std::size_t c, const std::string& why);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Tuning any family that gives a timing launch (FamilyDescription::timing):
// each variant that fits the device, in its first tier that loads, timed on
// each problem (median of `repetitions` runs by the host clock around a
// finished queue); an entry per problem, ranked fastest first, put into the
// store (null: Store::user()) and saved, as fatcl tune does for the SGEMM.
struct FamilyTuneOptions {
  int repetitions = 5;
  std::string form;  // the entries' TuningEntry::form
  std::shared_ptr<Store> store;
  std::shared_ptr<ProgramCache> cache;
};
struct FamilyTuneReport {
  std::vector<TuningEntry> entries;   // one per problem where a variant ran
  std::vector<std::string> failures;  // "variant: why" for each that did not load or run
  std::string store_note;             // "" or why the store could not be written
};
// Throws fatcl::Error if the family has no timing launch or the launch
// cannot set a problem up.
FamilyTuneReport tune_family(const cl::Context& context, const cl::Device& device,
                             const Family& family,
                             const std::vector<std::vector<std::size_t>>& problems,
                             const FamilyTuneOptions& options = {});

}  // namespace fatcl
