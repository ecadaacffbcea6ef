// Running one SGEMM once, checked: shared by bench and tune.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fatcl/bench.hpp"

namespace fatcl::detail {

// A product to run: A and B of fresh random numbers in [-1, 1), C, and the
// double-precision reference of the rows of C that are checked.
struct Problem {
  BenchShape shape;
  cl::Buffer a, b, c;
  std::vector<std::size_t> rows;
  std::vector<double> reference;  // the checked rows of C
};
Problem make_problem(const cl::Context& context, const BenchShape& s, std::mt19937& rng);

// Poisons C with NaN, runs `run` once ("" or why it failed), compares the
// checked rows: fills r.relative_error and r.ok. False (with r.failure set)
// if it did not run.
bool check(const cl::CommandQueue& queue, const Problem& p, const std::function<std::string()>& run,
           BenchResult& r);

}  // namespace fatcl::detail
