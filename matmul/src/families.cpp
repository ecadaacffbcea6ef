// The bundled SGEMM families described: their rankings and default points
// (read from the grid), launch geometry and arguments, trial launch and
// shipped tuning entries.
#include "families.hpp"

#include <algorithm>

#include "fatcl/matmul.hpp"
#include "fatcl/store.hpp"
#include "matmul_blocked.hpp"
#include "matmul_naive.hpp"
#include "matmul_tiled.hpp"
#include "shipped_tuning.hpp"

namespace fatcl {
namespace detail {

cl::Event launch_matmul(const cl::CommandQueue& queue, const cl::Kernel& kernel,
                        const LaunchGeometry& g, const cl::Buffer& a, const cl::Buffer& b,
                        const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                        std::size_t lda, std::size_t ldb, std::size_t ldc, std::size_t k_offset,
                        bool accumulate, const std::vector<cl_event>& wait) {
  const cl_int M = static_cast<cl_int>(m), N = static_cast<cl_int>(n), K = static_cast<cl_int>(k);
  const cl_int LDA = static_cast<cl_int>(lda), LDB = static_cast<cl_int>(ldb),
               LDC = static_cast<cl_int>(ldc), ACC = accumulate ? 1 : 0;
  const cl_long a_offset = static_cast<cl_long>(k_offset);
  const cl_long b_offset = static_cast<cl_long>(k_offset) * static_cast<cl_long>(ldb);
  cl_kernel raw = kernel();
  cl_mem mems[3] = {a(), b(), c()};
  const struct {
    std::size_t size;
    const void* value;
    const char* name;
  } args[] = {{sizeof M, &M, "M"},
              {sizeof N, &N, "N"},
              {sizeof K, &K, "K"},
              {sizeof(cl_mem), &mems[0], "A"},
              {sizeof(cl_mem), &mems[1], "B"},
              {sizeof(cl_mem), &mems[2], "C"},
              {sizeof a_offset, &a_offset, "a_offset"},
              {sizeof LDA, &LDA, "lda"},
              {sizeof b_offset, &b_offset, "b_offset"},
              {sizeof LDB, &LDB, "ldb"},
              {sizeof LDC, &LDC, "ldc"},
              {sizeof ACC, &ACC, "accumulate"}};
  for (cl_uint i = 0; i < sizeof args / sizeof args[0]; ++i) {
    check_cl(clSetKernelArg(raw, i, args[i].size, args[i].value),
             std::string("clSetKernelArg(") + args[i].name + ")");
  }
  cl_event done = nullptr;
  check_cl(clEnqueueNDRangeKernel(queue(), raw, 2, nullptr, g.global.data(), g.local.data(),
                                  static_cast<cl_uint>(wait.size()),
                                  wait.empty() ? nullptr : wait.data(), &done),
           "clEnqueueNDRangeKernel(" + std::to_string(g.local[0]) + "x" +
               std::to_string(g.local[1]) + " work-groups)");
  return cl::Event(done, false);
}

}  // namespace detail

namespace {

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

long long param_or(const Variant& v, std::string_view key, long long fallback) {
  for (const auto& [k, value] : v.params) {
    if (k == key) return value;
  }
  return fallback;
}

// The blocked family's default points, read from its grid: the first point
// that stages A or B in local memory is the GPU default, the first that
// stages nothing the CPU default (matmul/CMakeLists.txt lists them first
// among their kind: the points measured fastest on the H200 and on PoCL on
// a 2-core AVX-512 CPU, docs/PERFORMANCE.md). FMA is ranked apart.
struct BlockedDefaults {
  const Variant* gpu = nullptr;
  const Variant* cpu = nullptr;
};
BlockedDefaults blocked_defaults(const Manifest& manifest) {
  BlockedDefaults d;
  for (const Variant& v : manifest.variants) {
    const bool stages = v.param("SA") != 0 || v.param("SB") != 0;
    const Variant*& slot = stages ? d.gpu : d.cpu;
    if (!slot) slot = &v;
  }
  if (!d.gpu || !d.cpu) {
    throw Error(
        "matmul_blocked: the grid needs a point that stages in local memory and one "
        "that does not (the GPU and CPU defaults)");
  }
  return d;
}

// The blocked family's ranking before any measurement: fma() only where the
// device fuses it (else emulated), then closest to the default point of the
// device's class, then less local memory.
Ranking blocked_ranking(const Manifest& manifest) {
  const BlockedDefaults defaults = blocked_defaults(manifest);
  // Copies: the ranking outlives nothing, but a Family is movable.
  const Variant gpu = *defaults.gpu, cpu = *defaults.cpu;
  Ranking r;
  r.score = [gpu, cpu](const Variant& v, const DeviceCaps& caps) {
    const Variant& best = caps.is_gpu() ? gpu : cpu;
    // An emulated fma() costs more than any shape gains.
    if (param_or(v, "FMA", 0) == 1 && !caps.fused_multiply_add) return -100.0;
    double score = 0;
    for (const auto& [k, value] : best.params) {
      if (k != "FMA") score += param_or(v, k, -1) == value ? 1 : 0;
    }
    if (caps.fused_multiply_add) score += param_or(v, "FMA", 0) == 1 ? 0.5 : 0;
    return score - double(v.local_mem_bytes) * 1e-9;
  };
  r.rule =
      "fma() only where the device fuses it (CL_FP_FMA), then parameters closest to the default "
      "point of this class of device (GPU: " +
      gpu.name +
      ", the first point that stages A or B "
      "in local memory; CPU: " +
      cpu.name +
      ", the first that stages nothing), then less local "
      "memory";
  return r;
}

// The tuning entries fatcl ships for the bundled families
// (matmul/tuning/shipped.json), each family's own.
std::vector<TuningEntry> shipped_entries(const std::string& family) {
  static const std::vector<TuningEntry> all =
      parse_tuning_entries(detail::kShippedTuning, "shipped with fatcl");
  std::vector<TuningEntry> out;
  for (const TuningEntry& e : all) {
    if (e.family == family) out.push_back(e);
  }
  return out;
}

Family make_family(MatmulKernel kernel, const EmbeddedFamily& embedded) {
  const Manifest manifest = Manifest::parse(embedded.manifest_json);
  FamilyDescription d;
  switch (kernel) {
    case MatmulKernel::Blocked:
      d.ranking = blocked_ranking(manifest);
      break;
    case MatmulKernel::Tiled:
      d.ranking = Ranking::by_work_group_items();
      break;
    default:
      break;
  }
  d.trial = [kernel](const cl::Context& context, const cl::Device& device, const cl::Kernel& k,
                     const Variant& v) {
    return matmul_trial_launch(kernel, context, device, k, v);
  };
  d.shipped_tuning = shipped_entries(manifest.family);
  return Family(embedded, std::move(d));
}

}  // namespace

const char* to_string(MatmulKernel kernel) {
  switch (kernel) {
    case MatmulKernel::Auto:
      return "auto";
    case MatmulKernel::Blocked:
      return "blocked";
    case MatmulKernel::Tiled:
      return "tiled";
    case MatmulKernel::Naive:
      return "naive";
  }
  return "?";
}

const Family& matmul_family(MatmulKernel kernel) {
  static const Family blocked = make_family(MatmulKernel::Blocked, kernels::matmul_blocked());
  static const Family tiled = make_family(MatmulKernel::Tiled, kernels::matmul_tiled());
  static const Family naive = make_family(MatmulKernel::Naive, kernels::matmul_naive());
  switch (kernel) {
    case MatmulKernel::Blocked:
      return blocked;
    case MatmulKernel::Tiled:
      return tiled;
    case MatmulKernel::Naive:
      return naive;
    case MatmulKernel::Auto:
      break;
  }
  throw Error("matmul_family: Auto is a choice among families, not a family");
}

MatmulKernel matmul_kernel_of(const std::string& variant) {
  for (MatmulKernel k : {MatmulKernel::Blocked, MatmulKernel::Tiled, MatmulKernel::Naive}) {
    for (const Variant& v : matmul_family(k).manifest().variants) {
      if (v.name == variant) return k;
    }
  }
  throw Error("no bundled matmul family (blocked, tiled, naive) has a variant \"" +
              variant.substr(0, 100) + "\"");
}

LaunchGeometry matmul_geometry(MatmulKernel family, const Variant& variant, std::size_t m,
                               std::size_t n, std::array<std::size_t, 2> free_local) {
  LaunchGeometry g;
  if (family == MatmulKernel::Blocked) {
    // One NDIMC x MDIMC work-group per NWG x MWG tile of C.
    const std::size_t nwg = static_cast<std::size_t>(variant.param("NWG"));
    const std::size_t mwg = static_cast<std::size_t>(variant.param("MWG"));
    const std::size_t ndimc = static_cast<std::size_t>(variant.param("NDIMC"));
    const std::size_t mdimc = static_cast<std::size_t>(variant.param("MDIMC"));
    g.local = {ndimc, mdimc};
    g.global = {(n + nwg - 1) / nwg * ndimc, (m + mwg - 1) / mwg * mdimc};
    return g;
  }
  if (family == MatmulKernel::Auto) {
    throw Error("matmul_geometry: Auto is a choice among families, not a family");
  }
  // Tiled and naive: one work-item per element of C.
  const auto& reqd = variant.reqd_work_group_size;
  g.local = reqd[0] ? std::array<std::size_t, 2>{reqd[0], reqd[1]} : free_local;
  g.global = {round_up(n, g.local[0]), round_up(m, g.local[1])};
  return g;
}

std::string matmul_trial_launch(MatmulKernel family, const cl::Context& context,
                                const cl::Device& device, const cl::Kernel& kernel,
                                const Variant& variant) {
  // Two work-group tiles and a ragged edge in every direction: a blocked
  // variant's tile is NWG x MWG (K slices of KWG), the others' their
  // work-group.
  const LaunchGeometry unit = matmul_geometry(family, variant, 1, 1, {1, 1});
  const bool blocked = family == MatmulKernel::Blocked;
  const std::size_t tile_n = blocked ? std::size_t(variant.param("NWG")) : unit.local[0];
  const std::size_t tile_m = blocked ? std::size_t(variant.param("MWG")) : unit.local[1];
  const std::size_t kwg = blocked ? std::size_t(variant.param("KWG")) : 1;
  const std::size_t m = 2 * tile_m + 1, n = 2 * tile_n + 1,
                    k = 2 * std::max({tile_m, tile_n, kwg}) + 3;
  try {
    const MatmulProblem p =
        make_matmul_problem(context, m, n, k, MatmulInputs::SmallIntegers, nullptr);
    const cl::CommandQueue queue = queue_for(context, device);
    const CheckedRun r = run_checked(queue, p, [&] {
      detail::launch_matmul(queue, kernel, matmul_geometry(family, variant, m, n, unit.local), p.a,
                            p.b, p.c, m, n, k, k, n, n, 0, false, {});
      return std::string();
    });
    if (!r.ran) return "the launch did not complete: " + r.failure;
    return r.ok ? "" : "wrong result: " + r.mismatch;
  } catch (const Error& e) {
    return e.what();
  }
}

std::size_t matmul_k_per_launch(const DeviceCaps& caps) {
  return has_driver_quirk(caps, "loop-limit-65536") ? kMatmulMaxKPerLaunchLoopLimited
                                                    : kMatmulMaxKPerLaunch;
}

}  // namespace fatcl
