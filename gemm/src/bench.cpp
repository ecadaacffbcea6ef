// fatcl bench in a GEMM form: the entry points timed as a product calls
// them, beside CLBlast's same routine.
#include "fatcl/gemm_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

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

}  // namespace

std::string GemmForm::describe() const {
  return std::string(precision_word(bits)) + ", " +
         (layout == Layout::kRowMajor ? "row-major" : "column-major") + ", op(A) = " +
         (trans(a_transpose) ? "A^T" : "A") + ", op(B) = " + (trans(b_transpose) ? "B^T" : "B") +
         (batch > 1 ? ", " + std::to_string(batch) + " products (strided batch)" : "");
}

GemmBenchReport run_gemm_bench(const cl::Context& context, const cl::Device& device,
                               const GemmBenchOptions& o) {
  const DeviceCaps caps = DeviceCaps::query(device);
  GemmBenchReport report;
  report.device = caps.device_name;
  report.form = o.form;
  const GemmForm& f = o.form;
  const std::vector<BenchShape> shapes = o.shapes.empty() ? default_shapes(caps) : o.shapes;
  const std::size_t element = std::size_t(f.bits) / 8;
  const cl::CommandQueue queue(context, device);
  const Family& family = gemm_family(f.bits);
  const Plan p = plan(family.manifest(), caps, {}, family.description().ranking);
  // The variants that fit the device, each once.
  const std::vector<const Variant*> variants = o.variants ? p.variants() : std::vector<const Variant*>{};
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(-1, 1);
  for (const BenchShape& shape : shapes) {
    check_problem_fits(caps, shape.m * f.batch, shape.n, shape.k, "fatcl bench");
    const detail::Stored sa = detail::stored('A', f.layout, trans(f.a_transpose), shape.m, shape.k);
    const detail::Stored sb = detail::stored('B', f.layout, trans(f.b_transpose), shape.k, shape.n);
    const detail::Stored sc = detail::stored('C', f.layout, false, shape.m, shape.n);
    GemmCall call;
    call.m = shape.m, call.n = shape.n, call.k = shape.k;
    call.a_ld = sa.one, call.b_ld = sb.one, call.c_ld = sc.one;
    call.a_stride = sa.rows * sa.cols, call.b_stride = sb.rows * sb.cols;
    call.c_stride = sc.rows * sc.cols;
    std::vector<unsigned char> ha(call.a_stride * f.batch * element),
        hb(call.b_stride * f.batch * element), hc(call.c_stride * f.batch * element);
    for (std::size_t i = 0; i < call.a_stride * f.batch; ++i) detail::set_element(ha, f.bits, i, u(rng));
    for (std::size_t i = 0; i < call.b_stride * f.batch; ++i) detail::set_element(hb, f.bits, i, u(rng));
    cl::Buffer a(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, ha.size(), ha.data());
    cl::Buffer b(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, hb.size(), hb.data());
    cl::Buffer c(context, CL_MEM_READ_WRITE, hc.size());
    call.a = a(), call.b = b(), call.c = c();
    // Sampled rows of the first and the last product, in double.
    std::vector<std::pair<std::size_t, std::size_t>> rows;  // (product, row)
    for (std::size_t z : {std::size_t(0), f.batch - 1}) {
      for (std::size_t i = 0; i < std::min<std::size_t>(shape.m, 4); ++i) {
        rows.push_back({z, (i * 7919) % shape.m});
      }
    }
    auto error_of = [&]() {
      queue.enqueueReadBuffer(c, CL_TRUE, 0, hc.size(), hc.data());
      double diff = 0, norm = 0;
      for (const auto& [z, i] : rows) {
        for (std::size_t j = 0; j < shape.n; ++j) {
          double want = 0;
          for (std::size_t p2 = 0; p2 < shape.k; ++p2) {
            const std::size_t ai = z * call.a_stride + (trans(f.a_transpose) ? at(f.layout, sa, p2, i) : at(f.layout, sa, i, p2));
            const std::size_t bi = z * call.b_stride + (trans(f.b_transpose) ? at(f.layout, sb, j, p2) : at(f.layout, sb, p2, j));
            want += detail::element(ha, f.bits, ai) * detail::element(hb, f.bits, bi);
          }
          const double got = detail::element(hc, f.bits, z * call.c_stride + at(f.layout, sc, i, j));
          diff += (got - want) * (got - want);
          norm += want * want;
        }
      }
      const double e = std::sqrt(diff / std::max(norm, 1e-300));
      return std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
    };
    const double tolerance = f.bits == 64 ? 1e-12 : f.bits == 32 ? kMatmulTolerance : 2e-3;
    const double flop = shape.flop() * double(f.batch);
    GemmBenchRow row;
    row.shape = shape;
    auto measure = [&](GemmBenchEntry e, const std::function<std::string()>& run) {
      if (o.progress) o.progress(shape.label() + ": " + (e.variant.empty() ? e.kernel : e.variant));
      const cl_uchar poison = 0xff;  // NaN in every precision
      queue.enqueueFillBuffer(c, poison, 0, hc.size());
      queue.finish();
      e.failure = run();
      if (e.failure.empty()) {
        queue.finish();
        e.relative_error = error_of();
        e.ok = e.relative_error <= tolerance;
        e.ms = median_ms(queue, [&] { run(); }, o.repetitions);
        e.gflops = flop / e.ms / 1e6;
      }
      row.entries.push_back(e);
    };
    cl_command_queue q = queue();
    cl_device_id id = device();
    OverrideVariant(id, f.bits, "");
    measure({"auto", "", 0, 0, 0, false, ""}, [&] { return run_fatcl(q, f, call); });
    for (const Variant* v : variants) {
      OverrideVariant(id, f.bits, v->name);
      measure({"variant", v->name, 0, 0, 0, false, ""}, [&] { return run_fatcl(q, f, call); });
    }
    OverrideVariant(id, f.bits, "");
    for (const GemmExternal& x : o.external) {
      measure({x.name, "", 0, 0, 0, false, ""}, [&] { return x.run(q, f, call); });
    }
    for (const GemmBenchEntry& e : row.entries) {
      if (!e.ok) continue;
      if (e.kernel == "auto" || e.kernel == "variant") {
        row.best_fatcl_gflops = std::max(row.best_fatcl_gflops, e.gflops);
      } else {
        row.external_gflops = std::max(row.external_gflops, e.gflops);
      }
    }
    report.rows.push_back(std::move(row));
  }
  return report;
}

std::string GemmBenchReport::to_text() const {
  std::string out = "GEMM in one form: " + form.describe() + ", on " + device +
                    " (alpha 1, beta 0; median, host clock around a finished queue)\n";
  char line[512];
  for (const GemmBenchRow& r : rows) {
    out += r.shape.label() + ":\n";
    double auto_gflops = 0;
    for (const GemmBenchEntry& e : r.entries) {
      const std::string name = e.kernel == "variant" ? e.variant : e.kernel;
      if (!e.failure.empty()) {
        out += "  " + name + ": failed: " + e.failure + "\n";
        continue;
      }
      if (e.kernel == "auto" && e.ok) auto_gflops = e.gflops;
      std::snprintf(line, sizeof line, "  %-100s %10.3f ms %10.1f GFLOP/s  error %.1e%s\n",
                    name.c_str(), e.ms, e.gflops, e.relative_error, e.ok ? "" : "  WRONG");
      out += line;
    }
    if (r.best_fatcl_gflops > 0) {
      std::snprintf(line, sizeof line, "  automatic / fastest fatcl: %.2f", auto_gflops / r.best_fatcl_gflops);
      out += line;
      if (r.external_gflops > 0) {
        std::snprintf(line, sizeof line, "   fastest fatcl / CLBlast: %.2fx",
                      r.best_fatcl_gflops / r.external_gflops);
        out += line;
      }
      out += "\n";
    }
  }
  return out;
}

std::string GemmBenchReport::to_json() const {
  nlohmann::json j;
  j["device"] = device;
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
                              {"ms", e.ms},
                              {"gflops", e.gflops},
                              {"relative_error", e.relative_error},
                              {"ok", e.ok},
                              {"failure", e.failure}});
    }
    s["best_fatcl_gflops"] = r.best_fatcl_gflops;
    if (r.best_fatcl_gflops > 0) s["auto_vs_best"] = auto_gflops / r.best_fatcl_gflops;
    if (r.external_gflops > 0) s["best_fatcl_vs_clblast"] = r.best_fatcl_gflops / r.external_gflops;
    j["sizes"].push_back(s);
  }
  return j.dump(2) + "\n";
}

}  // namespace fatcl
