// One checked run of an SGEMM: inputs made and uploaded, C poisoned with NaN,
// the product run, the checked rows of C compared with the double-precision
// reference. The demo, bench, tune, bench --startup, the families' trial
// launch and the tests all check through it, with one tolerance.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fatcl/opencl.hpp"

namespace fatcl {

// ||C - reference||_2 / ||reference||_2 at most this: float accumulation
// over K up to tens of thousands stays well inside it; a wrong index does not.
constexpr double kMatmulTolerance = 1e-5;

enum class MatmulInputs {
  // Fresh uniform numbers in [-1, 1) from the caller's generator, compared
  // within kMatmulTolerance.
  Random,
  // Small integers (A from -4 to 4, B from -3 to 3, in a fixed pattern):
  // every partial sum is exact in float, so C is compared exactly. For trial
  // launches, whose verdict must not depend on rounding.
  SmallIntegers,
};

// An M x N x K product (row-major floats) on a device: A and B uploaded, C
// allocated, and the reference of the rows of C that are checked.
struct MatmulProblem {
  std::size_t m = 0, n = 0, k = 0;
  MatmulInputs inputs = MatmulInputs::Random;
  cl::Buffer a, b, c;
  std::vector<std::size_t> rows;  // the rows of C checked, ascending
  std::vector<double> reference;  // those rows of A * B in double precision
  // "all rows" or "33 of 4096 rows".
  std::string scope() const;
};

// Makes the inputs (drawing from `rng` for Random; it may be null for
// SmallIntegers), uploads them and computes the reference of the rows that
// reference_rows(m, n, k, reference_budget) picks. Throws fatcl::Error
// naming the buffer and its size if an allocation fails, or if a size is 0.
MatmulProblem make_matmul_problem(const cl::Context& context, std::size_t m, std::size_t n,
                                  std::size_t k, MatmulInputs inputs, std::mt19937* rng,
                                  std::size_t reference_budget = std::size_t(1) << 28);

struct CheckedRun {
  bool ran = false;     // the run and the queue finished
  std::string failure;  // why it did not run ("" if it ran)
  int status = 0;       // the OpenCL status of the call that failed, if one did
  double relative_error = std::numeric_limits<double>::quiet_NaN();
  bool ok = false;       // it ran and C is right (exactly, for SmallIntegers)
  std::string mismatch;  // for SmallIntegers: the first wrong element, e.g.
                         // "C[3][5] is 2.000000, the reference says 4"
};

// Fills C with NaN, calls `run` (which enqueues C = A * B on `queue` and
// returns "" or why it could not), finishes the queue, reads the checked
// rows and compares. Never throws: an OpenCL failure is the result's.
CheckedRun run_checked(const cl::CommandQueue& queue, const MatmulProblem& problem,
                       const std::function<std::string()>& run);

// The rows of an M x N x K product to check against the double-precision
// reference: all of them up to `budget` multiply-adds, else an even spread
// (always the first and the last).
std::vector<std::size_t> reference_rows(std::size_t m, std::size_t n, std::size_t k,
                                        std::size_t budget);

// Double-precision CPU reference of C[M x N] = A[M x K] * B[K x N] (row-major).
std::vector<double> reference_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                     std::size_t m, std::size_t n, std::size_t k);

// ||c - reference||_2 / ||reference||_2 (absolute norm when the reference is
// all zeros). Any NaN in c gives NaN.
double relative_error(const std::vector<float>& c, const std::vector<double>& reference);

}  // namespace fatcl
