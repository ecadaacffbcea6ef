// fatcl::Matmul: C = A * B on OpenCL buffers, row-major float32, for any
// M, N, K >= 1, with the variant of the bundled tiled kernel (or the naive
// baseline) that fatcl::load() chooses for the device.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fatcl/loader.hpp"

namespace fatcl {

enum class MatmulKernel {
  Tiled,  // the local-memory tiled kernel, variants over TILE
  Naive,  // the global-memory baseline
};

struct MatmulOptions {
  MatmulKernel kernel = MatmulKernel::Tiled;
  std::string variant;       // force one variant, e.g. "matmul_tiled_TILE16"
  std::optional<Tier> tier;  // force one tier
};

// The bundled families (manifest, source and SPIR-V embedded in fatcl::matmul).
const Family& matmul_family(MatmulKernel kernel);

class Matmul {
 public:
  // Chooses and builds a variant for `device`. Throws fatcl::Error (with the
  // explanation) if none loads.
  Matmul(const cl::Context& context, const cl::Device& device, const MatmulOptions& options = {});
  ~Matmul();
  Matmul(Matmul&&) noexcept;
  Matmul& operator=(Matmul&&) noexcept;
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;

  // Enqueues C[M x N] = A[M x K] * B[K x N] (row-major float) on `queue` and
  // returns its event. Throws fatcl::Error if M, N or K is 0 or above
  // INT_MAX, if a buffer is smaller than its matrix, or if the launch fails.
  // Not thread-safe: one Matmul per thread.
  cl::Event enqueue(const cl::CommandQueue& queue, const cl::Buffer& a, const cl::Buffer& b,
                    const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                    const std::vector<cl::Event>& wait = {}) const;

  const LoadedKernel& loaded() const;
  const Explanation& explanation() const { return loaded().explanation; }
  // The work-group the kernel launches with.
  std::array<std::size_t, 2> local_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The trial launch fatcl::Matmul gives the loader: a small product of exact
// small integers (sizes that exercise the edge guards) with output poisoned
// beforehand, compared exactly. "" if right, else the reason.
std::string matmul_trial_launch(const cl::Context& context, const cl::Device& device,
                                const cl::Kernel& kernel, const Variant& variant);

}  // namespace fatcl

namespace fatcl {

// Double-precision CPU reference of C[M x N] = A[M x K] * B[K x N] (row-major).
std::vector<double> reference_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                     std::size_t m, std::size_t n, std::size_t k);

// ||c - reference||_2 / ||reference||_2 (absolute norm when the reference is
// all zeros). Any NaN in c gives NaN.
double relative_error(const std::vector<float>& c, const std::vector<double>& reference);

}  // namespace fatcl
