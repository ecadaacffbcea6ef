// A soak (tests/faults/soak.sh runs several at once over one cache and
// store): threads calling fatcl::Matmul and the GEMM entry points with random
// shapes and every option for a bounded time on the first device of the
// OpenCL platform the loader finds, every result checked against a double
// precision reference. Double-precision GEMM calls split K into 3 parts
// (OverrideKParts; a CPU never splits by itself), so that the split's
// launches and the pass that adds the parts are soaked and swept on every
// runtime; single-precision calls keep the device's own choice. Prints the
// calls made and the failures (wrong results, errors), and exits 1 if
// there was one.
//
// Usage: fatcl_soak SECONDS THREADS
//        fatcl_soak --calls N SEED   one thread, N calls in an order SEED fixes
//                                    (the fault sweeps: the same calls each run)
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fatcl/device.hpp"
#include "fatcl/error.hpp"
#include "fatcl/gemm.hpp"
#include "fatcl/matmul.hpp"

namespace {

struct Tally {
  std::atomic<long> matmul{0}, sgemm{0}, dgemm{0}, failures{0};
  std::mutex mutex;
  std::vector<std::string> first;  // the first failures, in words

  void fail(const std::string& what) {
    ++failures;
    std::lock_guard<std::mutex> lock(mutex);
    if (first.size() < 5) first.push_back(what);
  }
};

// The buffers made with their status checked, and the result read back.
template <typename T>
cl::Buffer buffer(const cl::Context& context, cl_mem_flags flags, std::vector<T>& data) {
  cl_int err = CL_SUCCESS;
  cl::Buffer b(context, flags | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(T), data.data(), &err);
  fatcl::check_cl(err, "clCreateBuffer");
  return b;
}

template <typename T>
void read(const cl::CommandQueue& queue, const cl::Buffer& from, std::vector<T>& to) {
  const cl_int err = queue.enqueueReadBuffer(from, CL_TRUE, 0, to.size() * sizeof(T), to.data());
  fatcl::check_cl(err, "clEnqueueReadBuffer");
}

std::size_t dim(std::mt19937& rng) {
  // Mostly small (tile edges everywhere), now and then a few hundred.
  return rng() % 10 == 0 ? 1 + rng() % 400 : 1 + rng() % 96;
}

std::string shape(std::size_t m, std::size_t n, std::size_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// C = A*B, row-major and contiguous, through fatcl::Matmul.
void matmul_call(fatcl::Matmul& matmul, const cl::Context& context, const cl::CommandQueue& queue,
                 std::mt19937& rng, Tally& tally) {
  const std::size_t m = dim(rng), n = dim(rng), k = dim(rng);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> a(m * k), b(k * n), c(m * n, std::numeric_limits<float>::quiet_NaN());
  for (float& x : a) x = value(rng);
  for (float& x : b) x = value(rng);
  const cl::Buffer da = buffer(context, CL_MEM_READ_ONLY, a);
  const cl::Buffer db = buffer(context, CL_MEM_READ_ONLY, b);
  const cl::Buffer dc = buffer(context, CL_MEM_READ_WRITE, c);
  matmul.enqueue(queue, da, db, dc, m, n, k);
  read(queue, dc, c);
  ++tally.matmul;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (std::size_t p = 0; p < k; ++p) {
        ref += double(a[i * k + p]) * b[p * n + j];
        mag += std::fabs(double(a[i * k + p]) * b[p * n + j]);
      }
      const double tol = 2.0 * (k + 2) * std::numeric_limits<float>::epsilon() * mag + 1e-30;
      if (!(std::fabs(c[i * n + j] - ref) <= tol)) {
        tally.fail("Matmul " + shape(m, n, k) + ": C[" + std::to_string(i) + "," +
                   std::to_string(j) + "] = " + std::to_string(c[i * n + j]) + ", expected " +
                   std::to_string(ref));
        return;
      }
    }
  }
}

// C = alpha*op(A)*op(B) + beta*C with a random layout, transposes, offsets,
// leading dimensions, alpha and beta (0 among them), through fatcl::Gemm.
template <typename T>
void gemm_call(const cl::Context& context, cl::CommandQueue& queue, std::mt19937& rng,
               Tally& tally) {
  using fatcl::Layout;
  using fatcl::Transpose;
  const std::size_t m = dim(rng), n = dim(rng), k = dim(rng);
  const Layout layout = rng() % 2 ? Layout::kRowMajor : Layout::kColMajor;
  const Transpose ta = rng() % 2 ? Transpose::kYes : Transpose::kNo;
  const Transpose tb = rng() % 2 ? Transpose::kYes : Transpose::kNo;
  const bool row = layout == Layout::kRowMajor;
  // Stored rows x columns of each operand, in the layout.
  const std::size_t a_rows = ta == Transpose::kNo ? m : k, a_cols = ta == Transpose::kNo ? k : m;
  const std::size_t b_rows = tb == Transpose::kNo ? k : n, b_cols = tb == Transpose::kNo ? n : k;
  auto ld_of = [&](std::size_t rows, std::size_t cols) {
    return (row ? cols : rows) + (rng() % 3 == 0 ? rng() % 5 : 0);
  };
  const std::size_t a_ld = ld_of(a_rows, a_cols), b_ld = ld_of(b_rows, b_cols),
                    c_ld = ld_of(m, n);
  const std::size_t a_off = rng() % 4, b_off = rng() % 4, c_off = rng() % 4;
  const T choices[] = {T(0), T(1), T(-0.5), T(1.25)};
  const T alpha = choices[rng() % 4], beta = choices[rng() % 4];
  auto at = [&](std::size_t r, std::size_t c, std::size_t ld) { return row ? r * ld + c : c * ld + r; };
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<T> a(a_off + (row ? a_rows : a_cols) * a_ld), b(b_off + (row ? b_rows : b_cols) * b_ld),
      c(c_off + (row ? m : n) * c_ld);
  for (T& x : a) x = T(value(rng));
  for (T& x : b) x = T(value(rng));
  for (T& x : c) x = T(value(rng));
  // beta = 0 must ignore C, NaN included.
  if (beta == T(0)) {
    for (T& x : c) x = std::numeric_limits<T>::quiet_NaN();
  }
  const std::vector<T> c0 = c;
  const cl::Buffer da = buffer(context, CL_MEM_READ_ONLY, a);
  const cl::Buffer db = buffer(context, CL_MEM_READ_ONLY, b);
  const cl::Buffer dc = buffer(context, CL_MEM_READ_WRITE, c);
  cl_command_queue q = queue();
  const fatcl::StatusCode status =
      fatcl::Gemm<T>(layout, ta, tb, m, n, k, alpha, da(), a_off, a_ld, db(), b_off, b_ld, beta,
                     dc(), c_off, c_ld, &q);
  ++(sizeof(T) == 4 ? tally.sgemm : tally.dgemm);
  const std::string what = std::string(sizeof(T) == 4 ? "Sgemm " : "Dgemm ") +
                           (row ? "row " : "col ") + (ta == Transpose::kYes ? "T" : "N") +
                           (tb == Transpose::kYes ? "T " : "N ") + shape(m, n, k);
  if (status != fatcl::StatusCode::kSuccess) {
    tally.fail(what + ": " + fatcl::to_string(status) + ": " + fatcl::GemmMessage());
    return;
  }
  read(queue, dc, c);
  const double eps = std::numeric_limits<T>::epsilon();
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0, mag = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const double x = a[a_off + (ta == Transpose::kNo ? at(i, p, a_ld) : at(p, i, a_ld))];
        const double y = b[b_off + (tb == Transpose::kNo ? at(p, j, b_ld) : at(j, p, b_ld))];
        sum += x * y;
        mag += std::fabs(x * y);
      }
      const double before = beta == T(0) ? 0.0 : double(c0[c_off + at(i, j, c_ld)]);
      const double ref = double(alpha) * sum + double(beta) * before;
      const double tol =
          2.0 * (k + 4) * eps * (std::fabs(double(alpha)) * mag + std::fabs(double(beta) * before)) +
          1e-300;
      const double got = c[c_off + at(i, j, c_ld)];
      if (!(std::fabs(got - ref) <= tol)) {
        tally.fail(what + " alpha " + std::to_string(double(alpha)) + " beta " +
                   std::to_string(double(beta)) + ": C[" + std::to_string(i) + "," +
                   std::to_string(j) + "] = " + std::to_string(got) + ", expected " +
                   std::to_string(ref));
        return;
      }
    }
  }
  // What lies outside the product (offsets, the leading dimension's gap)
  // stays as it was.
  std::vector<bool> inside(c.size());
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) inside[c_off + at(i, j, c_ld)] = true;
  }
  for (std::size_t e = 0; e < c.size(); ++e) {
    if (!inside[e] && !(c[e] == c0[e] || (std::isnan(double(c[e])) && std::isnan(double(c0[e]))))) {
      tally.fail(what + ": element " + std::to_string(e) + " outside C changed");
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && std::string(argv[1]) == "--calls")) {
    std::fprintf(stderr, "usage: %s SECONDS THREADS | --calls N SEED\n", argv[0]);
    return 2;
  }
  const bool counted = argc == 4;
  const double seconds = counted ? 1e9 : std::atof(argv[1]);
  const int threads = counted ? 1 : std::atoi(argv[2]);
  const long calls = counted ? std::atol(argv[2]) : -1;
  const unsigned seed = counted ? unsigned(std::strtoul(argv[3], nullptr, 10)) : 0;
  if (!(seconds > 0) || threads < 1 || (counted && calls < 1)) {
    std::fprintf(stderr, "soak: SECONDS must be above 0, THREADS and N at least 1\n");
    return 2;
  }
  try {
    const cl::Device device = fatcl::pick_device("", 0);
    const fatcl::DeviceCaps caps = fatcl::DeviceCaps::query(device);
    const bool fp64 = device.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_khr_fp64") != std::string::npos;
    const cl::Context context = fatcl::context_for(device);
    const cl::CommandQueue shared = fatcl::queue_for(context, device);
    if (fp64 && fatcl::OverrideKParts(device(), 64, 3) != fatcl::StatusCode::kSuccess) {
      std::fprintf(stderr, "soak: OverrideKParts: %s\n", fatcl::GemmMessage().c_str());
      return 1;
    }
    Tally tally;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::mt19937 rng(counted ? seed : std::random_device{}() + unsigned(t));
        try {
          // Odd threads share one queue, even ones have their own.
          cl::CommandQueue queue = t % 2 ? shared : fatcl::queue_for(context, device);
          fatcl::Matmul matmul(context, device);
          for (long done = 0; std::chrono::steady_clock::now() < end && done != calls; ++done) {
            const unsigned pick = rng() % (fp64 ? 3 : 2);
            if (pick == 0) {
              matmul_call(matmul, context, queue, rng, tally);
            } else if (pick == 1) {
              gemm_call<float>(context, queue, rng, tally);
            } else {
              gemm_call<double>(context, queue, rng, tally);
            }
          }
        } catch (const std::exception& e) {
          tally.fail(std::string("error: ") + e.what());
        }
      });
    }
    for (std::thread& t : pool) t.join();
    const std::string run = counted ? "seed " + std::to_string(seed)
                                    : std::to_string(threads) + " threads, " +
                                          std::to_string(int(seconds)) + " s";
    std::printf("soak: %s, %s: %ld calls (Matmul %ld, Sgemm %ld, Dgemm %ld), %ld failures\n",
                caps.device_name.c_str(), run.c_str(), tally.matmul + tally.sgemm + tally.dgemm,
                tally.matmul.load(), tally.sgemm.load(), tally.dgemm.load(),
                tally.failures.load());
    for (const std::string& f : tally.first) std::printf("  failure: %s\n", f.c_str());
    return tally.failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak: %s\n", e.what());
    return 1;
  }
}
