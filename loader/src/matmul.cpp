#include "fatcl/matmul.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "matmul_naive.hpp"
#include "matmul_tiled.hpp"

namespace fatcl {
namespace {

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::array<std::size_t, 2> choose_local(const LoadedKernel& loaded, const cl::Device& device) {
  const auto& reqd = loaded.variant.reqd_work_group_size;
  if (reqd[0] != 0) return {reqd[0], reqd[1]};
  // No required size (naive kernel): the largest square power of two the
  // kernel and the device allow, at most 16x16.
  std::size_t sizes[3] = {1, 1, 1};
  clGetDeviceInfo(device(), CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr);
  std::size_t s = 16;
  while (s > 1 && (s * s > loaded.kernel_work_group_size || s > sizes[0] || s > sizes[1])) s /= 2;
  return {s, s};
}

cl::Event launch(const cl::CommandQueue& queue, const cl::Kernel& kernel,
                 std::array<std::size_t, 2> local, const cl::Buffer& a, const cl::Buffer& b,
                 const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                 const std::vector<cl::Event>& wait) {
  const cl_int M = static_cast<cl_int>(m), N = static_cast<cl_int>(n), K = static_cast<cl_int>(k);
  cl_kernel raw = kernel();
  check_cl(clSetKernelArg(raw, 0, sizeof M, &M), "clSetKernelArg(M)");
  check_cl(clSetKernelArg(raw, 1, sizeof N, &N), "clSetKernelArg(N)");
  check_cl(clSetKernelArg(raw, 2, sizeof K, &K), "clSetKernelArg(K)");
  cl_mem mems[3] = {a(), b(), c()};
  for (cl_uint i = 0; i < 3; ++i) {
    check_cl(clSetKernelArg(raw, 3 + i, sizeof(cl_mem), &mems[i]), "clSetKernelArg(buffer)");
  }
  // Dimension 0 runs along the columns of C (N), dimension 1 along its rows.
  const std::size_t global[2] = {round_up(n, local[0]), round_up(m, local[1])};
  std::vector<cl_event> events;
  for (const cl::Event& e : wait) events.push_back(e());
  cl_event done = nullptr;
  check_cl(clEnqueueNDRangeKernel(queue(), raw, 2, nullptr, global, local.data(),
                                  static_cast<cl_uint>(events.size()),
                                  events.empty() ? nullptr : events.data(), &done),
           "clEnqueueNDRangeKernel(" + std::to_string(local[0]) + "x" + std::to_string(local[1]) +
               " work-groups)");
  return cl::Event(done, false);
}

}  // namespace

const Family& matmul_family(MatmulKernel kernel) {
  static const Family tiled(kernels::matmul_tiled());
  static const Family naive(kernels::matmul_naive());
  return kernel == MatmulKernel::Tiled ? tiled : naive;
}

std::string matmul_trial_launch(const cl::Context& context, const cl::Device& device,
                                const cl::Kernel& kernel, const Variant& variant) {
  const auto& reqd = variant.reqd_work_group_size;
  const std::size_t tx = reqd[0] ? reqd[0] : 1, ty = reqd[1] ? reqd[1] : 1;
  // Two tiles and a ragged edge in every direction.
  const std::size_t m = 2 * ty + 1, n = 2 * tx + 1, k = 2 * std::max(tx, ty) + 3;
  std::vector<float> a(m * k), b(k * n), c(m * n, std::numeric_limits<float>::quiet_NaN());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(int(i * 7 % 9) - 4);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(int(i * 5 % 7) - 3);
  cl_int err = CL_SUCCESS;
  auto buffer = [&](std::vector<float>& v) {
    return cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, v.size() * sizeof(float),
                      v.data(), &err);
  };
  cl::Buffer da = buffer(a), db = buffer(b), dc = buffer(c);
  if (err != CL_SUCCESS) return "clCreateBuffer failed: " + cl_status_name(err);
  cl::CommandQueue queue(context, device, 0, &err);
  if (err != CL_SUCCESS) return "clCreateCommandQueue failed: " + cl_status_name(err);
  try {
    launch(queue, kernel, {tx, ty}, da, db, dc, m, n, k, {});
  } catch (const Error& e) {
    return e.what();
  }
  err = queue.enqueueReadBuffer(dc, CL_TRUE, 0, c.size() * sizeof(float), c.data());
  if (err != CL_SUCCESS) return "the launch did not complete: " + cl_status_name(err);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::size_t p = 0; p < k; ++p) want += double(a[i * k + p]) * b[p * n + j];
      if (!(c[i * n + j] == want)) {
        return "wrong result at C[" + std::to_string(i) + "][" + std::to_string(j) +
               "]: " + std::to_string(c[i * n + j]) + " instead of " + std::to_string(want);
      }
    }
  }
  return "";
}

struct Matmul::Impl {
  LoadedKernel loaded;
  std::array<std::size_t, 2> local{1, 1};
};

Matmul::Matmul(const cl::Context& context, const cl::Device& device, const MatmulOptions& options)
    : impl_(std::make_unique<Impl>()) {
  LoadOptions load_options;
  load_options.variant = options.variant;
  load_options.tier = options.tier;
  load_options.trial = matmul_trial_launch;
  impl_->loaded = load(context, device, matmul_family(options.kernel), load_options);
  impl_->local = choose_local(impl_->loaded, device);
}

Matmul::~Matmul() = default;
Matmul::Matmul(Matmul&&) noexcept = default;
Matmul& Matmul::operator=(Matmul&&) noexcept = default;

const LoadedKernel& Matmul::loaded() const { return impl_->loaded; }
std::array<std::size_t, 2> Matmul::local_size() const { return impl_->local; }

cl::Event Matmul::enqueue(const cl::CommandQueue& queue, const cl::Buffer& a, const cl::Buffer& b,
                          const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                          const std::vector<cl::Event>& wait) const {
  for (auto [dim, name] : {std::pair{m, "M"}, std::pair{n, "N"}, std::pair{k, "K"}}) {
    if (dim == 0 || dim > static_cast<std::size_t>(INT_MAX)) {
      throw Error(std::string("Matmul: ") + name + " = " + std::to_string(dim) + " is outside 1.." +
                  std::to_string(INT_MAX));
    }
  }
  const std::pair<const cl::Buffer*, std::size_t> needs[3] = {
      {&a, m * k}, {&b, k * n}, {&c, m * n}};
  const char* names[3] = {"A", "B", "C"};
  for (int i = 0; i < 3; ++i) {
    std::size_t size = 0;
    cl_int err = clGetMemObjectInfo((*needs[i].first)(), CL_MEM_SIZE, sizeof size, &size, nullptr);
    check_cl(err, std::string("clGetMemObjectInfo(") + names[i] + ")");
    if (size < needs[i].second * sizeof(float)) {
      throw Error(std::string("Matmul: buffer ") + names[i] + " has " + std::to_string(size) +
                  " B, the " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                  std::to_string(k) + " product needs " +
                  std::to_string(needs[i].second * sizeof(float)) + " B");
    }
  }
  return launch(queue, impl_->loaded.kernel, impl_->local, a, b, c, m, n, k, wait);
}

}  // namespace fatcl

namespace fatcl {

std::vector<double> reference_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                     std::size_t m, std::size_t n, std::size_t k) {
  if (a.size() < m * k || b.size() < k * n) {
    throw Error("reference_matmul: A or B is smaller than " + std::to_string(m) + "x" +
                std::to_string(n) + "x" + std::to_string(k) + " needs");
  }
  std::vector<double> c(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    double* row = &c[i * n];
    for (std::size_t p = 0; p < k; ++p) {
      const double aip = a[i * k + p];
      const float* brow = &b[p * n];
      for (std::size_t j = 0; j < n; ++j) row[j] += aip * brow[j];
    }
  }
  return c;
}

double relative_error(const std::vector<float>& c, const std::vector<double>& reference) {
  if (c.size() != reference.size()) {
    throw Error("relative_error: " + std::to_string(c.size()) + " values against " +
                std::to_string(reference.size()));
  }
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double d = double(c[i]) - reference[i];
    diff += d * d;
    norm += reference[i] * reference[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

}  // namespace fatcl
