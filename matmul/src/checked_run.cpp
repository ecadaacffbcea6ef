// The one checked run of fatcl's SGEMM (fatcl/checked_run.hpp) and the
// double-precision reference it compares with.
#include "fatcl/checked_run.hpp"

#include <algorithm>
#include <cmath>

#include "fatcl/error.hpp"

namespace fatcl {

std::string MatmulProblem::scope() const {
  return rows.size() == m ? std::string("all rows")
                          : std::to_string(rows.size()) + " of " + std::to_string(m) + " rows";
}

MatmulProblem make_matmul_problem(const cl::Context& context, std::size_t m, std::size_t n,
                                  std::size_t k, MatmulInputs inputs, std::mt19937* rng,
                                  std::size_t reference_budget) {
  if (m == 0 || n == 0 || k == 0) {
    throw Error("make_matmul_problem: " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                std::to_string(k) + " has a size of 0");
  }
  if (inputs == MatmulInputs::Random && !rng) {
    throw Error("make_matmul_problem: random inputs need a generator");
  }
  MatmulProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.inputs = inputs;
  std::vector<float> a(m * k), b(k * n);
  if (inputs == MatmulInputs::Random) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& x : a) x = dist(*rng);
    for (float& x : b) x = dist(*rng);
  } else {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(int(i * 7 % 9) - 4);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(int(i * 5 % 7) - 3);
  }
  auto upload = [&](const char* name, cl_mem_flags flags, std::vector<float>* data,
                    std::size_t count) {
    cl_int err = CL_SUCCESS;
    cl::Buffer buffer(context, flags | (data ? CL_MEM_COPY_HOST_PTR : 0), count * sizeof(float),
                      data ? data->data() : nullptr, &err);
    check_cl(err, std::string("clCreateBuffer(") + name + ", " +
                      std::to_string(count * sizeof(float)) + " B)");
    return buffer;
  };
  p.a = upload("A", CL_MEM_READ_ONLY, &a, a.size());
  p.b = upload("B", CL_MEM_READ_ONLY, &b, b.size());
  p.c = upload("C", CL_MEM_READ_WRITE, nullptr, m * n);
  p.rows = inputs == MatmulInputs::SmallIntegers ? reference_rows(m, n, k, SIZE_MAX)
                                                 : reference_rows(m, n, k, reference_budget);
  std::vector<float> a_rows;
  for (std::size_t i : p.rows) a_rows.insert(a_rows.end(), &a[i * k], &a[i * k] + k);
  p.reference = reference_matmul(a_rows, b, p.rows.size(), n, k);
  return p;
}

CheckedRun run_checked(const cl::CommandQueue& queue, const MatmulProblem& p,
                       const std::function<std::string()>& run) {
  CheckedRun r;
  try {
    check_cl(queue.enqueueFillBuffer(p.c, std::numeric_limits<float>::quiet_NaN(), 0,
                                     p.m * p.n * sizeof(float)),
             "clEnqueueFillBuffer(C, NaN)");
    r.failure = run();
    if (r.failure.empty()) {
      const cl_int finished = queue.finish();
      if (finished != CL_SUCCESS) r.failure = "clFinish failed: " + cl_status_name(finished);
    }
    if (!r.failure.empty()) return r;
    std::vector<float> c(p.rows.size() * p.n);
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      check_cl(queue.enqueueReadBuffer(p.c, CL_TRUE, p.rows[i] * p.n * sizeof(float),
                                       p.n * sizeof(float), &c[i * p.n]),
               "clEnqueueReadBuffer(C)");
    }
    r.ran = true;
    r.relative_error = relative_error(c, p.reference);
    if (p.inputs == MatmulInputs::SmallIntegers) {
      r.ok = true;
      for (std::size_t i = 0; i < c.size() && r.ok; ++i) {
        if (!(c[i] == p.reference[i])) {
          r.ok = false;
          r.mismatch = "C[" + std::to_string(p.rows[i / p.n]) + "][" + std::to_string(i % p.n) +
                       "] is " + std::to_string(c[i]) + ", the reference says " +
                       std::to_string(p.reference[i]);
        }
      }
    } else {
      r.ok = r.relative_error <= kMatmulTolerance;
    }
  } catch (const Error& e) {
    r.ran = false;
    r.failure = e.what();
    r.status = e.cl_code();
  }
  return r;
}

std::vector<std::size_t> reference_rows(std::size_t m, std::size_t n, std::size_t k,
                                        std::size_t budget) {
  const std::size_t rows_in_budget = std::max<std::size_t>(1, budget / (n * k));
  const std::size_t step = std::max<std::size_t>(1, m / std::min(m, rows_in_budget));
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < m; i += step) rows.push_back(i);
  if (rows.back() != m - 1) rows.push_back(m - 1);
  return rows;
}

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
