// bench's and tune's view of one checked run (its verdict in a BenchResult) and of the host clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>

#include "fatcl/bench.hpp"
#include "fatcl/checked_run.hpp"
#include "fatcl/detail/clock.hpp"

namespace fatcl::detail {

// One run's milliseconds in a batch of back-to-back runs lasting about
// kBatchMs, for a run `first_ms` (of `batch` runs, by the host clock
// around a finished queue) found shorter: the batch grown from there until
// it lasts that long (at most kMaxBatch runs), its size left in `batch`.
// Sized from one run alone, a batch was as short as that run was slow (a
// thread pool woken, a cache cold), and the queue's round trip counted
// against the kernel: on Debian's PoCL at 128^3 the automatic call, its
// batches sized at 4 and 10 runs, took 0.050 and 0.061 ms a run where the
// same variant forced took 0.035 and 0.036 in the same runs (2 Xeon cores,
// 2026-12-06); grown, both took 0.029 to 0.032.
inline double batched_ms(const cl::CommandQueue& queue, const std::function<void()>& run,
                         double first_ms, int& batch) {
  double elapsed = first_ms;
  while (elapsed < kBatchMs && batch < kMaxBatch) {
    batch = std::min(kMaxBatch,
                     std::max(batch + 1, static_cast<int>(std::ceil(
                                             batch * kBatchMs / std::max(elapsed, 1e-3)))));
    check_cl(queue.finish(), "clFinish");
    const auto start = std::chrono::steady_clock::now();
    for (int b = 0; b < batch; ++b) run();
    check_cl(queue.finish(), "clFinish");
    elapsed = ms_since(start);
  }
  return elapsed / batch;
}

// run_checked, its verdict copied into r (failure, relative_error, ok).
// False if it did not run.
inline bool check(const cl::CommandQueue& queue, const MatmulProblem& p,
                  const std::function<std::string()>& run, BenchResult& r) {
  const CheckedRun checked = run_checked(queue, p, run);
  r.failure = checked.failure;
  r.relative_error = checked.relative_error;
  r.ok = checked.ok;
  return checked.ran;
}

}  // namespace fatcl::detail
