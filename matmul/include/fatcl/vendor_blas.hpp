// The vendor's BLAS, timed beside fatcl as the speed bar: cuBLAS on NVIDIA
// devices, OpenBLAS on the host beside CPU devices. Both are opened at run
// time (dlopen), so fatcl depends on neither: without the library the bench
// says so and goes on.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "fatcl/device.hpp"
#include "fatcl/opencl.hpp"

namespace fatcl {

// C = A * B in single precision, row-major, by a vendor library on its own
// memory: `prepare` copies A (M x K) and B (K x N) in and makes room for C
// (not timed); each `run` computes one product and returns when it has
// finished; `result` copies C (M x N) out (not timed). Each returns "" or
// why it failed, naming the call and its status.
struct VendorGemm {
  // e.g. "cuBLAS 13.0.0 (cublasSgemm)", "OpenBLAS 0.3.21 (cblas_sgemm, 2 threads, Zen)"
  std::string name;
  std::function<std::string(const float* a, const float* b, std::size_t m, std::size_t n,
                            std::size_t k)>
      prepare;
  std::function<std::string()> run;
  std::function<std::string(float* c)> result;
};

// The vendor BLAS for `device`: cuBLAS (libcublas.so.13 or .12 with the
// CUDA runtime of the same version) on NVIDIA's OpenCL, on the CUDA device
// with the same PCI bus; OpenBLAS (libopenblas.so.0) beside a CPU device,
// with all its threads and the kernels it chose for this CPU (those the
// CPU runs where it took a newer CPU for an old one). None, with `why_not`
// set, where there is none or it does not open ("libcublas.so.13: cannot
// open shared object file", "no vendor BLAS for a GPU of AMD").
std::optional<VendorGemm> find_vendor_gemm(const cl::Device& device, std::string* why_not);

// One `run` of a prepared vendor GEMM with its C (m x n, `count` floats)
// written into `c` on `queue` (blocking), so that C is checked as a
// kernel's is: "" or why it failed.
std::string run_vendor_gemm_into(const VendorGemm& vendor, const cl::CommandQueue& queue,
                                 const cl::Buffer& c, std::size_t count);

}  // namespace fatcl
