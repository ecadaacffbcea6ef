// bench's and tune's view of one checked run (its verdict in a BenchResult) and of the host clock.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "fatcl/bench.hpp"
#include "fatcl/checked_run.hpp"

namespace fatcl::detail {

// Milliseconds by the host clock since `start`.
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
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
