// The host clock as fatcl's libraries time calls with it (bench, tune,
// learning online, a family's timed launch). Internal to fatcl's libraries.
#pragma once

#include <chrono>

namespace fatcl::detail {

// Milliseconds by the host clock since `start`.
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace fatcl::detail
