// The GEMM entry points (fatcl/gemm.hpp) on one OpenCL runtime, as a
// CLBlast user calls them: every layout x op(A) x op(B) x alpha x beta in
// each precision the device has, on odd sizes, with offsets and leading
// dimensions above the least, single, batched and strided-batched, against a
// double-precision reference computed from the values as stored. Around
// each sub-matrix of C a guard value must stay as it was; where beta is 0, C
// starts as NaN (BLAS ignores it); where alpha is 0, A and B are NaN (BLAS
// reads neither). The environment (tests/CMakeLists.txt) picks the runtime:
//   FATCL_TEST_PLATFORM, FATCL_TEST_NEEDS, FATCL_REQUIRE_RUNTIMES (test_runtime.hpp)
//   FATCL_TEST_SIZES      "small": the slow runtimes' subset of forms and sizes
//   FATCL_TEST_BUILDS     "slow": a runtime whose every build takes seconds
//                         (PoCL from SPIR-V): the rows family's test builds
//                         its first point of each precision only
//   FATCL_TEST_GEMM_VARIANTS  "all": also every variant of each precision's
//                         family forced in turn (OverrideVariant), in the
//                         tier FATCL_TEST_TIER where set; "cpu": those that
//                         stage nothing, and of the staged (GPU-shaped)
//                         ones the first of each code shape
#include "fatcl/gemm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fatcl/cache.hpp"
#include "fatcl/matmul.hpp"
#include "fatcl/offline.hpp"
#include "fatcl/store.hpp"
#include "test_runtime.hpp"

namespace fatcl {
namespace {

using test::env;

struct Runtime {
  test::OpenedRuntime cl;
  bool fp64 = false, fp16 = false;
  bool calls_race = false;  // the driver's quirk "concurrent-calls-race"
};

Runtime open() {
  Runtime r;
  r.cl = test::open_runtime_from_env();
  if (r.cl.missing.empty()) {
    const std::string ext = r.cl.device.getInfo<CL_DEVICE_EXTENSIONS>();
    cl_device_fp_config dp = 0;
    clGetDeviceInfo(r.cl.device(), CL_DEVICE_DOUBLE_FP_CONFIG, sizeof dp, &dp, nullptr);
    r.fp64 = dp != 0 || ext.find("cl_khr_fp64") != std::string::npos;
    r.fp16 = ext.find("cl_khr_fp16") != std::string::npos;
    r.calls_race = has_driver_quirk(DeviceCaps::query(r.cl.device), "concurrent-calls-race");
  }
  return r;
}

Runtime& runtime() {
  static Runtime r = open();
  return r;
}

// Releases the OpenCL objects (and the kernels the entry points keep)
// before main returns: released during static destruction they can outlive
// the runtime library (Oclgrind aborts then).
class ReleaseRuntime : public testing::Environment {
 public:
  void TearDown() override {
    ClearCache();
    runtime() = Runtime{};
  }
};
testing::Environment* const release_runtime = testing::AddGlobalTestEnvironment(new ReleaseRuntime);

bool slow() { return env("FATCL_TEST_SIZES") == "small"; }
bool builds_slow() { return env("FATCL_TEST_BUILDS") == "slow"; }

// Elements of one precision as the device holds them.
struct Elements {
  int bits;
  std::vector<unsigned char> bytes;
  Elements(int b, std::size_t count) : bits(b), bytes(count * std::size_t(b) / 8) {}
  std::size_t size() const { return bytes.size() / (std::size_t(bits) / 8); }
  double get(std::size_t i) const {
    if (bits == 64) {
      double d;
      std::memcpy(&d, &bytes[i * 8], 8);
      return d;
    }
    if (bits == 32) {
      float f;
      std::memcpy(&f, &bytes[i * 4], 4);
      return f;
    }
    half h;
    std::memcpy(&h, &bytes[i * 2], 2);
    return HalfToFloat(h);
  }
  void set(std::size_t i, double x) {
    if (bits == 64) {
      std::memcpy(&bytes[i * 8], &x, 8);
    } else if (bits == 32) {
      const float f = float(x);
      std::memcpy(&bytes[i * 4], &f, 4);
    } else {
      const half h = FloatToHalf(float(x));
      std::memcpy(&bytes[i * 2], &h, 2);
    }
  }
};

const char* name(Layout l) { return l == Layout::kRowMajor ? "row-major" : "column-major"; }
const char* name(Transpose t) {
  return t == Transpose::kNo ? "N" : t == Transpose::kYes ? "T" : "C";
}
const char* precision(int bits) { return bits == 64 ? "double" : bits == 32 ? "single" : "half"; }
// The names of the rows family's points for `bits`-bit elements.
std::string rows_point(int bits) {
  return std::string(bits == 64 ? "d" : bits == 32 ? "s" : "h") + "gemm_rows_";
}

enum class Kind { Single, Batched, Strided };

struct Form {
  Layout layout = Layout::kRowMajor;
  Transpose ta = Transpose::kNo, tb = Transpose::kNo;
  double alpha = 1, beta = 0;
  std::size_t m = 1, n = 1, k = 1;
  Kind kind = Kind::Single;
  std::size_t batch = 1;
  cl_mem temp = nullptr;  // Gemm's temp_buffer (Kind::Single)
  // Leading dimensions rounded up to a multiple of this many elements, and
  // a strided batch's products a whole number of rows apart (0: neither).
  std::size_t ld_multiple = 0;
  // The first product's offsets a multiple of this many elements (0: 3, 5
  // and 2 elements in, for A, B and C).
  std::size_t offset_multiple = 0;
  // Leading dimensions the least the layout allows (else 3 above it): a
  // matrix-vector product's B of one column, 1.
  bool least_ld = false;
  std::string describe(int bits) const {
    return std::string(precision(bits)) + " " + name(layout) + " " + name(ta) + name(tb) +
           " alpha " + std::to_string(alpha) + " beta " + std::to_string(beta) + " " +
           std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
           (kind == Kind::Single    ? ""
            : kind == Kind::Batched ? ", batched x" + std::to_string(batch)
                                    : ", strided-batched x" + std::to_string(batch));
  }
};

// A stored operand: `rows` x `cols` in the call's layout with leading
// dimension `ld` (above the least), product i at offsets[i].
struct Operand {
  std::size_t rows, cols, ld, span;
  std::vector<std::size_t> offsets;
  std::size_t at(Layout l, std::size_t i, std::size_t r, std::size_t c) const {
    return offsets[i] + (l == Layout::kRowMajor ? r * ld + c : c * ld + r);
  }
};

Operand operand(Layout l, bool trans, std::size_t r, std::size_t c, const Form& f,
                std::size_t first_offset, std::size_t stride_extra, bool uneven) {
  Operand o{trans ? c : r, trans ? r : c, 0, 0, {}};
  const std::size_t one = l == Layout::kRowMajor ? o.cols : o.rows;
  const std::size_t two = l == Layout::kRowMajor ? o.rows : o.cols;
  o.ld = one + (f.least_ld ? 0 : 3);
  if (f.ld_multiple) o.ld = (o.ld + f.ld_multiple - 1) / f.ld_multiple * f.ld_multiple;
  o.span = o.ld * two + (f.ld_multiple ? 0 : stride_extra);
  const std::size_t align = f.offset_multiple ? f.offset_multiple : 1;
  std::size_t at = (first_offset + align - 1) / align * align;
  for (std::size_t i = 0; i < f.batch; ++i) {
    o.offsets.push_back(at);
    at += o.span + (uneven ? 2 * i + 1 : 0);
  }
  return o;
}

constexpr double kGuard = 7.0;  // exact in every precision

template <typename T>
T scalar(double x) {
  if constexpr (std::is_same_v<T, half>) {
    return FloatToHalf(float(x));
  } else {
    return T(x);
  }
}

template <typename T>
StatusCode call(const Form& f, int, cl_mem a, const Operand& oa, cl_mem b, const Operand& ob,
                cl_mem c, const Operand& oc, const std::vector<double>& alphas,
                const std::vector<double>& betas, cl_command_queue* queue, cl_event* event) {
  switch (f.kind) {
    case Kind::Single:
      return Gemm<T>(f.layout, f.ta, f.tb, f.m, f.n, f.k, scalar<T>(f.alpha), a, oa.offsets[0],
                     oa.ld, b, ob.offsets[0], ob.ld, scalar<T>(f.beta), c, oc.offsets[0], oc.ld,
                     queue, event, f.temp);
    case Kind::Strided:
      return GemmStridedBatched<T>(f.layout, f.ta, f.tb, f.m, f.n, f.k, scalar<T>(f.alpha), a,
                                   oa.offsets[0], oa.ld, oa.span, b, ob.offsets[0], ob.ld,
                                   ob.span, scalar<T>(f.beta), c, oc.offsets[0], oc.ld, oc.span,
                                   f.batch, queue, event);
    case Kind::Batched: {
      std::vector<T> al, be;
      for (double x : alphas) al.push_back(scalar<T>(x));
      for (double x : betas) be.push_back(scalar<T>(x));
      return GemmBatched<T>(f.layout, f.ta, f.tb, f.m, f.n, f.k, al.data(), a, oa.offsets.data(),
                            oa.ld, b, ob.offsets.data(), ob.ld, be.data(), c, oc.offsets.data(),
                            oc.ld, f.batch, queue, event);
    }
  }
  return StatusCode::kUnexpectedError;
}

// Runs one form and checks every element of C's buffer; "" if right.
// `own_calls`, where given, is held around the test's own OpenCL calls
// (its buffers made and C read back).
std::string run_form(int bits, const Form& f, std::mt19937& rng, std::mutex* own_calls = nullptr) {
  Runtime& rt = runtime();
  const bool ta = f.ta != Transpose::kNo, tb = f.tb != Transpose::kNo;
  const bool uneven = f.kind == Kind::Batched;
  const std::size_t extra = f.kind == Kind::Strided ? 5 : 0;
  const Operand oa = operand(f.layout, ta, f.m, f.k, f, 3, extra, uneven);
  const Operand ob = operand(f.layout, tb, f.k, f.n, f, 5, extra, uneven);
  const Operand oc = operand(f.layout, false, f.m, f.n, f, 2, extra, uneven);
  // Product i's alpha and beta: the form's for a single or strided call;
  // a batch varies them, its second product with alpha 0 (its A and B then
  // NaN: they must not be read).
  std::vector<double> alphas(f.batch, f.alpha), betas(f.batch, f.beta);
  if (f.kind == Kind::Batched) {
    for (std::size_t i = 1; i < f.batch; ++i) {
      alphas[i] = i == 1 ? 0.0 : -0.5 * double(i);
      betas[i] = i % 2 ? 0.5 : 0.0;
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::uniform_real_distribution<double> u(-1, 1);
  Elements a(bits, oa.offsets.back() + oa.span + 4), b(bits, ob.offsets.back() + ob.span + 4),
      c(bits, oc.offsets.back() + oc.span + 4);
  for (std::size_t i = 0; i < a.size(); ++i) a.set(i, nan);
  for (std::size_t i = 0; i < b.size(); ++i) b.set(i, nan);
  for (std::size_t i = 0; i < c.size(); ++i) c.set(i, kGuard);
  for (std::size_t z = 0; z < f.batch; ++z) {
    if (alphas[z] != 0) {
      for (std::size_t r = 0; r < oa.rows; ++r) {
        for (std::size_t q = 0; q < oa.cols; ++q) a.set(oa.at(f.layout, z, r, q), u(rng));
      }
      for (std::size_t r = 0; r < ob.rows; ++r) {
        for (std::size_t q = 0; q < ob.cols; ++q) b.set(ob.at(f.layout, z, r, q), u(rng));
      }
    }
    for (std::size_t r = 0; r < f.m; ++r) {
      for (std::size_t q = 0; q < f.n; ++q) c.set(oc.at(f.layout, z, r, q), betas[z] == 0 ? nan : u(rng));
    }
  }
  const Elements c0 = c;
  std::unique_lock<std::mutex> own;
  if (own_calls) own = std::unique_lock<std::mutex>(*own_calls);
  cl_int err = CL_SUCCESS;
  const cl::Context& ctx = rt.cl.context;
  cl::Buffer da(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a.bytes.size(), a.bytes.data(), &err);
  cl::Buffer db(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.bytes.size(), b.bytes.data(), &err);
  cl::Buffer dc(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, c.bytes.size(), c.bytes.data(), &err);
  if (err != CL_SUCCESS) return "clCreateBuffer: " + cl_status_name(err);
  cl_command_queue q = rt.cl.queue();
  if (own) own.unlock();
  cl_event event = nullptr;
  StatusCode s = StatusCode::kUnexpectedError;
  if (bits == 32) s = call<float>(f, bits, da(), oa, db(), ob, dc(), oc, alphas, betas, &q, &event);
  if (bits == 64) s = call<double>(f, bits, da(), oa, db(), ob, dc(), oc, alphas, betas, &q, &event);
  if (bits == 16) s = call<half>(f, bits, da(), oa, db(), ob, dc(), oc, alphas, betas, &q, &event);
  if (s != StatusCode::kSuccess) {
    // A refused call leaves C as it was.
    const std::string why = std::string("status ") + to_string(s) + ": " + GemmMessage();
    err = rt.cl.queue.enqueueReadBuffer(dc, CL_TRUE, 0, c.bytes.size(), c.bytes.data());
    if (err != CL_SUCCESS) return why + "; reading C: " + cl_status_name(err);
    return c.bytes == c0.bytes ? why : why + " (and C changed)";
  }
  if (!event) return "kSuccess without an event";
  if (own_calls) own.lock();
  err = clWaitForEvents(1, &event);
  clReleaseEvent(event);
  if (err != CL_SUCCESS) return "the event: " + cl_status_name(err);
  err = rt.cl.queue.enqueueReadBuffer(dc, CL_TRUE, 0, c.bytes.size(), c.bytes.data());
  if (err != CL_SUCCESS) return "reading C: " + cl_status_name(err);

  // Rounding: each product and sum in the kernel's type (float for half),
  // the result once more in the stored type.
  const double u_acc = bits == 64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double u_store = bits == 64 ? u_acc : bits == 32 ? u_acc : std::ldexp(1.0, -11);
  std::vector<bool> inside(c.size(), false);
  for (std::size_t z = 0; z < f.batch; ++z) {
    for (std::size_t i = 0; i < f.m; ++i) {
      for (std::size_t j = 0; j < f.n; ++j) {
        double sum = 0, bound = 0;
        if (alphas[z] != 0) {
          for (std::size_t p = 0; p < f.k; ++p) {
            const double x = ta ? a.get(oa.at(f.layout, z, p, i)) : a.get(oa.at(f.layout, z, i, p));
            const double y = tb ? b.get(ob.at(f.layout, z, j, p)) : b.get(ob.at(f.layout, z, p, j));
            sum += x * y;
            bound += std::fabs(x * y);
          }
        }
        const std::size_t at = oc.at(f.layout, z, i, j);
        inside[at] = true;
        double want = alphas[z] * sum;
        bound *= std::fabs(alphas[z]);
        if (betas[z] != 0) {
          want += betas[z] * c0.get(at);
          bound += std::fabs(betas[z] * c0.get(at));
        }
        // Below the smallest normal number a device may flush to zero
        // (OpenCL leaves subnormal half and float to the device).
        const double tiny = bits == 64 ? std::ldexp(1.0, -1022)
                            : bits == 32 ? std::ldexp(1.0, -126)
                                         : std::ldexp(1.0, -14);
        const double tol = 4 * u_acc * double(f.k + 2) * bound + 2 * u_store * std::fabs(want) + tiny;
        const double got = c.get(at);
        if (!(std::fabs(got - want) <= tol)) {
          return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] of product " +
                 std::to_string(z) + " = " + std::to_string(got) + ", expected " +
                 std::to_string(want) + " (tolerance " + std::to_string(tol) + ")";
        }
      }
    }
  }
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!inside[i] && c.get(i) != kGuard) {
      return "C's element " + std::to_string(i) + " outside every sub-matrix changed from " +
             std::to_string(kGuard) + " to " + std::to_string(c.get(i));
    }
  }
  return "";
}

std::vector<int> precisions() {
  std::vector<int> out{32};
  if (runtime().fp64) out.push_back(64);
  if (runtime().fp16) out.push_back(16);
  return out;
}

// Every form on these sizes: all of them where launches are cheap; on the
// slow runtimes each layout x op(A) x op(B) once, and alpha and beta at 0,
// 1 and another value.
std::vector<Form> forms(const std::vector<std::array<std::size_t, 3>>& sizes) {
  std::vector<Form> out;
  const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor};
  const Transpose ops[] = {Transpose::kNo, Transpose::kYes, Transpose::kConjugate};
  const double scalars[] = {0.0, 1.0, -0.75};
  const double betas[] = {0.0, 1.0, 0.5};
  for (const auto& s : sizes) {
    Form f;
    f.m = s[0], f.n = s[1], f.k = s[2];
    if (slow()) {
      for (Layout l : layouts) {
        for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
          for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
            f.layout = l, f.ta = ta, f.tb = tb, f.alpha = -0.75, f.beta = 0.5;
            out.push_back(f);
          }
        }
      }
      // alpha 0 (A and B not read) with beta 0 (C not read) and not, and
      // alpha 1 over beta 0 and 1.
      f.layout = Layout::kColMajor, f.ta = Transpose::kYes, f.tb = Transpose::kNo;
      for (const auto& [al, be] : {std::pair{0.0, 0.0}, {0.0, 0.5}, {1.0, 0.0}, {1.0, 1.0}}) {
        f.alpha = al, f.beta = be;
        out.push_back(f);
      }
      continue;
    }
    for (Layout l : layouts) {
      for (Transpose ta : ops) {
        for (Transpose tb : ops) {
          for (double al : scalars) {
            for (double be : betas) {
              f.layout = l, f.ta = ta, f.tb = tb, f.alpha = al, f.beta = be;
              out.push_back(f);
            }
          }
        }
      }
    }
  }
  return out;
}

// 1, a CPU tile (32 x 64, K 8) and a GPU tile (128, K 16) one above and
// one below, primes; the slow runtimes the first two.
std::vector<std::array<std::size_t, 3>> sizes() {
  if (slow()) return {{1, 1, 1}, {33, 19, 9}};
  return {{1, 1, 1}, {33, 65, 9}, {31, 63, 17}, {129, 127, 33}};
}

std::size_t check_forms(int bits, const std::vector<Form>& list, const std::string& where) {
  std::mt19937 rng(std::random_device{}());
  std::size_t failures = 0;
  for (const Form& f : list) {
    const std::string why = run_form(bits, f, rng);
    if (!why.empty()) {
      ADD_FAILURE() << where << f.describe(bits) << ": " << why;
      if (++failures >= 5) break;
    }
  }
  return failures;
}

TEST(Gemm, EveryFormMatchesTheReference) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const std::vector<Form> all = forms(sizes());
  for (int bits : precisions()) {
    // The slow runtimes: every form in single precision, every third in
    // the others (their code differs in types, not in paths).
    std::vector<Form> list;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!slow() || bits == 32 || i % 3 == 0) list.push_back(all[i]);
    }
    const std::size_t failures = check_forms(bits, list, "");
    std::cout << precision(bits) << ": " << list.size() - failures << " of " << list.size()
              << " forms right\n";
  }
}

TEST(Gemm, BatchesInOneLaunchMatchTheReference) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  for (int bits : precisions()) {
    for (Kind kind : {Kind::Batched, Kind::Strided}) {
      for (Layout l : {Layout::kRowMajor, Layout::kColMajor}) {
        Form f;
        f.kind = kind, f.batch = slow() ? 3 : 4, f.layout = l;
        f.ta = Transpose::kYes, f.tb = l == Layout::kRowMajor ? Transpose::kNo : Transpose::kYes;
        f.m = 33, f.n = 19, f.k = 9, f.alpha = 1.5, f.beta = kind == Kind::Strided ? 0.5 : 0.0;
        check_forms(bits, {f}, "");
      }
    }
  }
}

// The kernels the entry points keep are shared between threads: four
// threads call at once from a cleared cache (on one queue: OpenCL's calls
// are thread-safe, and a call borrows a kernel object no other call
// holds), one of them clearing the cache again between its calls while
// the others hold borrowed kernels. Where the driver races concurrent calls
// (rusticl 22.3: a wrong C in about 1 run in 30 even with fatcl's calls
// taken in turn), the test's own calls are taken in turn too.
TEST(Gemm, ThreadsShareTheKeptKernels) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  ClearCache();
  const int calls = slow() ? 2 : 6;
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  std::mutex own_calls;
  std::mutex* in_turn = runtime().calls_race ? &own_calls : nullptr;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, calls, in_turn, &failures] {
      std::mt19937 rng(std::random_device{}() + unsigned(t));
      for (int i = 0; i < calls && failures[t].empty(); ++i) {
        Form f;
        f.layout = t % 2 ? Layout::kColMajor : Layout::kRowMajor;
        f.ta = t / 2 ? Transpose::kYes : Transpose::kNo;
        f.m = 17 + t, f.n = 23, f.k = 5 + i, f.alpha = 1, f.beta = i % 2 ? 0.5 : 0.0;
        failures[t] = run_form(32, f, rng, in_turn);
        if (!failures[t].empty()) failures[t] = f.describe(32) + ": " + failures[t];
        if (t == 3) ClearCache();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
}

// Gemm's temp_buffer: a kernel that reads its operands from global memory
// takes A^T and B^T packed into it; GemmTempBufferSize says how many bytes
// that takes; a smaller buffer is refused before anything runs.
TEST(Gemm, TheCallersTempBufferHoldsThePackedTransposes) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  cl_device_id device = runtime().cl.device();
  cl_command_queue q = runtime().cl.queue();
  std::string unstaged;
  for (const Variant& v : gemm_family(32).manifest().variants) {
    if (unstaged.empty() && v.param("SA") == 0 && v.param("SB") == 0 && v.param("FMA") == 0) {
      unstaged = v.name;
    }
  }
  ASSERT_FALSE(unstaged.empty()) << "sgemm_blocked has no point that stages neither operand";
  ASSERT_EQ(OverrideVariant(device, 32, unstaged), StatusCode::kSuccess) << GemmMessage();
  const Layout R = Layout::kRowMajor;
  const Transpose T = Transpose::kYes, N = Transpose::kNo;
  const std::size_t m = 13, n = 11, k = 7;
  const cl::Context& ctx = runtime().cl.context;
  std::mt19937 rng(std::random_device{}());
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (const auto& [ta, tb] : {std::pair{N, T}, std::pair{T, N}, std::pair{T, T}}) {
      SCOPED_TRACE(std::string(name(layout)) + (ta == T ? " A^T" : " A") + (tb == T ? " B^T" : " B"));
      // A^T packed is m x k, B^T k x n, in either layout (column-major runs
      // as the row-major product with A and B swapped, M and N too).
      const std::size_t packed = ((ta == T ? m * k : 0) + (tb == T ? k * n : 0)) * sizeof(float);
      const bool a_rows_m = (layout == R) == (ta == N), b_rows_k = (layout == R) == (tb == N);
      const std::size_t lda = (a_rows_m ? k : m) + 3, ldb = (b_rows_k ? n : k) + 3;
      const std::size_t ldc = (layout == R ? n : m) + 3;
      std::size_t size = 1;
      ASSERT_EQ(
          GemmTempBufferSize<float>(layout, ta, tb, m, n, k, 3, lda, 5, ldb, 2, ldc, &q, size),
          StatusCode::kSuccess)
          << GemmMessage();
      EXPECT_EQ(size, packed);
      cl::Buffer too_small(ctx, CL_MEM_READ_WRITE, packed - sizeof(float));
      cl::Buffer enough(ctx, CL_MEM_READ_WRITE, packed);
      Form f;
      f.layout = layout;
      f.ta = ta, f.tb = tb, f.m = m, f.n = n, f.k = k, f.alpha = 1.5, f.beta = 0.5;
      f.temp = too_small();
      const std::string refused = run_form(32, f, rng);
      EXPECT_EQ(refused.rfind("status kInsufficientMemoryTemp: the temporary buffer holds", 0),
                0u)
          << refused;
      EXPECT_EQ(refused.find("C changed"), std::string::npos) << refused;
      f.temp = enough();
      EXPECT_EQ(run_form(32, f, rng), "");
    }
  }
  std::size_t size = 1;
  EXPECT_EQ(GemmTempBufferSize<float>(R, T, T, m, n, k, 0, m - 1, 0, k, 0, n, &q, size),
            StatusCode::kInvalidLeadDimA);
  OverrideVariant(device, 32, "");
}

// GemmTempBufferSize for `bits`-bit elements on the tests' queue, every
// offset 0.
StatusCode temp_buffer_size(int bits, Layout layout, Transpose ta, Transpose tb, std::size_t m,
                            std::size_t n, std::size_t k, std::size_t a_ld, std::size_t b_ld,
                            std::size_t c_ld, std::size_t& size) {
  cl_command_queue q = runtime().cl.queue();
  auto of = [&](auto zero) {
    return GemmTempBufferSize<decltype(zero)>(layout, ta, tb, m, n, k, 0, a_ld, 0, b_ld, 0, c_ld,
                                              &q, size);
  };
  return bits == 32 ? of(float{}) : bits == 64 ? of(double{}) : of(half{});
}

// GemmTempBufferSize for the call run_form makes of `f`, with its
// operands' leading dimensions (operand()).
StatusCode temp_buffer_size(int bits, const Form& f, std::size_t& size) {
  const std::size_t a_ld = operand(f.layout, f.ta != Transpose::kNo, f.m, f.k, f, 0, 0, false).ld;
  const std::size_t b_ld = operand(f.layout, f.tb != Transpose::kNo, f.k, f.n, f, 0, 0, false).ld;
  const std::size_t c_ld = operand(f.layout, false, f.m, f.n, f, 0, 0, false).ld;
  return temp_buffer_size(bits, f.layout, f.ta, f.tb, f.m, f.n, f.k, a_ld, b_ld, c_ld, size);
}

// Forces the family's first point that reads A and B from global memory
// (the CPU-shaped ones, which take the packing passes) on `device`; `point`
// (may be null) gets it.
void force_unstaged_point(cl_device_id device, int bits, const Variant** point = nullptr) {
  const Variant* unstaged = nullptr;
  for (const Variant& v : gemm_family(bits).manifest().variants) {
    if (!unstaged && v.param("SA") == 0 && v.param("SB") == 0) unstaged = &v;
  }
  ASSERT_NE(unstaged, nullptr);
  ASSERT_EQ(OverrideVariant(device, bits, unstaged->name), StatusCode::kSuccess) << GemmMessage();
  if (point) *point = unstaged;
}

// force_unstaged_point with K in one part: a GPU splits the K of a product
// with fewer tiles than it has units, and the parts' space would join the
// packing's (the H200 added 2 of 33 x 19 floats to the copy's;
// Gemm.KSplitIntoPartsMatchesTheReference counts it). Half precision is
// never split.
void force_unstaged_point_whole_k(cl_device_id device, int bits,
                                  const Variant** point = nullptr) {
  ASSERT_NO_FATAL_FAILURE(force_unstaged_point(device, bits, point));
  if (bits != 16) ASSERT_EQ(OverrideKParts(device, bits, 1), StatusCode::kSuccess);
}

// Lifts what force_unstaged_point_whole_k forced, however the test ends.
struct Unforced {
  cl_device_id device;
  int bits;
  ~Unforced() {
    OverrideVariant(device, bits, "");
    if (bits != 16) OverrideKParts(device, bits, 0);
  }
};

// One product's K split into parts (OverrideKParts; GemmKParts splits on
// GPUs only): a batch over the parts into the temporary space, then the
// pass that adds them into C. Parts that leave a shorter rest of K and
// ones that do not, on each runtime's chosen point (its packing passes
// too; Oclgrind's forced below), in the kept space and in the caller's; the
// space grows by the parts' products.
// Under Oclgrind (21.10, --uninitialized) the split calls write into a
// buffer of the caller's filled from the host: with a buffer newly created
// and written only by the parts' launches, its check reported every read
// of the pass as uninitialized, though the parts had written every element
// (the buffer filled with NaN first, none was left, and C was right). Its
// source gives a buffer a record of what is initialized only where none is
// kept under the buffer's handle number, which a released buffer's record
// still holds; a host write makes a new one.
TEST(Gemm, KSplitIntoPartsMatchesTheReference) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  cl_device_id device = runtime().cl.device();
  EXPECT_EQ(OverrideKParts(device, 16, 2), StatusCode::kInvalidValue);
  EXPECT_EQ(OverrideKParts(device, 32, kGemmMaxKParts + 1), StatusCode::kInvalidValue);
  EXPECT_NE(GemmMessage().find("more than"), std::string::npos) << GemmMessage();
  const bool oclgrind =
      runtime().cl.device.getInfo<CL_DEVICE_NAME>().find("Oclgrind") != std::string::npos;
  // {m, n, k, parts}: 100 / 7 -> 6 parts of 15, the last 10 added onto
  // the sixth; 140 / 3 -> 2 of 47 and 46 more; 300 / 4 -> 75, rounded up
  // to a multiple of 64: 2 of 128 and 44 more; 192 / 3 -> 3 of 64; 200 /
  // 3 -> 67, rounded up: one part of 128 and 72 more, not split.
  std::vector<std::array<std::size_t, 4>> cases{
      {33, 65, 100, 7}, {31, 19, 140, 3}, {129, 63, 300, 4}, {31, 19, 192, 3}, {31, 19, 200, 3}};
  if (slow()) cases = {{33, 19, 100, 7}, {31, 19, 192, 3}};
  std::mt19937 rng(std::random_device{}());
  const Transpose N = Transpose::kNo, T = Transpose::kYes;
  const cl::Context& ctx = runtime().cl.context;
  for (int bits : precisions()) {
    if (bits == 16) continue;  // never split
    SCOPED_TRACE(precision(bits));
    // Under Oclgrind, the first point that reads A and B in place: what
    // this test checks (the parts' offsets, their space, the summing pass)
    // is the same for every point, and with the staged tiles its choice
    // takes there (up to 64 x 64, 256 work-items) the checked simulation
    // ran 59 s, against 24.5 (2 Xeon cores; Gemm.EveryFormMatchesTheReference
    // runs the staged points there).
    const Unforced unforce{device, bits};
    if (oclgrind) ASSERT_NO_FATAL_FAILURE(force_unstaged_point(device, bits));
    const std::size_t element = std::size_t(bits) / 8;
    // The space the largest call takes (GemmTempBufferSize of run_form's
    // calls), from the host.
    std::size_t most = 0;
    for (const auto& [m, n, k, parts] : cases) {
      ASSERT_EQ(OverrideKParts(device, bits, parts), StatusCode::kSuccess) << GemmMessage();
      for (Layout l : {Layout::kRowMajor, Layout::kColMajor}) {
        for (const auto& [ta, tb] : {std::pair{N, N}, {N, T}, {T, N}, {T, T}}) {
          Form f;
          f.layout = l, f.ta = ta, f.tb = tb, f.m = m, f.n = n, f.k = k;
          std::size_t size = 0;
          ASSERT_EQ(temp_buffer_size(bits, f, size), StatusCode::kSuccess) << GemmMessage();
          most = std::max(most, size);
        }
      }
    }
    ASSERT_GT(most, 0u);
    const std::vector<unsigned char> zeros(most, 0);
    cl::Buffer filled(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zeros.size(),
                      const_cast<unsigned char*>(zeros.data()));
    for (const auto& [m, n, k, parts] : cases) {
      ASSERT_EQ(OverrideKParts(device, bits, parts), StatusCode::kSuccess) << GemmMessage();
      for (Layout l : {Layout::kRowMajor, Layout::kColMajor}) {
        for (const auto& [ta, tb] : {std::pair{N, N}, {N, T}, {T, N}, {T, T}}) {
          for (const auto& [al, be] : {std::pair{-0.75, 0.5}, {1.0, 0.0}}) {
            if (slow() && (ta != tb || al == 1.0)) continue;
            Form f;
            f.layout = l, f.ta = ta, f.tb = tb, f.alpha = al, f.beta = be;
            f.m = m, f.n = n, f.k = k;
            // Every other call in the caller's space (under Oclgrind, all).
            if (oclgrind || (ta == tb) != (l == Layout::kRowMajor)) f.temp = filled();
            EXPECT_EQ(run_form(bits, f, rng), "")
                << f.describe(bits) << " in " << parts << " parts of K"
                << (f.temp ? ", the caller's space" : "");
          }
        }
      }
    }
    // 6 parts of 33 x 65 in the space beside whatever the passes take.
    const std::size_t m = 33, n = 65, k = 100;
    const Layout R = Layout::kRowMajor;
    std::size_t whole = 0, split = 0;
    ASSERT_EQ(OverrideKParts(device, bits, 1), StatusCode::kSuccess);
    ASSERT_EQ(temp_buffer_size(bits, R, N, N, m, n, k, k + 3, n + 3, n + 3, whole),
              StatusCode::kSuccess)
        << GemmMessage();
    ASSERT_EQ(OverrideKParts(device, bits, 7), StatusCode::kSuccess);
    ASSERT_EQ(temp_buffer_size(bits, R, N, N, m, n, k, k + 3, n + 3, n + 3, split),
              StatusCode::kSuccess)
        << GemmMessage();
    EXPECT_EQ(split, whole + 6 * m * n * element);
    cl::Buffer too_small(ctx, CL_MEM_READ_WRITE, split - element);
    const std::vector<unsigned char> some(split, 0);
    cl::Buffer enough(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, split,
                      const_cast<unsigned char*>(some.data()));
    Form f;
    f.m = m, f.n = n, f.k = k, f.alpha = 1.5, f.beta = 0.5;
    f.temp = too_small();
    const std::string refused = run_form(bits, f, rng);
    EXPECT_NE(refused.find("the products of K's 6 parts"), std::string::npos) << refused;
    EXPECT_EQ(refused.find("C changed"), std::string::npos) << refused;
    f.temp = enough();
    EXPECT_EQ(run_form(bits, f, rng), "");
    OverrideKParts(device, bits, 0);
  }
}

// Rows of B a multiple of 4 KiB apart: a CPU point that reads B in place
// gets B copied into rows one cache line longer where 3 or more rows of
// tiles read it (in the call's temporary space: GemmTempBufferSize counts
// it; with fewer B is read in place), B^T packed into such rows where n
// of its rows would alias, A^T too where k of them would, and K in
// launches of 512 (the rows a page apart); single,
// strided (one 3-D copy) and batched (a copy a product) calls, both layouts,
// op(B) plain and transposed, every precision the device has.
TEST(Gemm, RowsOfBFourKibApartAreCopiedWithLongerRows) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  cl_device_id device = runtime().cl.device();
  const bool cpu = (DeviceCaps::query(runtime().cl.device).device_type & CL_DEVICE_TYPE_CPU) != 0;
  std::mt19937 rng(std::random_device{}());
  for (int bits : precisions()) {
    SCOPED_TRACE(precision(bits));
    const Variant* point = nullptr;
    const Unforced lift{device, bits};
    ASSERT_NO_FATAL_FAILURE(force_unstaged_point_whole_k(device, bits, &point));
    // Past one launch of K where launches are cheap.
    const std::size_t m = 33, n = 19, k = slow() ? 40 : 1100;
    // Three rows of the point's tiles: B copied.
    const std::size_t copied_m = 2 * std::size_t(point->param("MWG")) + 1;
    const std::size_t element = std::size_t(bits) / 8, rows_4k = 4096 / element;
    const std::size_t ld = (k + rows_4k - 1) / rows_4k * rows_4k;  // 4 KiB multiples, >= k
    const Layout R = Layout::kRowMajor;
    const Transpose N = Transpose::kNo, T = Transpose::kYes;
    // The bytes the call's packing takes, in row-major with op(A) = A.
    auto temp_bytes = [&](std::size_t m_of_c, Transpose tb, std::size_t n_of_c,
                          std::size_t k_of_c, std::size_t ldb) {
      std::size_t size = 1;
      EXPECT_EQ(temp_buffer_size(bits, R, N, tb, m_of_c, n_of_c, k_of_c, ld, ldb, ld, size),
                StatusCode::kSuccess)
          << GemmMessage();
      return size;
    };
    EXPECT_EQ(temp_bytes(copied_m, N, n, k, ld), cpu ? k * (ld + 64 / element) * element : 0);
    // Two rows of tiles: B read in place.
    EXPECT_EQ(temp_bytes(copied_m - 1, N, n, k, ld), 0u);
    // B^T (n x k, n = 4 KiB of elements) packed into rows of n, longer on a
    // CPU. (K = 40: with 1100 the product's transpose would move less,
    // Gemm.ThinProductsAreComputedAsTheirTranspose.)
    const std::size_t wide = rows_4k;
    EXPECT_EQ(temp_bytes(m, T, wide, 40, ld), 40 * (cpu ? wide + 64 / element : wide) * element);
    // A^T (m x k, k = 4 KiB of elements) packed into rows of k, longer on a CPU.
    {
      std::size_t size = 1;
      ASSERT_EQ(temp_buffer_size(bits, R, T, N, m, n, rows_4k, m + 3, n + 3, n + 3, size),
                StatusCode::kSuccess)
          << GemmMessage();
      EXPECT_EQ(size, m * (cpu ? rows_4k + 64 / element : rows_4k) * element);
    }
    for (Kind kind : {Kind::Single, Kind::Strided, Kind::Batched}) {
      for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
        for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
          // The slow runtimes: each kind once, B plain, the layouts in turn.
          if (slow() && (tb != Transpose::kNo || (kind == Kind::Batched) != (layout == R))) {
            continue;
          }
          Form f;
          f.kind = kind, f.batch = kind == Kind::Single ? 1 : 3, f.layout = layout, f.tb = tb;
          f.m = copied_m, f.n = n, f.k = kind == Kind::Single ? k : 40;
          f.alpha = -0.75, f.beta = 0.5;
          f.ld_multiple = rows_4k;
          check_forms(bits, {f}, "");
        }
      }
    }
    if (!slow()) {
      Form f;
      f.tb = T, f.m = m, f.n = wide, f.k = 40, f.alpha = 1.5, f.beta = 0;
      check_forms(bits, {f}, "");
      Form g;
      g.ta = T, g.m = m, g.n = n, g.k = rows_4k, g.alpha = -0.75, g.beta = 0.5;
      check_forms(bits, {g}, "");
    }
  }
}

// One product whose B rows lie a page apart, on a CPU point that reads B
// in place with rows of tiles for every unit: op(B) is packed into panels
// (matmul_b_panel_width; B copied, B^T packed by the pass), the panels of
// one width in one launch (a batch with A's stride 0) and the last one,
// where wider, in another; the temporary space then holds exactly k x n
// (after A^T where packed). Every precision, both layouts (a column-major
// call's n is its m), op(B) plain and transposed, K in two launches; in
// single precision, row-major NN, also n a multiple of the width (every
// panel in the batch).
TEST(Gemm, OneProductPacksBIntoPanels) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  const bool cpu = (caps.device_type & CL_DEVICE_TYPE_CPU) != 0;
  cl_device_id device = runtime().cl.device();
  const std::size_t units = std::max<cl_uint>(1, caps.compute_units);
  for (int bits : precisions()) {
    SCOPED_TRACE(precision(bits));
    const Variant* unstaged = nullptr;
    for (const Variant& v : gemm_family(bits).manifest().variants) {
      if (!unstaged && v.param("SA") == 0 && v.param("SB") == 0) unstaged = &v;
    }
    ASSERT_NE(unstaged, nullptr);
    ASSERT_EQ(OverrideVariant(device, bits, unstaged->name), StatusCode::kSuccess) << GemmMessage();
    const std::size_t element = std::size_t(bits) / 8, width = unstaged->param("NWG");
    // The row-major view: `rows` rows of tiles for every unit, `cols`
    // columns a page and a ragged last panel, K past one launch.
    const std::size_t rows = kMatmulPanelTilesPerUnit * units * unstaged->param("MWG") + 5;
    const std::size_t k = kMatmulCpuKPerLaunch + 40;
    if (rows > 4096) continue;  // many units: too large a product for a test
    for (std::size_t ragged : {7, 0}) {
      const std::size_t cols = 4096 / element + width + ragged;
      ASSERT_EQ(
          matmul_b_panel_width(MatmulKernel::Blocked, *unstaged, caps, rows, cols, k, element),
          cpu ? width : 0);
      if (!cpu) continue;  // a GPU point stages B: nothing to pack
      for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
        for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
          // Half and double: one form each, the products are large.
          // B stored with rows k long: row-major B^T, column-major B.
          const bool b_rows_k = (layout == Layout::kColMajor) != (tb == Transpose::kYes);
          // Every panel in the batch: row-major NN (the other forms take
          // the same launches through the same view).
          if (ragged == 0 && (layout != Layout::kRowMajor || tb != Transpose::kNo)) continue;
          if (bits != 32 && (ragged == 0 || b_rows_k)) continue;
          Form f;
          f.layout = layout, f.tb = tb, f.alpha = -0.75, f.beta = 0.5, f.k = k;
          f.m = layout == Layout::kRowMajor ? rows : cols;
          f.n = layout == Layout::kRowMajor ? cols : rows;
          // The space: k x n of the view, packed whatever op(B) is, after
          // the view's A^T (a column-major call's B^T) where packed.
          std::size_t size = 1;
          const std::size_t a_ld = layout == Layout::kRowMajor ? k : f.m;
          const std::size_t b_ld = b_rows_k ? k : f.n;
          ASSERT_EQ(temp_buffer_size(bits, layout, Transpose::kNo, tb, f.m, f.n, k, a_ld, b_ld,
                                     layout == Layout::kRowMajor ? f.n : f.m, size),
                    StatusCode::kSuccess)
              << GemmMessage();
          const bool view_a_trans = layout == Layout::kColMajor && tb == Transpose::kYes;
          EXPECT_EQ(size, (k * cols + (view_a_trans ? rows * k : 0)) * element) << f.describe(bits);
          check_forms(bits, {f}, "");
        }
      }
    }
    OverrideVariant(device, bits, "");
  }
}

// One product with a thin side whose point packs op(A) = A^T or
// op(B) = B^T is computed as its transpose, C^T = op(B)^T op(A)^T, where
// the point's tiles pad the transpose's C no more: the pass then packs the
// thin operand instead of the large one, and C^T is moved through the
// space (into it first where beta is not 0, out of it into C after).
// GemmTempBufferSize counts exactly those; every precision, both
// layouts (a column-major call's m is the view's n), beta 0 and not, K in
// two launches where launches are cheap.
TEST(Gemm, ThinProductsAreComputedAsTheirTranspose) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  cl_device_id device = runtime().cl.device();
  for (int bits : precisions()) {
    SCOPED_TRACE(precision(bits));
    const Variant* point = nullptr;
    ASSERT_NO_FATAL_FAILURE(force_unstaged_point(device, bits, &point));
    // The point's tiles over an m x n C against C's own.
    auto waste = [&](std::size_t m, std::size_t n) {
      const std::size_t tm = point->param("MWG"), tn = point->param("NWG");
      return double((m + tm - 1) / tm * tm) * double((n + tn - 1) / tn * tn) / double(m * n);
    };
    const std::size_t element = std::size_t(bits) / 8;
    const std::size_t wide = slow() ? 70 : 300, thin = slow() ? 3 : 5;
    const std::size_t k = slow() ? 40 : bits == 32 ? kMatmulCpuKPerLaunch + 76 : 260;
    const Transpose N = Transpose::kNo, T = Transpose::kYes;
    struct Case {
      Layout layout;
      Transpose ta, tb;
      std::size_t m, n;
    };
    // Row-major A^T with few columns of C and B^T with few rows; the
    // column-major calls whose row-major views are those.
    const std::vector<Case> cases{{Layout::kRowMajor, T, N, wide, thin},
                                  {Layout::kRowMajor, N, T, thin, wide},
                                  {Layout::kColMajor, N, T, thin, wide},
                                  {Layout::kColMajor, T, N, wide, thin}};
    for (const Case& c : cases) {
      // Double and half: the row-major ones.
      if (bits != 32 && c.layout == Layout::kColMajor) continue;
      const bool row = c.layout == Layout::kRowMajor;
      Form f;
      f.layout = c.layout, f.ta = c.ta, f.tb = c.tb, f.m = c.m, f.n = c.n, f.k = k;
      f.alpha = -0.75;
      std::size_t size = 1;
      ASSERT_EQ(temp_buffer_size(bits, f, size), StatusCode::kSuccess) << GemmMessage();
      // The row-major view: A^T with few columns of C (its transpose then
      // has few rows) or B^T with few rows. As its transpose, where the
      // point's tiles pad that no more: the thin operand packed (k x thin)
      // and C^T (m x n); else the large one (k x wide).
      const std::size_t vm = row ? c.m : c.n, vn = row ? c.n : c.m;
      const bool view_a_trans = (row ? c.ta : c.tb) == T;
      EXPECT_EQ(view_a_trans, vn == thin);
      const bool as_transpose = waste(vn, vm) <= waste(vm, vn);
      if (view_a_trans) EXPECT_TRUE(as_transpose) << "A^T is " << vm << " x " << k;
      EXPECT_EQ(size, (as_transpose ? k * thin + c.m * c.n : k * wide) * element)
          << name(c.layout) << " " << name(c.ta) << name(c.tb);
      for (double beta : {0.0, 0.5}) {
        f.beta = beta;
        check_forms(bits, {f}, "");
        // GemmLastCall() says so: the point, the layout and the transpose.
        const std::string ran = GemmLastCall();
        EXPECT_EQ(ran.rfind(point->name + " (", 0), 0u) << ran;
        EXPECT_EQ(ran.find("the call's transpose") != std::string::npos, as_transpose) << ran;
        EXPECT_EQ(ran.find("column-major call") != std::string::npos, !row) << ran;
      }
    }
    OverrideVariant(device, bits, "");
  }
}

// Both operands transposed, on a point that packs them: the product is
// computed as its transpose, an NN product into the space and one pass of
// C^T into C (C moved in first where beta is not 0), not two packing
// passes (on PoCL at 256^3 TT went from 1.40 to 1.01-1.11 times NN's
// time, 2026-12-04). GemmTempBufferSize counts C^T alone; every precision, both
// layouts, beta 0 and not; K in one part (a GPU's split would add its
// parts' space).
TEST(Gemm, BothOperandsTransposedAreComputedAsTheTranspose) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  cl_device_id device = runtime().cl.device();
  for (int bits : precisions()) {
    SCOPED_TRACE(precision(bits));
    const Unforced lift{device, bits};
    ASSERT_NO_FATAL_FAILURE(force_unstaged_point_whole_k(device, bits));
    const std::size_t element = std::size_t(bits) / 8, side = slow() ? 37 : 150;
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      Form f;
      f.layout = layout, f.ta = Transpose::kYes, f.tb = Transpose::kYes;
      f.m = side, f.n = side + 3, f.k = side + 5, f.alpha = -0.75;
      std::size_t size = 1;
      ASSERT_EQ(temp_buffer_size(bits, f, size), StatusCode::kSuccess) << GemmMessage();
      EXPECT_EQ(size, f.m * f.n * element) << name(layout);
      for (double beta : {0.0, 0.5}) {
        f.beta = beta;
        check_forms(bits, {f}, "");
      }
    }
  }
}

// The parameters that change a blocked point's code, not only its constants.
std::string code_shape(const Variant& v) {
  std::string shape;
  for (const char* p : {"SA", "SB", "PF", "VWM", "VWN", "KWI", "FMA", "DB", "VWA"})
    shape += std::string(p) + std::to_string(v.param(p)) + "_";
  return shape;
}

TEST(Gemm, EveryVariantOfEachPrecision) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const std::string which = env("FATCL_TEST_GEMM_VARIANTS");
  if (which != "all" && which != "cpu")
    GTEST_SKIP() << "FATCL_TEST_GEMM_VARIANTS is neither all nor cpu";
  const std::string tier = env("FATCL_TEST_TIER");
  std::optional<Tier> forced_tier;
  if (!tier.empty()) forced_tier = parse_tier(tier);
  cl_device_id device = runtime().cl.device();
  // Each variant's own tile edges in every form.
  for (int bits : precisions()) {
    const Manifest& m = gemm_family(bits).manifest();
    std::vector<std::string> shapes_seen;
    for (const Variant& v : m.variants) {
      if (which == "cpu" && (v.param("SA") || v.param("SB"))) {
        const std::string shape = code_shape(v);
        if (std::find(shapes_seen.begin(), shapes_seen.end(), shape) != shapes_seen.end()) continue;
        shapes_seen.push_back(shape);
      }
      ASSERT_EQ(OverrideVariant(device, bits, v.name, forced_tier), StatusCode::kSuccess)
          << GemmMessage();
      const std::size_t mt = std::size_t(v.param("MWG")), nt = std::size_t(v.param("NWG")),
                        kt = std::size_t(v.param("KWG"));
      std::vector<Form> list;
      for (Layout l : {Layout::kRowMajor, Layout::kColMajor}) {
        for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
          for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
            // Two shapes in turn: one past a tile in M with N two tiles
            // less one (moved and ragged tiles, K past two slices), one of
            // two whole tiles in M, ragged in N, K one slice, beta 0.
            Form f;
            f.layout = l, f.ta = ta, f.tb = tb;
            if ((list.size() + list.size() / 4) % 2 == 0) {  // each op pair both ways
              f.m = mt + 1, f.n = 2 * nt - 1, f.k = 2 * kt + 1, f.alpha = -0.75, f.beta = 0.5;
            } else {
              f.m = 2 * mt, f.n = nt + 3, f.k = kt, f.alpha = 1, f.beta = 0;
            }
            list.push_back(f);
          }
        }
      }
      const std::size_t failures = check_forms(bits, list, v.name + ": ");
      std::cout << v.name << (tier.empty() ? "" : " [" + tier + "]") << ": "
                << list.size() - failures << " of " << list.size() << " forms right\n";
    }
  }
  // A name no family has is refused; "" lifts the override.
  EXPECT_EQ(OverrideVariant(device, 32, "sgemm_blocked_NO_SUCH"), StatusCode::kInvalidOverrideKernel);
  EXPECT_NE(GemmMessage().find(
                "sgemm_blocked, sgemm_naive, sgemm_lanes, sgemm_rows, sgemm_dot and sgemm_axpy "
                "have no variant"),
            std::string::npos)
      << GemmMessage();
  for (int bits : precisions()) EXPECT_EQ(OverrideVariant(device, bits, ""), StatusCode::kSuccess);
}

// The reference path (gemm_naive_family, forced): every layout x op(A) x
// op(B), alpha 0, 1 and another, beta 0 and another, single, batched and
// strided-batched, in each precision the device has.
TEST(Gemm, TheReferencePathComputesEveryForm) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  cl_device_id device = runtime().cl.device();
  for (int bits : precisions()) {
    const std::string naive = gemm_naive_family(bits).manifest().variants.at(0).name;
    ASSERT_EQ(OverrideVariant(device, bits, naive), StatusCode::kSuccess) << GemmMessage();
    std::vector<Form> list;
    const double alphas[] = {1, -0.75, 0};
    const double betas[] = {0, 0.5};
    for (Layout l : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
        for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
          Form f;
          f.layout = l, f.ta = ta, f.tb = tb;
          f.m = 9 + list.size() % 3, f.n = 13 - list.size() % 4, f.k = 7 + list.size() % 5;
          f.alpha = alphas[list.size() % 3], f.beta = betas[list.size() % 2];
          f.kind = list.size() % 3 == 0 ? Kind::Single
                   : list.size() % 3 == 1 ? Kind::Batched
                                          : Kind::Strided;
          f.batch = f.kind == Kind::Single ? 1 : 3;
          list.push_back(f);
        }
      }
    }
    EXPECT_EQ(check_forms(bits, list, naive + ": "), 0u);
    EXPECT_EQ(OverrideVariant(device, bits, ""), StatusCode::kSuccess);
  }
}

// Each point of `family` forced in turn, every layout x op(A) x op(B) on
// three shapes: alpha 0, 1 and another, beta 0 and another, each op pair's
// shapes taking single, batched (`batch` products) and strided-batched
// calls in turn. `keep(s, i, p)` says which (shape s, form i / 3, point p)
// run; `adjust(f, s)` changes a form before.
using KeepForm = std::function<bool(std::size_t s, std::size_t i, std::size_t p)>;
void check_family_forms(const Family& family, int bits,
                        const std::array<std::size_t, 3> (&shapes)[3], std::size_t batch,
                        const KeepForm& keep,
                        const std::function<void(Form&, std::size_t)>& adjust) {
  cl_device_id device = runtime().cl.device();
  const std::vector<Variant>& points = family.manifest().variants;
  for (std::size_t p = 0; p < points.size(); ++p) {
    const Variant& v = points[p];
    ASSERT_EQ(OverrideVariant(device, bits, v.name), StatusCode::kSuccess) << GemmMessage();
    std::vector<Form> list;
    const double alphas[] = {1, -0.75, 0};
    const double betas[] = {0, 0.5};
    std::size_t i = 0;
    for (Layout l : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
        for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
          for (std::size_t s = 0; s < 3; ++s, ++i) {
            if (!keep(s, i, p)) continue;
            Form f;
            f.layout = l, f.ta = ta, f.tb = tb;
            f.m = shapes[s][0], f.n = shapes[s][1], f.k = shapes[s][2];
            const std::size_t kind = (i / 3 + s) % 3;
            f.alpha = alphas[(i / 3 + 2 * s) % 3], f.beta = betas[(i + i / 3) % 2];
            f.kind = kind == 0 ? Kind::Single : kind == 1 ? Kind::Batched : Kind::Strided;
            f.batch = f.kind == Kind::Single ? 1 : batch;
            adjust(f, s);
            list.push_back(f);
          }
        }
      }
    }
    const std::size_t failures = check_forms(bits, list, v.name + ": ");
    std::cout << v.name << ": " << list.size() - failures << " of " << list.size()
              << " forms right\n";
    EXPECT_EQ(failures, 0u);
  }
  EXPECT_EQ(OverrideVariant(device, bits, ""), StatusCode::kSuccess);
}

// The lanes family (forced; the entry points do not choose it yet): every
// form (check_family_forms) on a ragged product in one K slice, a 32^3 one
// whose rows are aligned to the vector (slices loaded as vectors where not
// transposed; the batched call's later products are not aligned; each op
// pair's 32^3 NN one called singly in row-major order) and one of two tiles
// each way over three slices, the last ragged; the slow runtimes one shape
// a form, and where a precision has several points (their code is one,
// their work-groups differ), each point every other form (Oclgrind's
// checked run took 62 s with all of them, 2 Xeon cores).
TEST(Gemm, TheLanesFamilyComputesEveryForm) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const std::array<std::size_t, 3> shapes[] = {{33, 19, 9}, {32, 32, 32}, {64, 40, 70}};
  for (int bits : precisions()) {
    const std::size_t points = gemm_lanes_family(bits).manifest().variants.size();
    check_family_forms(
        gemm_lanes_family(bits), bits, shapes, 3,
        [points](std::size_t s, std::size_t i, std::size_t p) {
          return !slow() || (s == i / 3 % 3 && (points == 1 || i / 3 % 2 == p % 2));
        },
        [](Form& f, std::size_t s) {
          if (s == 1) f.ld_multiple = f.offset_multiple = 4;
        });
  }
}

// The rows family (forced): every form (check_family_forms) on a product
// narrower than a register block's columns (a vector of them, a half and a
// quarter of one, the rest an element at a time), one with a row block's
// rest, two stripes of 512 columns (the second all rest: a vector and two
// elements) and K in two blocks, and one with two work-items of rows and
// three blocks of K, each thin as it runs (a column-major one's sides
// swapped); the slow runtimes one shape a form, the first point every form,
// the 2 x 2 point every other form and the other stripes one. op(B) = B^T,
// which the entry points never send it, takes its element-at-a-time path.
// A driver that stops loops (the quirk loop-limit-65536: rusticl 22.3 gave
// 5 of 8 forms wrong at the larger shapes) never gets the family from the
// entry points, and is not given it here: rusticl took 320 s to build its
// four single-precision points for the smallest shape (2 Xeon cores,
// 2026-12-06, the kernel with its half and quarter vectors).
TEST(Gemm, TheRowsFamilyComputesEveryForm) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  // Columns past whole vectors: 13 (29, row-major), 6 (70), 5 (5, the
  // column-major call turned around) and 13 after four whole ones (77, its
  // leading dimensions the least: the padded vectors read into the next row
  // and, on the last row of B, element by element).
  std::array<std::size_t, 3> shapes[] = {{5, 29, 9}, {37, 530, 70}, {67, 77, 130}};
  // The slow runtimes: the same paths on less work (Oclgrind's checked run
  // of the shapes above took about 130 s).
  if (slow()) shapes[1] = {5, 530, 9}, shapes[2] = {67, 77, 70};
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  if (has_driver_quirk(caps, "loop-limit-65536")) {
    for (int bits : precisions()) {
      EXPECT_FALSE(GemmRowsFit(caps, bits, 20, 1100, 40, 1, false));
    }
    return;
  }
  for (int bits : precisions()) {
    // A point that differs from the first in its stripe alone (the same
    // code over other bounds) takes one form on the slow runtimes (the two
    // such points' every other form added 50 s to Oclgrind's, 2026-12-06).
    const std::vector<Variant>& points = gemm_rows_family(bits).manifest().variants;
    auto stripe_alone = [&points](std::size_t p) {
      return points[p].param("MB") == points[0].param("MB") &&
             points[p].param("NV") == points[0].param("NV");
    };
    check_family_forms(
        gemm_rows_family(bits), bits, shapes, 2,
        [stripe_alone](std::size_t s, std::size_t i, std::size_t p) {
          // PoCL from SPIR-V built the rows family's twelve points (192 KB of
          // SPIR-V each) in 267 of its GEMM tests' 394 s on a Zen 4
          // (2026-12-08); Intel's runtime takes every point as SPIR-V and
          // Debian's PoCL every point as source.
          if (builds_slow() && p != 0) return false;
          const bool form = p == 0 || (stripe_alone(p) ? i / 3 == 0 : i / 3 % 2 == 0);
          return !slow() || (s == i / 3 % 3 && form);
        },
        [](Form& f, std::size_t s) {
          if (f.layout == Layout::kColMajor) std::swap(f.m, f.n);
          f.least_ld = s == 2;
        });
  }
}

// A product of one row whose op(B) = B^T runs on a CPU as its transpose in
// place (C^T, one column, is C's memory): every kind of call, both layouts
// (column-major one column with op(A) = A^T is such a row), leading
// dimensions above the least and offsets, right with guard values kept
// (run_form), and said by GemmLastCall; so does one of op(B) = B that the
// rows family does not take. Where the rows family does not run (a GPU, a
// loop limit) nothing is turned.
TEST(Gemm, AOneRowProductOfBTransposedRunsAsItsTransposeInPlace) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  const bool turns = GemmRowsFit(caps, 32, 300, 1, 200, 1, false);
  std::mt19937 rng(std::random_device{}());
  // (The slow runtimes: a shorter row, one product a call; Oclgrind's
  // checked run of every kind of call took 150 s, 2 Xeon cores; this, 15.)
  const std::size_t wide = slow() ? 70 : 300;
  for (Kind kind : {Kind::Single, Kind::Batched, Kind::Strided}) {
    if (slow() && kind != Kind::Single) continue;
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
        Form f;
        f.layout = layout, f.kind = kind, f.batch = kind == Kind::Single ? 1 : 3;
        f.m = layout == Layout::kRowMajor ? 1 : wide, f.n = layout == Layout::kRowMajor ? wide : 1;
        f.k = slow() ? 40 : 200, f.alpha = 1.5, f.beta = 0.5;
        // Row-major: op(B) = B^T; column-major: op(A) = A^T (B^T as it runs).
        (layout == Layout::kRowMajor ? f.tb : f.ta) = Transpose::kYes;
        (layout == Layout::kRowMajor ? f.ta : f.tb) = ta;
        ASSERT_EQ(run_form(32, f, rng), "") << f.describe(32);
        const bool turned = GemmLastCall().find("as its transpose in place") != std::string::npos;
        EXPECT_EQ(turned, turns) << f.describe(32) << ": " << GemmLastCall();
      }
    }
  }
  // A one-row product of B turns where the rows family takes its transpose
  // and not the product itself.
  Form f;
  f.m = 1, f.n = wide, f.k = slow() ? 40 : 200, f.alpha = -0.75, f.beta = 0.5;
  ASSERT_EQ(run_form(32, f, rng), "") << f.describe(32);
  EXPECT_EQ(GemmLastCall().find("as its transpose in place") != std::string::npos,
            !GemmRowsFit(caps, 32, 1, wide, f.k, 1, false) &&
                GemmRowsFit(caps, 32, wide, 1, f.k, 1, false, true))
      << f.describe(32) << ": " << GemmLastCall();
}

// A family for one row or column (the dot and axpy ones), forced, in each
// precision: every form (check_family_forms) on `shapes`, each as it runs
// (a column-major one's sides swapped); the slow runtimes one shape a form.
void check_skinny_family_forms(const Family& (*family)(int),
                               const std::array<std::size_t, 3> (&shapes)[3]) {
  for (int bits : precisions()) {
    check_family_forms(
        family(bits), bits, shapes, 2,
        [](std::size_t s, std::size_t i, std::size_t) { return !slow() || s == i / 3 % 3; },
        [](Form& f, std::size_t s) {
          if (f.layout == Layout::kColMajor) std::swap(f.m, f.n);
          f.least_ld = s == 2;
        });
  }
}

// The dot family (forced): every form (check_family_forms) on a product of
// one column over a K shorter than a GPU point's step, one of one row
// (taken as its transpose, in place) over a K of whole and partial steps,
// and one of 16 columns (passes of one column); on the slow runtimes one
// smaller shape a form. Then where the entry points take it: a matrix times a
// vector along K on a GPU.
TEST(Gemm, TheDotFamilyComputesEveryForm) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  // (A runtime with a loop limit never takes it, and builds slowest: rusticl.)
  if (has_driver_quirk(caps, "loop-limit-65536")) {
    EXPECT_FALSE(GemmDotFit(caps, 4096, 1, 4096, false, false));
    return;
  }
  std::array<std::size_t, 3> shapes[] = {{70, 1, 37}, {1, 130, 600}, {150, 16, 67}};
  // (Oclgrind's checked run of these took over 10 minutes: a pass a column,
  // 128 work-items a row.)
  if (slow()) shapes[1] = {1, 30, 90}, shapes[2] = {20, 3, 67};
  check_skinny_family_forms(gemm_dot_family, shapes);
  const bool gpu = caps.is_gpu();
  EXPECT_EQ(GemmDotFit(caps, 4096, 1, 4096, false, false), gpu);
  EXPECT_EQ(GemmDotFit(caps, 1, 4096, 4096, false, true), gpu);
  EXPECT_FALSE(GemmDotFit(caps, 4096, 1, 4096, true, false));  // A^T lies along M
  EXPECT_FALSE(GemmDotFit(caps, 4096, 2, 4096, false, false));
  EXPECT_FALSE(GemmDotFit(caps, 4096, 1, 200, false, false));
  if (!gpu || slow()) return;
  std::mt19937 rng(std::random_device{}());
  Form f;
  f.m = 2000, f.n = 1, f.k = 1500, f.alpha = 1.5, f.beta = 0.5;
  ASSERT_EQ(run_form(32, f, rng), "") << f.describe(32);
  EXPECT_EQ(GemmLastCall().rfind("sgemm_dot_", 0), 0u) << GemmLastCall();
}

// The axpy family (forced): every form (check_family_forms) on a product of
// one row over a K shorter than the unrolled step (its columns past one
// group's, the last group ragged), one of one column (taken as its
// transpose, in place) over whole and partial unrolled steps, and one of 9
// rows (two passes of 4 and one of 1); on the slow runtimes one smaller
// shape a form. Then its K in parts that a second pass adds (as a GPU
// splits it; here forced), and where the entry points take it: a vector
// times a matrix along its rows on a GPU.
TEST(Gemm, TheAxpyFamilyComputesEveryForm) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  // (A runtime with a loop limit never takes it, and builds slowest: rusticl.)
  if (has_driver_quirk(caps, "loop-limit-65536")) {
    EXPECT_FALSE(GemmAxpyFit(caps, 1, 4096, 4096, false, false));
    return;
  }
  std::array<std::size_t, 3> shapes[] = {{1, 300, 29}, {150, 1, 600}, {9, 150, 67}};
  if (slow()) shapes[1] = {40, 1, 90}, shapes[2] = {9, 20, 37};
  check_skinny_family_forms(gemm_axpy_family, shapes);
  cl_device_id device = runtime().cl.device();
  std::mt19937 rng(std::random_device{}());
  {
    // Three parts of K (64 each; 20 on the slow runtimes), each a product
    // of the batch.
    const Variant& point = gemm_axpy_family(32).manifest().variants.front();
    ASSERT_EQ(OverrideVariant(device, 32, point.name), StatusCode::kSuccess) << GemmMessage();
    ASSERT_EQ(OverrideKParts(device, 32, 3), StatusCode::kSuccess) << GemmMessage();
    Form f;
    f.m = 1, f.n = slow() ? 40 : 300, f.k = slow() ? 60 : 192, f.alpha = 1.5, f.beta = 0.5;
    const std::string wrong = run_form(32, f, rng);
    const std::string ran = GemmLastCall();
    OverrideKParts(device, 32, 0);
    OverrideVariant(device, 32, "");
    ASSERT_EQ(wrong, "") << f.describe(32);
    EXPECT_EQ(ran.rfind(point.name, 0), 0u) << ran;
    EXPECT_NE(ran.find("K in 3 parts"), std::string::npos) << ran;
  }
  const bool gpu = caps.is_gpu();
  EXPECT_EQ(GemmAxpyFit(caps, 1, 4096, 4096, false, false), gpu);
  EXPECT_EQ(GemmAxpyFit(caps, 4096, 1, 4096, true, false), gpu);
  EXPECT_EQ(GemmAxpyFit(caps, 4096, 1, 4096, true, true), gpu);  // one column of B^T
  EXPECT_FALSE(GemmAxpyFit(caps, 1, 4096, 4096, false, true));   // B^T lies along K
  EXPECT_FALSE(GemmAxpyFit(caps, 2, 4096, 4096, false, false));
  EXPECT_FALSE(GemmAxpyFit(caps, 1, 4096, 32, false, false));
  if (!gpu || slow()) return;
  Form f;
  f.m = 1, f.n = 2000, f.k = 1500, f.alpha = 1.5, f.beta = 0.5;
  ASSERT_EQ(run_form(32, f, rng), "") << f.describe(32);
  EXPECT_EQ(GemmLastCall().rfind("sgemm_axpy_", 0), 0u) << GemmLastCall();
}

// Before any measurement the axpy family ranks its points by how many of a
// GPU's units their work-groups reach with K's parts: the 128-column point
// where it has 53 groups or more on 132 units, the 16-column one where the
// wide one leaves most units idle (the H100's measured order at these
// shapes, 2026-12-07); on a CPU the manifest's order.
TEST(Gemm, TheAxpyModelTakesNarrowGroupsWhereWideOnesLeaveUnitsIdle) {
  const Family& f = gemm_axpy_family(32);
  const Ranking& r = f.description().ranking;
  ASSERT_TRUE(r.shape_score);
  const std::vector<Variant>& points = f.manifest().variants;
  ASSERT_EQ(points.size(), 2u);
  ASSERT_GT(points[0].param("WGN") * points[0].param("VW"),
            points[1].param("WGN") * points[1].param("VW"));
  auto best = [&](const DeviceCaps& caps, std::size_t m, std::size_t k) {
    const Variant* top = nullptr;
    double score = 0;
    for (const Variant& v : points) {
      const double s = r.shape_score(v, caps, {m, 1, k, 1});
      if (!top || s > score) top = &v, score = s;
    }
    return top->name;
  };
  DeviceCaps gpu;
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  gpu.compute_units = 132;
  DeviceCaps cpu = gpu;
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  for (auto [m, k] : {std::pair<std::size_t, std::size_t>{4096, 4096}, {2000, 8192}, {8192, 1024},
                      {6000, 6000}, {8192, 8192}}) {
    EXPECT_EQ(best(gpu, m, k), points[0].name) << m << " x 1 x " << k;
  }
  for (auto [m, k] : {std::pair<std::size_t, std::size_t>{1000, 1500}, {2000, 1500}, {2500, 2500},
                      {3000, 3000}}) {
    EXPECT_EQ(best(gpu, m, k), points[1].name) << m << " x 1 x " << k;
  }
  EXPECT_EQ(best(cpu, 2000, 1500), points[0].name);
  EXPECT_NE(r.shape_rule.find("units"), std::string::npos);
}

// A choice is kept for a shape's size class and alignment (size_alignment),
// not for its class alone: 24 and 32 columns are one class (2^5), but a
// 16-wide tile covers 24 columns once and a half where a 32-wide one covers
// 32 whole. So a product of 32 columns runs the point it runs alone after
// one of 24. (Kept per class, both ran the 24-column product's 24 x 16 point
// on Debian's PoCL and Intel's runtime, where the 16 x 32 one ran 2000 x 32
// x 587 1.2 to 1.4 times as fast; 2026-12-06.)
TEST(Gemm, AShapeRunsItsOwnChoiceAfterAnotherOfItsSizeClass) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  std::mt19937 rng(std::random_device{}());
  auto point = [] {
    const std::string ran = GemmLastCall();
    return ran.substr(0, ran.find(' '));
  };
  Form f;
  f.m = 64, f.n = 32, f.k = 200, f.alpha = 1.5, f.beta = 0.5;
  ClearCache();
  ASSERT_EQ(run_form(32, f, rng), "") << f.describe(32);
  const std::string alone = point();
  ClearCache();
  f.n = 24;
  ASSERT_EQ(run_form(32, f, rng), "") << f.describe(32);
  f.n = 32;
  ASSERT_EQ(run_form(32, f, rng), "") << f.describe(32);
  EXPECT_EQ(point(), alone);
}

// A thin product on a CPU device runs on the rows family by itself (where
// GemmRowsFit holds: no loop limit, a stripe of columns for each compute
// unit), and one of more rows and 32 columns over a K of 200 in single
// precision (24 in double), which no rule of GemmRowsFit takes, on the
// blocked family (half precision takes the rows family at every shape);
// with 16 and 24 columns, from one vector of 16 floats to two, single
// precision takes the rows family too.
TEST(Gemm, ThinProductsOnCpusRunOnTheRowsFamily) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  // (The slow runtimes one stripe: Oclgrind's checked run of 1100 columns
  // on the blocked family took 23 s.)
  const std::size_t n = slow() ? 300 : 1100, stripes = slow() ? 1 : 3;  // of 512 columns
  const bool cpu = (caps.device_type & CL_DEVICE_TYPE_CPU) != 0 && !caps.is_gpu() &&
                   !has_driver_quirk(caps, "loop-limit-65536");
  const bool fits = GemmRowsFit(caps, 32, 20, n, 40, 1, false);
  EXPECT_EQ(fits, cpu && caps.compute_units <= stripes);
  // More rows, or fewer columns, over a K the rows family takes for any
  // rows no longer (kGemmRowsMostK).
  EXPECT_FALSE(GemmRowsFit(caps, 32, kGemmRowsMostRows + 1, n, kGemmRowsMostK, 1, false));
  EXPECT_FALSE(GemmRowsFit(caps, 32, 20, kGemmRowsLeastColumns - 1, kGemmRowsMostK, 1, false));
  // (op(B) = B^T too: a K of 40 is a medium one, kGemmRowsMostK.)
  EXPECT_EQ(GemmRowsFit(caps, 32, 20, n, 40, 1, true), fits);
  // Too few stripes for the units: one stripe, more than one unit.
  if (caps.compute_units > 1) EXPECT_FALSE(GemmRowsFit(caps, 32, 20, 300, 40, 1, false));
  std::mt19937 rng(std::random_device{}());
  for (int bits : precisions()) {
    SCOPED_TRACE(precision(bits));
    Form f;
    f.m = 20, f.n = n, f.k = slow() ? 8 : 40, f.alpha = 1.5, f.beta = 0.5;
    EXPECT_EQ(run_form(bits, f, rng), "") << f.describe(bits);
    // (Half precision's stripes are 256 columns wide: its own rule's count.)
    EXPECT_EQ(GemmLastCall().rfind(rows_point(bits), 0) == 0, bits == 16 ? cpu : fits)
        << GemmLastCall();
    f.m = slow() ? kGemmRowsMostRows + 1 : 100, f.n = bits == 64 ? 24 : 32, f.k = 200;
    EXPECT_EQ(GemmRowsFit(caps, bits, f.m, f.n, f.k, 1, false), bits == 16 && cpu);
    EXPECT_EQ(run_form(bits, f, rng), "") << f.describe(bits);
    EXPECT_EQ(GemmLastCall().rfind(rows_point(bits), 0) == 0, bits == 16 && cpu)
        << GemmLastCall();
    if (bits == 64) continue;
    // One vector of 16 floats and one and a half.
    for (const std::size_t columns : {16, 24}) {
      f.n = columns;
      // (Two stripes of 64 rows: one a unit at most two units.)
      const bool between = bits == 16 ? cpu : bits == 32 && cpu && caps.compute_units <= 2;
      EXPECT_EQ(GemmRowsFit(caps, bits, f.m, f.n, f.k, 1, false), between) << columns;
      EXPECT_EQ(run_form(bits, f, rng), "") << f.describe(bits);
      EXPECT_EQ(GemmLastCall().rfind(rows_point(bits), 0) == 0, between) << GemmLastCall();
      // (Not with op(B) = B^T: unmeasured there.)
      if (bits == 32) EXPECT_FALSE(GemmRowsFit(caps, bits, f.m, f.n, f.k, 1, true));
    }
  }
}

// A product of fewer than kGemmRowsFewColumns columns (or of up to
// kGemmRowsShortKColumns over a short K) runs on the rows family too where
// GemmRowsFit holds (a CPU device; work-items of 64 rows, at least one a
// unit): its columns in vectors of 8 and 4 (single precision; 4 and 2 in
// double), the rest as dot products along K, of vectors where A's rows lie
// along K (B's column read as vectors where it is contiguous: one column,
// its least leading dimension), else an element at a time (op(A) = A^T).
// Row-major NN and TN (as its transpose where that has a few rows the
// family takes), column-major NN with few rows (it runs as its transpose,
// few columns), and row-major NT (B^T transposed a tile at a time); not TT,
// which runs faster as its transpose.
TEST(Gemm, ProductsOfAFewColumnsOnCpusRunOnTheRowsFamily) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  const std::size_t m = slow() ? 130 : 300, k = slow() ? 21 : 70;
  std::mt19937 rng(std::random_device{}());
  for (int bits : precisions()) {
    SCOPED_TRACE(precision(bits));
    for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(13)}) {
      for (int form = 0; form < 4; ++form) {
        if (slow() && form != int(n % 4)) continue;
        Form f;
        f.m = m, f.n = n, f.k = k, f.alpha = 1.5, f.beta = form == 1 ? 0.0 : 0.5;
        f.ta = form == 1 ? Transpose::kYes : Transpose::kNo;
        f.tb = form == 3 ? Transpose::kYes : Transpose::kNo;
        if (form == 2) f.layout = Layout::kColMajor, std::swap(f.m, f.n);
        // (13 columns with the least leading dimensions: a padded vector of
        // B's row reads into the next row, and the last row element by
        // element.)
        f.least_ld = n == 1 || n == 13;
        EXPECT_EQ(run_form(bits, f, rng), "") << f.describe(bits);
        const bool fits = GemmRowsFit(caps, bits, m, n, k, 1, form == 3);
        EXPECT_EQ(GemmLastCall().rfind(rows_point(bits), 0) == 0, fits)
            << f.describe(bits) << ": " << GemmLastCall();
        // Row TN runs as its transpose where that has a few rows the rows
        // family takes (A then read along its rows, not down A^T's columns).
        if (form == 1 && fits) {
          EXPECT_EQ(GemmLastCall().find("the call's transpose") != std::string::npos,
                    GemmRowsFit(caps, bits, n, m, k, 1, false, true))
              << GemmLastCall();
        }
      }
    }
  }
  // Fewer columns than a vector (and at least a quarter of one) with op(A)
  // = A, op(B) = B or B^T, over a K longer than the chunk of B's columns
  // the kernel holds at once (its dot products, ROWS_DOT_BLOCK: 576 of K
  // for 7 floats, 288 for 7 doubles or halves): the sum carried across
  // chunks in C, in half precision in local memory, with beta's C read once
  // (the slow runtimes: one op(B) a precision, in turn).
  for (int bits : precisions()) {
    for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      if (slow() && (tb == Transpose::kYes) != (bits == 64)) continue;
      Form f;
      f.m = slow() ? 40 : 300, f.n = 7, f.k = slow() ? 600 : 1500, f.alpha = 1.5, f.beta = 0.5;
      f.tb = tb;
      EXPECT_EQ(run_form(bits, f, rng), "") << f.describe(bits);
      EXPECT_EQ(GemmLastCall().rfind(rows_point(bits), 0) == 0,
                GemmRowsFit(caps, bits, f.m, f.n, f.k, 1, tb == Transpose::kYes))
          << f.describe(bits) << ": " << GemmLastCall();
    }
  }
  EXPECT_EQ(GemmRowsFit(caps, 32, 300, 8, 70, 1, false),
            (caps.device_type & CL_DEVICE_TYPE_CPU) != 0 && !caps.is_gpu() &&
                !has_driver_quirk(caps, "loop-limit-65536") && caps.compute_units <= 5);
  // A vector's columns: in double precision not over a K past the short
  // one; in single precision (16 to 31 columns) not over kGemmRowsMostK.
  EXPECT_FALSE(GemmRowsFit(caps, 64, 300, kGemmRowsFewColumns, kGemmRowsShortK + 1, 1, false));
  EXPECT_FALSE(GemmRowsFit(caps, 32, 300, kGemmRowsFewColumns, kGemmRowsMostK, 1, false));
  EXPECT_EQ(GemmRowsFit(caps, 32, 300, 8, 70, 1, true),
            GemmRowsFit(caps, 32, 300, 8, 70, 1, false));
  EXPECT_FALSE(GemmRowsFit(caps, 32, 300, 8, 70, 1, true, true));
  // Up to 64 columns over a short K.
  EXPECT_EQ(GemmRowsFit(caps, 32, 300, kGemmRowsShortKColumns, kGemmRowsShortK, 1, false),
            GemmRowsFit(caps, 32, 300, 8, 70, 1, false));
  EXPECT_FALSE(GemmRowsFit(caps, 32, 300, kGemmRowsShortKColumns + 1, kGemmRowsMostK, 1, false));
}

// A product whose rows are kGemmRowsLeastRowBytes or more (64 floats, 32
// doubles, 128 halves) over a K below kGemmRowsMostK (any K in half
// precision) runs on the rows family too, any rows, where GemmRowsFit
// holds, in every form (B^T transposed a tile at a time, the work-item a
// share of C: shares of rows, stripes of whole tiles, their edges ragged
// here); narrower rows over a K above kGemmRowsShortK, or a K of
// kGemmRowsMostK, on the blocked family (half precision takes the rows
// family at every shape).
TEST(Gemm, ProductsOverAMediumKOnCpusRunOnTheRowsFamily) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  const bool cpu = (caps.device_type & CL_DEVICE_TYPE_CPU) != 0 && !caps.is_gpu() &&
                   !has_driver_quirk(caps, "loop-limit-65536");
  std::mt19937 rng(std::random_device{}());
  for (int bits : precisions()) {
    SCOPED_TRACE(precision(bits));
    const std::size_t least = kGemmRowsLeastRowBytes / std::size_t(bits / 8);
    // (640 rows are 10 work-items of 64 rows.)
    const bool half = bits == 16;
    EXPECT_EQ(GemmRowsFit(caps, bits, 640, least, kGemmRowsMostK - 1, 1, false),
              cpu && (half || caps.compute_units <= 10));
    EXPECT_EQ(GemmRowsFit(caps, bits, 640, least - 1, kGemmRowsShortK + 1, 1, false), half && cpu);
    EXPECT_EQ(GemmRowsFit(caps, bits, 640, 4 * least, kGemmRowsMostK, 1, false), half && cpu);
    if (half) {
      // Half precision over a K past kGemmRowsMostK: its running sum in
      // float over 33 blocks of K, C written once.
      Form f;
      f.m = 70, f.n = least + 6, f.k = kGemmRowsMostK + 30, f.alpha = 1.5, f.beta = 0.5;
      EXPECT_EQ(run_form(bits, f, rng), "") << f.describe(bits);
      EXPECT_EQ(GemmLastCall().rfind(rows_point(bits), 0) == 0,
                GemmRowsFit(caps, bits, f.m, f.n, f.k, 1, false))
          << f.describe(bits) << ": " << GemmLastCall();
    }
    for (const std::size_t n : {least + 6, least / 2 + 3}) {
      Form f;
      f.m = 70, f.n = n, f.k = kGemmRowsShortK + 22, f.alpha = 1.5, f.beta = 0.5;
      EXPECT_EQ(run_form(bits, f, rng), "") << f.describe(bits);
      const bool fits = GemmRowsFit(caps, bits, f.m, f.n, f.k, 1, false);
      EXPECT_EQ(GemmLastCall().rfind(rows_point(bits), 0) == 0, fits)
          << f.describe(bits) << ": " << GemmLastCall();
    }
    EXPECT_EQ(GemmRowsFit(caps, bits, 70, least / 2 + 3, kGemmRowsShortK + 22, 1, false),
              half && cpu);
    // op(B) = B^T and op(A) = A^T, alone and together, both layouts: rows
    // in three shares of the rows (two of 184, one of 181 on 2 units), a
    // stripe of two tiles and one of a tile, a quarter vector and a column
    // (single precision; double precision's tiles are half as wide). The
    // slow runtimes one share of 70 rows, a tile and a block of K, two forms.
    const std::size_t rows = slow() ? 70 : 549, cols = (slow() ? 1 : 3) * least + 5;
    const std::size_t k = slow() ? 40 : kGemmRowsShortK + 22;
    const bool fits = GemmRowsFit(caps, bits, rows, cols, k, 1, false);
    EXPECT_EQ(GemmRowsFit(caps, bits, kGemmRowsMostRows, least, 40, 1, true),
              GemmRowsFit(caps, bits, kGemmRowsMostRows, least, 40, 1, false));
    for (int form = 1; form < 8; ++form) {
      Form f;
      f.m = rows, f.n = cols, f.k = k;
      f.alpha = 1.5, f.beta = form == 4 ? 0.0 : 0.5;
      f.ta = form & 1 ? Transpose::kYes : Transpose::kNo;
      f.tb = form & 2 ? Transpose::kYes : Transpose::kNo;
      if (form & 4) f.layout = Layout::kColMajor, std::swap(f.m, f.n);
      if (slow() && form % 3 != 0) continue;
      EXPECT_EQ(run_form(bits, f, rng), "") << f.describe(bits);
      const bool ta = f.ta == Transpose::kYes, tb = f.tb == Transpose::kYes;
      // (Column-major, the product runs turned around: op(B)^T op(A)^T.)
      EXPECT_EQ(GemmRowsFit(caps, bits, rows, cols, k, 1, form & 4 ? ta : tb, form & 4 ? tb : ta),
                fits);
      EXPECT_EQ(GemmLastCall().rfind(rows_point(bits), 0) == 0, fits) << f.describe(bits) << ": "
                                                                  << GemmLastCall();
      if (fits) EXPECT_EQ(GemmLastCall().find("packed"), std::string::npos) << GemmLastCall();
    }
  }
}

TEST(Gemm, PrecisionsTheDeviceLacksAreRefusedWithoutABuild) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  cl_command_queue q = runtime().cl.queue();
  const cl::Context& ctx = runtime().cl.context;
  cl::Buffer a(ctx, CL_MEM_READ_WRITE, 64), b(ctx, CL_MEM_READ_WRITE, 64),
      c(ctx, CL_MEM_READ_WRITE, 64);
  const StatusCode d = Gemm<double>(Layout::kRowMajor, Transpose::kNo, Transpose::kNo, 2, 2, 2, 1.0,
                                    a(), 0, 2, b(), 0, 2, 0.0, c(), 0, 2, &q);
  EXPECT_EQ(d, runtime().fp64 ? StatusCode::kSuccess : StatusCode::kNoDoublePrecision)
      << GemmMessage();
  const StatusCode h = Gemm<half>(Layout::kRowMajor, Transpose::kNo, Transpose::kNo, 2, 2, 2,
                                  FloatToHalf(1), a(), 0, 2, b(), 0, 2, FloatToHalf(0), c(), 0, 2,
                                  &q);
  EXPECT_EQ(h, runtime().fp16 ? StatusCode::kSuccess : StatusCode::kNoHalfPrecision)
      << GemmMessage();
  if (!runtime().fp16) EXPECT_NE(GemmMessage().find("cl_khr_fp16"), std::string::npos);
  runtime().cl.queue.finish();
  std::cout << "double: " << to_string(d) << ", half: " << to_string(h) << "\n";
}

// GemmLastCall() words what the last call on this thread ran: the point the
// loader chose, its tier, the row-major form and sizes, its launches, and
// the loader's explanation; a quick return says that nothing was computed,
// a failed call leaves it empty.
TEST(Gemm, TheLastCallSaysWhatRan) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const cl::Context& ctx = runtime().cl.context;
  cl_command_queue q = runtime().cl.queue();
  cl::Buffer a(ctx, CL_MEM_READ_WRITE, 4 * 6 * 5), b(ctx, CL_MEM_READ_WRITE, 4 * 5 * 7),
      c(ctx, CL_MEM_READ_WRITE, 4 * 6 * 7);
  const auto R = Layout::kRowMajor, Cm = Layout::kColMajor;
  const auto N = Transpose::kNo;
  ASSERT_EQ(Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, b(), 0, 7, 0.f, c(), 0, 7, &q),
            StatusCode::kSuccess)
      << GemmMessage();
  std::string ran = GemmLastCall();
  bool named = false;
  for (const Family* f : gemm_families(32)) {
    for (const Variant& v : f->manifest().variants) named |= ran.rfind(v.name + " (", 0) == 0;
  }
  EXPECT_TRUE(named) << ran;
  EXPECT_NE(ran.find(" tier) for row-major 6 x 7 x 5, op(A) = A, op(B) = B;"), std::string::npos)
      << ran;
  EXPECT_NE(ran.find("1 launch of the product"), std::string::npos) << ran;
  EXPECT_NE(ran.find("\n"), std::string::npos) << "no explanation: " << ran;
  // Column-major: the row-major product of the operands swapped, 7 x 6.
  ASSERT_EQ(Gemm<float>(Cm, N, N, 6, 7, 5, 1.f, a(), 0, 6, b(), 0, 5, 0.f, c(), 0, 6, &q),
            StatusCode::kSuccess)
      << GemmMessage();
  ran = GemmLastCall();
  EXPECT_NE(ran.find("for row-major 7 x 6 x 5"), std::string::npos) << ran;
  EXPECT_NE(ran.find("the column-major call as the row-major product"), std::string::npos) << ran;
  ASSERT_EQ(Gemm<float>(R, N, N, 0, 7, 5, 1.f, a(), 0, 5, b(), 0, 7, 0.f, c(), 0, 7, &q),
            StatusCode::kSuccess)
      << GemmMessage();
  EXPECT_EQ(GemmLastCall(), "nothing computed: C is empty (BLAS's quick return)");
  // ldc below N: refused, and nothing ran.
  EXPECT_EQ(Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, b(), 0, 7, 0.f, c(), 0, 6, &q),
            StatusCode::kInvalidLeadDimC);
  EXPECT_EQ(GemmLastCall(), "");
  runtime().cl.queue.finish();
}

// Learning online (GemmLearnOnline): a class no entry measured here times
// its candidates on the real calls, each call's whole product right (in a
// temporary buffer sized by GemmTempBufferSize before the first call), keeps
// the fastest and puts its entry into the store, which the next process
// (here: the entry points after ClearCache) takes at once.
TEST(Gemm, LearningOnlineTimesTheCandidatesOnTheCallsAndKeepsTheFastest) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const cl::Context& ctx = runtime().cl.context;
  OnlineOptions options;
  options.candidates = 3;
  auto store = std::make_shared<Store>();
  ASSERT_EQ(GemmLearnOnline(true, options, store), StatusCode::kSuccess) << GemmMessage();
  Form f;
  f.ta = Transpose::kYes;  // packed by the CPU points' pass: a temporary buffer to size
  f.m = 150, f.n = 90, f.k = 70, f.alpha = 1.5, f.beta = 0.5;
  std::size_t size = 0;
  ASSERT_EQ(temp_buffer_size(32, f, size), StatusCode::kSuccess) << GemmMessage();
  cl::Buffer temp(ctx, CL_MEM_READ_WRITE, std::max<std::size_t>(size, 4));
  f.temp = temp();
  std::mt19937 rng(std::random_device{}());
  std::string ran;
  std::size_t calls = 0;
  do {
    ASSERT_EQ(run_form(32, f, rng), "") << "call " << calls + 1;
    ran = GemmLastCall();
    if (calls == 0) {
      EXPECT_NE(ran.find("; learning online: candidate 1 of "), std::string::npos) << ran;
    }
    ++calls;
  } while (ran.find("(chosen)") == std::string::npos && calls < 3 * options.candidates + 2);
  ASSERT_NE(ran.find("(chosen)"), std::string::npos) << "after " << calls << " calls: " << ran;
  std::cout << "after " << calls << " calls: " << ran << "\n";
  EXPECT_NE(ran.find("kept in the store"), std::string::npos) << ran;
  // Each candidate a warm-up call and two timed ones at most.
  EXPECT_LE(calls, 3 * options.candidates) << ran;
  ASSERT_EQ(store->tuning().size(), 1u);
  const TuningEntry e = store->tuning().front();
  EXPECT_EQ(e.provenance.rfind("fatcl online on ", 0), 0u) << e.provenance;
  ASSERT_FALSE(e.ranking.empty());
  const std::string learned = e.ranking.front().variant;
  EXPECT_NE(ran.find(learned + " [") , std::string::npos) << ran;
  // The class now runs the learned point, untimed.
  ASSERT_EQ(run_form(32, f, rng), "");
  ran = GemmLastCall();
  EXPECT_EQ(ran.rfind(learned + " (", 0), 0u) << ran;
  EXPECT_EQ(ran.find("learning online"), std::string::npos) << ran;
  // The next process reads the entry: nothing learned again.
  ClearCache();
  ASSERT_EQ(GemmLearnOnline(true, options, store), StatusCode::kSuccess);
  ASSERT_EQ(run_form(32, f, rng), "");
  ran = GemmLastCall();
  EXPECT_EQ(ran.rfind(learned + " (", 0), 0u) << ran;
  EXPECT_EQ(ran.find("learning online"), std::string::npos) << ran;
  EXPECT_EQ(store->tuning().size(), 1u);
  options.candidates = 0;
  EXPECT_EQ(GemmLearnOnline(true, options), StatusCode::kInvalidValue);
  EXPECT_EQ(GemmMessage(), "GemmLearnOnline: candidates is 0");
  ClearCache();  // learning off again (FATCL_TUNE's), the user's store
}

// CLBlast's status codes for bad calls, each with a message naming the cause.
TEST(Gemm, BadArgumentsGetCLBlastsStatusAndACause) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const cl::Context& ctx = runtime().cl.context;
  cl_command_queue q = runtime().cl.queue();
  cl::Buffer a(ctx, CL_MEM_READ_WRITE, 4 * 6 * 5), b(ctx, CL_MEM_READ_WRITE, 4 * 5 * 7),
      c(ctx, CL_MEM_READ_WRITE, 4 * 6 * 7), small(ctx, CL_MEM_READ_WRITE, 4 * 10);
  const auto R = Layout::kRowMajor, Cm = Layout::kColMajor;
  const auto N = Transpose::kNo, T = Transpose::kYes;
  struct Case {
    const char* what;
    StatusCode got, want;
  };
  cl_event event = nullptr;
  const std::vector<Case> cases{
      {"lda below K (row-major, A not transposed)",
       Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 4, b(), 0, 7, 0.f, c(), 0, 7, &q),
       StatusCode::kInvalidLeadDimA},
      {"lda below M (column-major, A not transposed)",
       Gemm<float>(Cm, N, N, 6, 7, 5, 1.f, a(), 0, 5, b(), 0, 5, 0.f, c(), 0, 6, &q),
       StatusCode::kInvalidLeadDimA},
      {"ldb below K (column-major, B transposed)",
       Gemm<float>(Cm, N, T, 6, 7, 5, 1.f, a(), 0, 6, b(), 0, 4, 0.f, c(), 0, 6, &q),
       StatusCode::kInvalidLeadDimB},
      {"ldc below N", Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, b(), 0, 7, 0.f, c(), 0, 6, &q),
       StatusCode::kInvalidLeadDimC},
      {"B's buffer too small",
       Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, small(), 0, 7, 0.f, c(), 0, 7, &q),
       StatusCode::kInsufficientMemoryB},
      {"C's offset past its buffer",
       Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, b(), 0, 7, 0.f, c(), 1, 7, &q),
       StatusCode::kInsufficientMemoryC},
      {"A null", Gemm<float>(R, N, N, 6, 7, 5, 1.f, nullptr, 0, 5, b(), 0, 7, 0.f, c(), 0, 7, &q),
       StatusCode::kInvalidMatrixA},
      {"a null queue", Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, b(), 0, 7, 0.f, c(), 0, 7, nullptr),
       StatusCode::kInvalidCommandQueue},
      {"batch count 0 (strided)",
       GemmStridedBatched<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, 30, b(), 0, 7, 35, 0.f, c(), 0,
                                 7, 42, 0, &q),
       StatusCode::kInvalidBatchCount},
      {"the second of a batch past C's buffer",
       GemmStridedBatched<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, 0, b(), 0, 7, 0, 0.f, c(), 0,
                                 7, 42, 2, &q),
       StatusCode::kInsufficientMemoryC},
      {"m = 0 does nothing, and says so with an event",
       Gemm<float>(R, N, N, 0, 7, 5, 1.f, a(), 0, 5, b(), 0, 7, 0.f, c(), 0, 7, &q, &event),
       StatusCode::kSuccess},
  };
  for (const Case& cs : cases) {
    EXPECT_EQ(cs.got, cs.want) << cs.what << ": " << to_string(cs.got) << " instead of "
                               << to_string(cs.want);
  }
  // The message is the last call's: two of them again, each on its own.
  EXPECT_EQ(Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 4, b(), 0, 7, 0.f, c(), 0, 7, &q),
            StatusCode::kInvalidLeadDimA);
  EXPECT_NE(GemmMessage().find("A's leading dimension 4 is below its 5 columns"), std::string::npos)
      << GemmMessage();
  EXPECT_EQ(Gemm<float>(R, N, N, 6, 7, 5, 1.f, a(), 0, 5, small(), 0, 7, 0.f, c(), 0, 7, &q),
            StatusCode::kInsufficientMemoryB);
  EXPECT_NE(GemmMessage().find("B's buffer holds 40 bytes"), std::string::npos) << GemmMessage();
  ASSERT_NE(event, nullptr);
  EXPECT_EQ(clWaitForEvents(1, &event), CL_SUCCESS);
  clReleaseEvent(event);
  std::size_t zero = 0;
  EXPECT_EQ(GemmBatched<float>(R, N, N, 6, 7, 5, nullptr, a(), &zero, 5, b(), &zero, 7, nullptr,
                               c(), &zero, 7, 0, &q),
            StatusCode::kInvalidBatchCount);
  EXPECT_STREQ(to_string(StatusCode::kInsufficientMemoryTemp), "kInsufficientMemoryTemp");
}

}  // namespace
}  // namespace fatcl

namespace fatcl {
namespace {

// The offline choice (fatcl validate --device) from this device's
// description, written and read back, equals what load() chooses for each
// precision's GEMM families (on the slow runtimes single precision only:
// each build there costs 20-100 s on a Zen 1, and the matmul families'
// test checks the same logic on them; under a loop limit, rusticl's, not
// the dot and axpy families, which the entry points never take there).
TEST(Gemm, OfflineChoiceFromTheDescriptionEqualsLoad) {
  FATCL_REQUIRE_RUNTIME(runtime().cl.missing);
  const DeviceCaps caps = DeviceCaps::query(runtime().cl.device);
  const std::vector<DeviceDescription> d =
      parse_device_descriptions(device_descriptions_json({caps}), "written here");
  ASSERT_EQ(d.size(), 1u);
  std::vector<int> bits = slow() ? std::vector<int>{32} : precisions();
  for (int b : bits) {
    for (const Family* family : gemm_families(b)) {
      if (has_driver_quirk(caps, "loop-limit-65536") &&
          (family == &gemm_dot_family(b) || family == &gemm_axpy_family(b))) {
        continue;
      }
      LoadOptions o;
      o.store = std::make_shared<Store>();
      o.cache = std::make_shared<ProgramCache>();
      const LoadedKernel loaded = load(runtime().cl.context, runtime().cl.device, *family, o);
      const OfflineChoice predicted = predict_load(*family, d[0].caps, o);
      const std::string both =
          "offline:\n" + predicted.explanation.to_string() + "on the device:\n" +
          loaded.explanation.to_string();
      EXPECT_EQ(predicted.variant, loaded.variant.name) << both;
      EXPECT_EQ(predicted.tier, std::optional<Tier>(loaded.tier)) << both;
      EXPECT_EQ(predicted.explanation.ranking, loaded.explanation.ranking) << both;
      EXPECT_EQ(predicted.explanation.tuning, loaded.explanation.tuning) << both;
      EXPECT_EQ(predicted.explanation.quirks, loaded.explanation.quirks) << both;
    }
  }
}

}  // namespace
}  // namespace fatcl
