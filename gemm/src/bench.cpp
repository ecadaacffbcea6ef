// fatcl bench in a GEMM form: the entry points timed as a product calls
// them, beside CLBlast's same routine.
#include "fatcl/gemm_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "fatcl/detail/clock.hpp"
#include "fatcl/store.hpp"
#include "launch.hpp"

namespace fatcl {
namespace {

const char* precision_word(int bits) {
  return bits == 64 ? "double" : bits == 16 ? "half" : "single";
}
bool trans(Transpose t) { return t != Transpose::kNo; }

// Element (r, c) of a stored operand with the least leading dimension.
std::size_t at(Layout l, const detail::Stored& s, std::size_t r, std::size_t c) {
  return l == Layout::kRowMajor ? r * s.one + c : c * s.one + r;
}

template <typename T>
T scalar(double x) {
  if constexpr (std::is_same_v<T, half>) {
    return detail::float_to_half(float(x));
  } else {
    return T(x);
  }
}

template <typename T>
StatusCode call_fatcl(cl_command_queue q, const GemmForm& f, const GemmCall& c) {
  if (f.batch == 1) {
    return Gemm<T>(f.layout, f.a_transpose, f.b_transpose, c.m, c.n, c.k, scalar<T>(1), c.a, 0,
                   c.a_ld, c.b, 0, c.b_ld, scalar<T>(0), c.c, 0, c.c_ld, &q, nullptr);
  }
  return GemmStridedBatched<T>(f.layout, f.a_transpose, f.b_transpose, c.m, c.n, c.k,
                               scalar<T>(1), c.a, 0, c.a_ld, c.a_stride, c.b, 0, c.b_ld,
                               c.b_stride, scalar<T>(0), c.c, 0, c.c_ld, c.c_stride, f.batch, &q,
                               nullptr);
}

std::string run_fatcl(cl_command_queue q, const GemmForm& f, const GemmCall& c) {
  const StatusCode s = f.bits == 64   ? call_fatcl<double>(q, f, c)
                       : f.bits == 16 ? call_fatcl<half>(q, f, c)
                                      : call_fatcl<float>(q, f, c);
  return s == StatusCode::kSuccess ? "" : std::string(to_string(s)) + ": " + GemmMessage();
}

// One size's operands, on the device and on the host, stored for the form
// with the least leading dimensions, products one after the other; the
// random values the same for every form of the size (a form reads them as
// its layout and transposes say).
struct Problem {
  BenchShape shape;
  std::size_t batch;
  int bits;
  std::vector<unsigned char> ha, hb, hc;
  cl::Buffer a, b, c;
  GemmCall call;  // for the last form set()
  const cl::CommandQueue& queue;
  detail::Stored sa{}, sb{}, sc{};

  Problem(const cl::Context& context, const cl::CommandQueue& q, const GemmForm& f,
          const BenchShape& s, std::mt19937& rng)
      : shape(s), batch(f.batch), bits(f.bits), queue(q) {
    const std::size_t element = std::size_t(bits) / 8;
    const std::size_t na = s.m * s.k * batch, nb = s.k * s.n * batch, nc = s.m * s.n * batch;
    ha.resize(na * element), hb.resize(nb * element), hc.resize(nc * element);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::size_t i = 0; i < na; ++i) detail::set_element(ha, bits, i, u(rng));
    for (std::size_t i = 0; i < nb; ++i) detail::set_element(hb, bits, i, u(rng));
    a = cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, ha.size(), ha.data());
    b = cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, hb.size(), hb.data());
    c = cl::Buffer(context, CL_MEM_READ_WRITE, hc.size());
    set(f);
  }

  // The call of `f` (its layout and transposes) on these buffers.
  void set(const GemmForm& f) {
    sa = detail::stored('A', f.layout, trans(f.a_transpose), shape.m, shape.k);
    sb = detail::stored('B', f.layout, trans(f.b_transpose), shape.k, shape.n);
    sc = detail::stored('C', f.layout, false, shape.m, shape.n);
    call.m = shape.m, call.n = shape.n, call.k = shape.k;
    call.a_ld = sa.one, call.b_ld = sb.one, call.c_ld = sc.one;
    call.a_stride = sa.rows * sa.cols, call.b_stride = sb.rows * sb.cols;
    call.c_stride = sc.rows * sc.cols;
    call.a = a(), call.b = b(), call.c = c();
  }

  // Runs the call of `f` (set() before) once over C poisoned with NaN (bytes
  // 0xff: NaN in every precision): "" and C's error in `error`, or why it
  // did not run.
  std::string check(const GemmForm& f, const std::function<std::string()>& run, double* error) {
    const cl_uchar poison = 0xff;
    queue.enqueueFillBuffer(c, poison, 0, hc.size());
    queue.finish();
    std::string failure = run();
    if (failure.empty()) {
      queue.finish();
      *error = this->error(f);
    }
    return failure;
  }

  // C's relative error (root of the summed squares over those of the
  // reference) on sampled rows of the first and the last product, against
  // a double-precision reference; infinity where any is NaN.
  double error(const GemmForm& f) {
    queue.enqueueReadBuffer(c, CL_TRUE, 0, hc.size(), hc.data());
    std::vector<std::pair<std::size_t, std::size_t>> rows;  // (product, row)
    for (std::size_t z : {std::size_t(0), batch - 1}) {
      for (std::size_t i = 0; i < std::min<std::size_t>(shape.m, 4); ++i) {
        rows.push_back({z, (i * 7919) % shape.m});
      }
    }
    // op(A)(i, p) and op(B)(p, j) of product z; op(B) is walked along
    // whichever of p and j is contiguous in memory (at 8192^3 in double,
    // the other way round missed the cache on every element: 230 s for a
    // bench's checks, 2026-12-04).
    const auto a_index = [&](std::size_t z, std::size_t i, std::size_t p) {
      return z * call.a_stride + (trans(f.a_transpose) ? at(f.layout, sa, p, i)
                                                        : at(f.layout, sa, i, p));
    };
    const auto b_index = [&](std::size_t z, std::size_t p, std::size_t j) {
      return z * call.b_stride + (trans(f.b_transpose) ? at(f.layout, sb, j, p)
                                                        : at(f.layout, sb, p, j));
    };
    const bool b_along_j = shape.n < 2 || b_index(0, 0, 1) == b_index(0, 0, 0) + 1;
    std::vector<double> a_row(shape.k), want_row(shape.n);
    double diff = 0, norm = 0;
    for (const auto& [z, i] : rows) {
      for (std::size_t p = 0; p < shape.k; ++p) {
        a_row[p] = detail::element(ha, bits, a_index(z, i, p));
      }
      std::fill(want_row.begin(), want_row.end(), 0.0);
      if (b_along_j) {
        for (std::size_t p = 0; p < shape.k; ++p) {
          for (std::size_t j = 0; j < shape.n; ++j) {
            want_row[j] += a_row[p] * detail::element(hb, bits, b_index(z, p, j));
          }
        }
      } else {
        for (std::size_t j = 0; j < shape.n; ++j) {
          for (std::size_t p = 0; p < shape.k; ++p) {
            want_row[j] += a_row[p] * detail::element(hb, bits, b_index(z, p, j));
          }
        }
      }
      for (std::size_t j = 0; j < shape.n; ++j) {
        const double want = want_row[j];
        const double got = detail::element(hc, bits, z * call.c_stride + at(f.layout, sc, i, j));
        diff += (got - want) * (got - want);
        norm += want * want;
      }
    }
    const double e = std::sqrt(diff / std::max(norm, 1e-300));
    return std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
  }
};

double tolerance(int bits) { return bits == 64 ? 1e-12 : bits == 32 ? kMatmulTolerance : 2e-3; }

template <typename T>
StatusCode temp_size_fatcl(cl_command_queue q, const GemmForm& f, const GemmCall& c,
                           std::size_t& bytes) {
  return GemmTempBufferSize<T>(f.layout, f.a_transpose, f.b_transpose, c.m, c.n, c.k, 0, c.a_ld, 0,
                               c.b_ld, 0, c.c_ld, &q, bytes);
}

// A size's first calls as a product learning its choice online makes them
// (GemmLearnOnline, shipped entries only: a store of its own in memory),
// each call timed (host clock around a finished queue) and checked; then
// the choice timed. One product's class is first met by GemmTempBufferSize
// (its builds, the candidates' too, timed as the first use); a batch's
// first call builds them. Leaves the entry points as ClearCache does.
BenchOnline gemm_online(const cl::CommandQueue& queue, Problem& problem, const GemmForm& f,
                        int reps, int calls) {
  cl_command_queue q = queue();
  const GemmCall& call = problem.call;
  ClearCache();
  BenchOnline out;
  if (const StatusCode s = GemmLearnOnline(true, {}, std::make_shared<Store>());
      s != StatusCode::kSuccess) {
    throw Error(std::string("GemmLearnOnline: ") + to_string(s) + ": " + GemmMessage());
  }
  if (f.batch == 1) {
    const auto first_use = std::chrono::steady_clock::now();
    std::size_t bytes = 0;
    const StatusCode s = f.bits == 64   ? temp_size_fatcl<double>(q, f, call, bytes)
                         : f.bits == 16 ? temp_size_fatcl<half>(q, f, call, bytes)
                                        : temp_size_fatcl<float>(q, f, call, bytes);
    if (s != StatusCode::kSuccess) {
      throw Error(std::string("GemmTempBufferSize: ") + to_string(s) + ": " + GemmMessage());
    }
    out.first_use_ms = detail::ms_since(first_use);
  }
  // The calls asked for, then on (untimed, at most kOnlineSettleSeconds)
  // until the choice is made, so that what is timed after is the choice.
  const auto start_all = std::chrono::steady_clock::now();
  for (int n = 1;; ++n) {
    const bool asked = n <= calls;
    if (!asked && (!out.learned || out.settled_at ||
                   detail::ms_since(start_all) > 1e3 * kOnlineSettleSeconds)) {
      break;
    }
    double ms = 0, error = 0;
    const std::string failure = problem.check(
        f,
        [&] {
          const auto start = std::chrono::steady_clock::now();
          std::string failed = run_fatcl(q, f, call);
          queue.finish();
          ms = detail::ms_since(start);
          return failed;
        },
        &error);
    out.all_ok = out.all_ok && failure.empty() && error <= tolerance(f.bits);
    if (!failure.empty()) {
      out.report = failure;
      break;
    }
    if (asked) out.call_ms.push_back(ms);
    // The trial's report, where the call's class was being learned.
    const std::string report = detail::gemm_last_run().online;
    if (n == 1) out.learned = !report.empty();
    if (!report.empty()) out.report = report;
    if (out.learned && !out.settled_at && out.report.find("(chosen)") != std::string::npos) {
      out.settled_at = std::size_t(n);
    }
  }
  if (out.all_ok) {
    (void)run_fatcl(q, f, call);
    const detail::GemmLastRun last = detail::gemm_last_run();
    out.choice = last.variant;
    out.choice_tier = last.tier;
    const double ms = median_ms(queue, [&] { run_fatcl(q, f, call); }, reps);
    out.choice_gflops = problem.shape.flop() * double(f.batch) / (ms * 1e6);
  }
  ClearCache();
  return out;
}

}  // namespace

std::string GemmForm::describe() const {
  return std::string(precision_word(bits)) + ", " +
         (layout == Layout::kRowMajor ? "row-major" : "column-major") + ", op(A) = " +
         (trans(a_transpose) ? "A^T" : "A") + ", op(B) = " + (trans(b_transpose) ? "B^T" : "B") +
         (batch > 1 ? ", " + std::to_string(batch) + " products (strided batch)" : "");
}

std::vector<GemmForm> gemm_forms(int bits, std::size_t batch, const std::vector<Layout>& layouts) {
  std::vector<GemmForm> forms;
  for (Layout l : layouts) {
    for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
      for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
        GemmForm f;
        f.bits = bits, f.batch = batch, f.layout = l, f.a_transpose = ta, f.b_transpose = tb;
        forms.push_back(f);
      }
    }
  }
  return forms;
}

GemmBenchReport run_gemm_bench(const cl::Context& context, const cl::Device& device,
                               const GemmBenchOptions& o) {
  const DeviceCaps caps = DeviceCaps::query(device);
  GemmBenchReport report;
  report.device = caps.device_name;
  report.form = o.form;
  const GemmForm& f = o.form;
  // The vendor's call is VendorGemm's: one single-precision, row-major
  // product, no transposes.
  const bool vendor_form = f.bits == 32 && f.layout == Layout::kRowMajor && !trans(f.a_transpose) &&
                           !trans(f.b_transpose) && f.batch == 1;
  const VendorGemm* vendor = o.vendor && vendor_form ? &*o.vendor : nullptr;
  report.vendor = vendor    ? vendor->name
                  : o.vendor ? "none: " + o.vendor->name +
                                  " is timed in the single-precision, row-major NN form of one "
                                  "product only"
                             : "none: " + o.no_vendor;
  const std::vector<BenchShape> shapes = o.shapes.empty() ? default_shapes(caps) : o.shapes;
  const cl::CommandQueue queue(context, device);
  const Family& family = gemm_family(f.bits);
  const Plan p = plan(family.manifest(), caps, {}, family.description().ranking);
  // The (variant, tier) pairs to force: each variant (the first o.top
  // where set) once, in the tier its entry for the size measured it fastest
  // in (else the loader's first), or in each asked tier the device takes it in.
  using Forced = std::vector<std::pair<const Variant*, std::optional<Tier>>>;
  auto to_force = [&](const Plan& p) {
    Forced forced;
    std::vector<const Variant*> variants = p.variants();
    if (o.top > 0 && variants.size() > o.top) variants.resize(o.top);
    const auto among = [&](const Variant* v) {
      return std::find(variants.begin(), variants.end(), v) != variants.end();
    };
    if (o.variants && o.tiers.empty()) {
      for (const Variant* v : variants) forced.push_back({v, std::nullopt});
    } else if (o.variants) {
      for (const Candidate& c : p.chain) {
        if (among(c.variant) &&
            std::find(o.tiers.begin(), o.tiers.end(), c.tier) != o.tiers.end()) {
          forced.push_back({c.variant, c.tier});
        }
      }
    }
    return forced;
  };
  const Forced forced = to_force(p);
  const Family& lanes = gemm_lanes_family(f.bits);
  const Forced lanes_forced =
      to_force(plan(lanes.manifest(), caps, {}, lanes.description().ranking));
  const Family& rows = gemm_rows_family(f.bits);
  const Forced rows_forced =
      to_force(plan(rows.manifest(), caps, {}, rows.description().ranking));
  const Family& dot = gemm_dot_family(f.bits);
  const Forced dot_forced = to_force(plan(dot.manifest(), caps, {}, dot.description().ranking));
  const Family& axpy = gemm_axpy_family(f.bits);
  const Forced axpy_forced =
      to_force(plan(axpy.manifest(), caps, {}, axpy.description().ranking));
  std::mt19937 rng(std::random_device{}());
  for (const BenchShape& shape : shapes) {
    check_problem_fits(caps, shape.m * f.batch, shape.n, shape.k, "fatcl bench");
    Problem problem(context, queue, f, shape, rng);
    const GemmCall& call = problem.call;
    const double flop = shape.flop() * double(f.batch);
    GemmBenchRow row;
    row.shape = shape;
    cl_command_queue q = queue();
    cl_device_id id = device();
    // Each call checked once, then those that ran timed in turn (a machine
    // whose speed drifts slows them alike: on 2 Zen 4 cores, timed one after
    // the other, one CPU point's median moved by a fifth between runs and
    // per-form tunes ranked the points by that). Each call says which
    // variant it forces.
    std::vector<std::function<std::string()>> runs;
    auto add = [&](const std::string& kernel, const Variant* v, std::optional<Tier> tier,
                   std::function<std::string()> run) {
      GemmBenchEntry e;
      e.kernel = kernel, e.variant = v ? v->name : "", e.tier = tier;
      row.entries.push_back(e);
      runs.push_back(std::move(run));
    };
    add("auto", nullptr, std::nullopt, [&] {
      OverrideVariant(id, f.bits, "");
      return run_fatcl(q, f, call);
    });
    // Each point forced (OverrideVariant) in its tier.
    auto add_forced = [&](const Forced& points) {
      for (const auto& [v, tier] : points) {
        add("variant", v, tier, [&, v = v, tier = tier] {
          OverrideVariant(id, f.bits, v->name, tier);
          return run_fatcl(q, f, call);
        });
      }
    };
    add_forced(forced);
    // The lanes family's points where GemmLanesFit holds.
    if (o.variants && GemmLanesFit(caps, shape.m, shape.n, shape.k, f.batch)) {
      add_forced(lanes_forced);
    }
    // The rows family's where a side of C is thin enough for it on a CPU
    // (which side runs as the rows depends on the form; the other way it
    // computes too, slower).
    if (o.variants && (GemmRowsFit(caps, f.bits, shape.m, shape.n, shape.k, f.batch, false) ||
                       GemmRowsFit(caps, f.bits, shape.n, shape.m, shape.k, f.batch, false))) {
      add_forced(rows_forced);
    }
    // The dot family's where C is one row or column (on every device: fast
    // in the forms whose large operand lies along K, right in every form).
    if (o.variants && std::min(shape.m, shape.n) <= kGemmDotMostColumns) add_forced(dot_forced);
    // The axpy family's where C has up to 16 rows or columns (fast in the
    // forms whose large operand lies along C's long side; the entry points
    // take it for one, GemmAxpyFit: the others measure whether more pay).
    if (o.variants && std::min(shape.m, shape.n) <= 16) add_forced(axpy_forced);
    for (const GemmExternal& x : o.external) {
      add(x.name, nullptr, std::nullopt, [&] { return x.run(q, f, call); });
    }
    // The vendor's BLAS on the same inputs, copied to it once: checked like
    // every call (its C written into the problem's, poisoned before), then
    // timed after the others by the host clock around its own finished
    // runs. (Timed in turn with them, the automatic choice after it took up
    // to 0.74 of the same variant forced: OpenBLAS's threads spin on after
    // a call. Debian's PoCL, 2048^3, 2 Zen 4 cores, 2026-12-05.)
    std::string vendor_failure;
    if (vendor) {
      vendor_failure =
          vendor->prepare(reinterpret_cast<const float*>(problem.ha.data()),
                          reinterpret_cast<const float*>(problem.hb.data()), shape.m, shape.n,
                          shape.k);
      add(vendor->name, nullptr, std::nullopt, [&] {
        return vendor_failure.empty()
                   ? run_vendor_gemm_into(*vendor, queue, problem.c, shape.m * shape.n)
                   : vendor_failure;
      });
      row.entries.back().vendor = true;
    }
    std::vector<std::function<void()>> timed;
    std::vector<GemmBenchEntry*> timed_entries;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      GemmBenchEntry& e = row.entries[i];
      if (o.progress) {
        o.progress(shape.label() + ": " + (e.variant.empty() ? e.kernel : e.variant) +
                   (e.tier ? std::string(" (") + to_string(*e.tier) + ")" : ""));
      }
      e.failure = problem.check(f, runs[i], &e.relative_error);
      if (!e.failure.empty()) continue;
      e.ok = e.relative_error <= tolerance(f.bits);
      if (e.kernel == "auto") {
        const detail::GemmLastRun last = detail::gemm_last_run();
        e.chosen = last.variant, e.chosen_tier = last.tier, e.ran = last.how;
        row.tuned = last.tuned;
      }
      if (e.vendor) continue;
      timed.push_back([&run = runs[i]] { run(); });
      timed_entries.push_back(&e);
    }
    if (!timed.empty()) {
      if (o.progress) {
        o.progress(shape.label() + ": timing " + std::to_string(timed.size()) + " calls in turn");
      }
      const std::vector<double> ms = interleaved_median_ms(queue, timed, o.repetitions);
      for (std::size_t i = 0; i < ms.size(); ++i) {
        timed_entries[i]->ms = ms[i];
        timed_entries[i]->gflops = flop / ms[i] / 1e6;
      }
    }
    if (vendor && row.entries.back().failure.empty()) {
      GemmBenchEntry& e = row.entries.back();
      if (o.progress) o.progress(shape.label() + ": timing " + e.kernel);
      try {
        e.ms = median_ms(
            queue,
            [&] {
              if (const std::string failed = vendor->run(); !failed.empty()) throw Error(failed);
            },
            o.repetitions);
        e.gflops = flop / e.ms / 1e6;
      } catch (const Error& error) {
        e.failure = error.what(), e.ok = false;
      }
    }
    if (o.reference) {
      // The reference path, checked and timed once as the baseline.
      const Variant& naive = gemm_naive_family(f.bits).manifest().variants.at(0);
      GemmBenchEntry e;
      e.kernel = "naive", e.variant = naive.name;
      auto run = [&] {
        OverrideVariant(id, f.bits, naive.name);
        return run_fatcl(q, f, call);
      };
      if (o.progress) o.progress(shape.label() + ": " + naive.name);
      e.failure = problem.check(f, run, &e.relative_error);
      if (e.failure.empty()) {
        e.ok = e.relative_error <= tolerance(f.bits);
        e.ms = median_ms(queue, [&] { run(); }, 1);
        e.gflops = flop / e.ms / 1e6;
      }
      // Listed before the external libraries and the vendor's, as the
      // report reads them.
      row.entries.insert(
          row.entries.end() - std::ptrdiff_t(o.external.size() + (vendor ? 1 : 0)), e);
    }
    if (o.online_calls > 0) {
      if (o.progress) {
        o.progress(shape.label() + ": learning online, " + std::to_string(o.online_calls) +
                   " calls");
      }
      row.online = gemm_online(queue, problem, f, o.repetitions, o.online_calls);
    }
    OverrideVariant(id, f.bits, "");
    for (const GemmBenchEntry& e : row.entries) {
      if (!e.ok) continue;
      if (e.vendor) {
        row.vendor_gflops = std::max(row.vendor_gflops, e.gflops);
      } else if (e.kernel == "auto" || e.kernel == "variant" || e.kernel == "naive") {
        row.best_fatcl_gflops = std::max(row.best_fatcl_gflops, e.gflops);
      } else {
        row.external_gflops = std::max(row.external_gflops, e.gflops);
      }
    }
    report.rows.push_back(std::move(row));
  }
  return report;
}

namespace {

// The automatic choice against the fastest fatcl call, over the sizes a
// tuning entry of their own size class decided (tuned) or the others, as
// fatcl bench summarises fatcl::Matmul's.
std::optional<ChoiceSummary> summarize_choice(const std::vector<GemmBenchRow>& rows, bool tuned) {
  std::vector<double> ratios;
  for (const GemmBenchRow& r : rows) {
    if (r.tuned != tuned || r.best_fatcl_gflops <= 0) continue;
    double auto_gflops = 0;  // an automatic choice that did not run counts as 0
    for (const GemmBenchEntry& e : r.entries) {
      if (e.kernel == "auto" && e.ok) auto_gflops = e.gflops;
    }
    ratios.push_back(auto_gflops / r.best_fatcl_gflops);
  }
  return fatcl::summarize_choice(ratios);
}

}  // namespace

std::string GemmBenchReport::to_text() const {
  std::string out = "GEMM in one form: " + form.describe() + ", on " + device +
                    " (alpha 1, beta 0; median, host clock around a finished queue)\n" +
                    "vendor BLAS: " + vendor + "\n";
  char line[512];
  for (const GemmBenchRow& r : rows) {
    out += r.shape.label() + ":\n";
    double auto_gflops = 0;
    for (const GemmBenchEntry& e : r.entries) {
      const std::string name = (e.kernel == "variant" ? e.variant
                                : e.kernel == "naive"  ? "naive (" + e.variant + ", timed once)"
                                                       : e.kernel) +
                               (e.tier ? std::string(" (") + to_string(*e.tier) + ")" : "");
      if (!e.failure.empty()) {
        out += "  " + name + ": failed: " + e.failure + "\n";
        continue;
      }
      if (e.kernel == "auto" && e.ok) auto_gflops = e.gflops;
      std::snprintf(line, sizeof line, "  %-100s %10.3f ms %10.1f GFLOP/s  error %.1e%s\n",
                    name.c_str(), e.ms, e.gflops, e.relative_error, e.ok ? "" : "  WRONG");
      out += line;
      if (!e.chosen.empty()) {
        out += "    ran " + e.chosen + " (" + to_string(e.chosen_tier) + " tier) for " + e.ran +
               "\n";
      }
    }
    if (r.best_fatcl_gflops > 0) {
      std::snprintf(line, sizeof line, "  automatic / fastest fatcl: %.2f (%s size)",
                    auto_gflops / r.best_fatcl_gflops, r.tuned ? "tuned" : "untuned");
      out += line;
      if (r.external_gflops > 0) {
        std::snprintf(line, sizeof line, "   fastest fatcl / CLBlast: %.2fx",
                      r.best_fatcl_gflops / r.external_gflops);
        out += line;
      }
      if (r.vendor_gflops > 0) {
        std::snprintf(line, sizeof line, "   fastest fatcl / vendor: %.2fx",
                      r.best_fatcl_gflops / r.vendor_gflops);
        out += line;
      }
      out += "\n";
    }
    if (r.online) out += r.online->to_text(r.best_fatcl_gflops);
  }
  for (const bool tuned : {true, false}) {
    if (const std::optional<ChoiceSummary> c = summarize_choice(rows, tuned)) {
      std::snprintf(line, sizeof line,
                    "automatic / fastest over the %s sizes (%zu): geometric mean %.2f, lowest "
                    "%.2f\n",
                    tuned ? "tuned" : "untuned", c->sizes, c->geomean, c->lowest);
      out += line;
    }
  }
  return out;
}

std::string GemmBenchReport::to_json() const {
  nlohmann::json j;
  j["device"] = device;
  j["vendor"] = vendor;
  j["form"] = {{"precision", precision_word(form.bits)},
               {"layout", form.layout == Layout::kRowMajor ? "row" : "col"},
               {"transA", trans(form.a_transpose)},
               {"transB", trans(form.b_transpose)},
               {"batch", form.batch}};
  j["sizes"] = nlohmann::json::array();
  for (const GemmBenchRow& r : rows) {
    nlohmann::json s;
    s["size"] = r.shape.label();
    s["m"] = r.shape.m, s["n"] = r.shape.n, s["k"] = r.shape.k;
    s["results"] = nlohmann::json::array();
    double auto_gflops = 0;
    for (const GemmBenchEntry& e : r.entries) {
      if (e.kernel == "auto" && e.ok) auto_gflops = e.gflops;
      s["results"].push_back({{"kernel", e.kernel},
                              {"variant", e.variant},
                              {"tier", e.tier ? to_string(*e.tier) : ""},
                              {"ms", e.ms},
                              {"gflops", e.gflops},
                              {"relative_error", e.relative_error},
                              {"ok", e.ok},
                              {"failure", e.failure},
                              {"vendor", e.vendor}});
      if (e.kernel == "auto" && !e.chosen.empty()) {
        s["results"].back()["chosen"] = {{"variant", e.chosen},
                                         {"tier", to_string(e.chosen_tier)},
                                         {"ran", e.ran}};
      }
    }
    s["best_fatcl_gflops"] = r.best_fatcl_gflops;
    s["tuned"] = r.tuned;
    if (r.best_fatcl_gflops > 0) s["auto_vs_best"] = auto_gflops / r.best_fatcl_gflops;
    if (r.external_gflops > 0) s["best_fatcl_vs_clblast"] = r.best_fatcl_gflops / r.external_gflops;
    if (r.vendor_gflops > 0) s["best_fatcl_vs_vendor"] = r.best_fatcl_gflops / r.vendor_gflops;
    if (r.online) s["online"] = nlohmann::json::parse(r.online->to_json(r.best_fatcl_gflops));
    j["sizes"].push_back(s);
  }
  for (const bool tuned : {true, false}) {
    const std::optional<ChoiceSummary> c = summarize_choice(rows, tuned);
    j[tuned ? "auto_vs_best_tuned" : "auto_vs_best_untuned"] =
        c ? nlohmann::json{{"sizes", c->sizes}, {"geomean", c->geomean}, {"lowest", c->lowest}}
          : nlohmann::json(nullptr);
  }
  return j.dump(2) + "\n";
}

GemmFormsReport run_gemm_forms_bench(const cl::Context& context, const cl::Device& device,
                                     const GemmFormsOptions& o) {
  const DeviceCaps caps = DeviceCaps::query(device);
  GemmFormsReport report;
  report.device = caps.device_name;
  report.bits = o.bits;
  report.batch = o.batch;
  const std::vector<GemmForm> forms =
      gemm_forms(o.bits, o.batch, {Layout::kRowMajor, Layout::kColMajor});
  const std::vector<BenchShape> shapes = o.shapes.empty() ? default_shapes(caps) : o.shapes;
  const cl::CommandQueue queue(context, device);
  cl_command_queue q = queue();
  OverrideVariant(device(), o.bits, "");
  std::mt19937 rng(std::random_device{}());
  for (const BenchShape& shape : shapes) {
    check_problem_fits(caps, shape.m * o.batch, shape.n, shape.k, "fatcl bench");
    Problem problem(context, queue, forms.front(), shape, rng);
    GemmFormsRow row;
    row.shape = shape;
    std::vector<std::function<std::string()>> runs;  // per timing, the call as it is made
    auto add = [&](const GemmForm& f, const std::string& kernel,
                   const std::function<std::string(const GemmCall&)>& run) {
      problem.set(f);
      const GemmCall call = problem.call;
      GemmFormTiming t;
      t.form = f;
      t.kernel = kernel;
      if (o.progress) o.progress(shape.label() + ": " + kernel + ", " + f.describe());
      t.failure = problem.check(f, [&] { return run(call); }, &t.relative_error);
      t.ok = t.failure.empty() && t.relative_error <= tolerance(f.bits);
      runs.push_back([run, call] { return run(call); });
      row.timings.push_back(t);
    };
    for (const GemmForm& f : forms) {
      add(f, "auto", [q, f](const GemmCall& c) { return run_fatcl(q, f, c); });
    }
    for (const GemmExternal& x : o.external) {
      for (const GemmForm& f : forms) {
        add(f, x.name, [q, f, x](const GemmCall& c) { return x.run(q, f, c); });
      }
    }
    std::vector<std::function<void()>> timed;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < row.timings.size(); ++i) {
      if (!row.timings[i].ok) continue;
      timed.push_back([&runs, i] { runs[i](); });
      which.push_back(i);
    }
    if (o.progress) o.progress(shape.label() + ": timing " + std::to_string(timed.size()) + " calls in turn");
    const std::vector<double> ms = interleaved_median_ms(queue, timed, o.repetitions);
    const double flop = shape.flop() * double(o.batch);
    for (std::size_t i = 0; i < which.size(); ++i) {
      GemmFormTiming& t = row.timings[which[i]];
      t.ms = ms[i];
      t.gflops = flop / t.ms / 1e6;
    }
    report.rows.push_back(std::move(row));
  }
  return report;
}

namespace {
std::string form_label(const GemmForm& f) {
  return std::string(f.layout == Layout::kRowMajor ? "row" : "col") + " " +
         (trans(f.a_transpose) ? "T" : "N") + (trans(f.b_transpose) ? "T" : "N");
}
}  // namespace

std::string GemmFormsReport::to_text() const {
  std::string out = "GEMM in every layout and op(A), op(B): " + std::string(precision_word(bits)) +
                    (batch > 1 ? ", " + std::to_string(batch) + " products (strided batch)" : "") +
                    ", on " + device +
                    " (alpha 1, beta 0; automatic choice; median, timed in turn)\n";
  char line[512];
  for (const GemmFormsRow& r : rows) {
    out += r.shape.label() + ":\n";
    const GemmFormTiming& base = r.timings.front();
    double worst = 0;
    std::string worst_form;
    for (const GemmFormTiming& t : r.timings) {
      if (t.kernel != "auto") continue;
      const GemmFormTiming* ext = nullptr;
      for (const GemmFormTiming& x : r.timings) {
        if (x.kernel != "auto" && form_label(x.form) == form_label(t.form)) ext = &x;
      }
      if (!t.failure.empty() || !t.ok) {
        out += "  " + form_label(t.form) + ": " +
               (t.failure.empty() ? "WRONG (error " + std::to_string(t.relative_error) + ")"
                                  : "failed: " + t.failure) +
               "\n";
        continue;
      }
      const double cost = base.ok ? t.ms / base.ms : 0;
      if (cost > worst) worst = cost, worst_form = form_label(t.form);
      std::snprintf(line, sizeof line, "  %s  fatcl %10.3f ms %10.1f GFLOP/s  time / row NN %.3f",
                    form_label(t.form).c_str(), t.ms, t.gflops, cost);
      out += line;
      if (ext && ext->ok) {
        std::snprintf(line, sizeof line, "   %s %10.1f GFLOP/s  fatcl / %s %.2fx", ext->kernel.c_str(),
                      ext->gflops, ext->kernel.c_str(), t.gflops / ext->gflops);
        out += line;
      } else if (ext) {
        out += "   " + ext->kernel + ": " + (ext->failure.empty() ? "WRONG" : "failed: " + ext->failure);
      }
      out += "\n";
    }
    if (worst > 0) {
      std::snprintf(line, sizeof line, "  costliest form: %s, %+.1f %% time against row NN\n",
                    worst_form.c_str(), (worst - 1) * 100);
      out += line;
    }
  }
  return out;
}

std::string GemmFormsReport::to_json() const {
  nlohmann::json j;
  j["device"] = device;
  j["precision"] = precision_word(bits);
  j["batch"] = batch;
  j["sizes"] = nlohmann::json::array();
  for (const GemmFormsRow& r : rows) {
    nlohmann::json s;
    s["size"] = r.shape.label();
    s["m"] = r.shape.m, s["n"] = r.shape.n, s["k"] = r.shape.k;
    s["results"] = nlohmann::json::array();
    const GemmFormTiming& base = r.timings.front();
    for (const GemmFormTiming& t : r.timings) {
      nlohmann::json e{{"kernel", t.kernel},
                       {"layout", t.form.layout == Layout::kRowMajor ? "row" : "col"},
                       {"transA", trans(t.form.a_transpose)},
                       {"transB", trans(t.form.b_transpose)},
                       {"ms", t.ms},
                       {"gflops", t.gflops},
                       {"relative_error", t.relative_error},
                       {"ok", t.ok},
                       {"failure", t.failure}};
      if (t.kernel == "auto" && t.ok && base.ok) e["time_vs_row_nn"] = t.ms / base.ms;
      s["results"].push_back(e);
    }
    j["sizes"].push_back(s);
  }
  return j.dump(2) + "\n";
}

std::string gemm_tuning_form(const GemmForm& f) {
  bool a = trans(f.a_transpose), b = trans(f.b_transpose);
  if (f.layout == Layout::kColMajor) std::swap(a, b);
  return std::string(a ? "T" : "N") + (b ? "T" : "N");
}

std::vector<std::size_t> gemm_tuning_problem(const GemmForm& f, std::size_t m, std::size_t n,
                                             std::size_t k) {
  if (f.layout == Layout::kColMajor) std::swap(m, n);
  return {m, n, k, f.batch};
}

std::vector<TuningEntry> gemm_tuning_entries(const GemmForm& form, const GemmBenchRow& row,
                                             const DeviceCaps& caps, const std::string& who) {
  std::vector<const GemmBenchEntry*> ran;
  for (const GemmBenchEntry& e : row.entries) {
    if (e.kernel == "variant" && e.tier && e.ok) ran.push_back(&e);
  }
  std::stable_sort(ran.begin(), ran.end(),
                   [](const GemmBenchEntry* a, const GemmBenchEntry* b) { return a->gflops > b->gflops; });
  const std::vector<const Family*> families{&gemm_family(form.bits), &gemm_rows_family(form.bits),
                                            &gemm_dot_family(form.bits),
                                            &gemm_axpy_family(form.bits)};
  std::vector<TuningEntry> out;
  for (const Family* family : families) {
    TuningEntry entry =
        measured_entry(caps, family->manifest().family, gemm_tuning_form(form),
                       gemm_tuning_problem(form, row.shape.m, row.shape.n, row.shape.k), who);
    for (const GemmBenchEntry* e : ran) {
      const Variant* v = nullptr;
      for (const Variant& x : family->manifest().variants) {
        if (x.name == e->variant) v = &x;
      }
      if (!v) continue;
      entry.ranking.push_back(
          {e->variant, tier_sha256(family->manifest(), *v, *e->tier), *e->tier, e->gflops});
    }
    if (!entry.ranking.empty()) out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace fatcl
