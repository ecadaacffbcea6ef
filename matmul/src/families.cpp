// The bundled SGEMM families described: their rankings and default points
// (read from the grid), launch geometry and arguments, trial launch and
// shipped tuning entries.
#include "families.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "fatcl/detail/format.hpp"
#include "fatcl/matmul.hpp"
#include "fatcl/store.hpp"
#include "matmul_blocked.hpp"
#include "matmul_fewcols.hpp"
#include "matmul_fewrows.hpp"
#include "matmul_naive.hpp"
#include "matmul_tiled.hpp"
#include "shipped_tuning.hpp"

namespace fatcl {
namespace detail {

void set_kernel_args(cl_kernel kernel, std::string_view what,
                     const std::vector<KernelArg>& args) {
  for (cl_uint i = 0; i < args.size(); ++i) {
    // The message only where it is thrown: a GEMM launch sets 24
    // arguments, and each message was a string built on every call.
    if (const cl_int err = clSetKernelArg(kernel, i, args[i].size, args[i].value)) {
      check_cl(err, "clSetKernelArg(" + std::string(what) + (what.empty() ? "" : ", ") +
                        args[i].name + ")");
    }
  }
}

namespace {

// Sets `args` from index 0 and enqueues `kernel` over `global` (and
// `local`, null: the driver's choice) after `wait`.
cl::Event set_and_enqueue(const cl::CommandQueue& queue, cl_kernel kernel, const char* what,
                          const std::vector<KernelArg>& args, const std::size_t* global,
                          const std::size_t* local, const std::vector<cl_event>& wait,
                          cl_uint dims = 2) {
  set_kernel_args(kernel, what, args);
  cl_event done = nullptr;
  if (const cl_int err = clEnqueueNDRangeKernel(queue(), kernel, dims, nullptr, global, local,
                                                static_cast<cl_uint>(wait.size()),
                                                wait.empty() ? nullptr : wait.data(), &done)) {
    check_cl(err, std::string("clEnqueueNDRangeKernel(") + what + (*what ? ", " : "") +
                      (local ? std::to_string(local[0]) + "x" + std::to_string(local[1]) +
                                   " work-groups"
                             : std::string()) +
                      ")");
  }
  return cl::Event(done, false);
}

}  // namespace

cl::Event launch_matmul(const cl::CommandQueue& queue, const cl::Kernel& kernel,
                        const LaunchGeometry& g, const cl::Buffer& a, const cl::Buffer& b,
                        const cl::Buffer& c, std::size_t m, std::size_t n, std::size_t k,
                        std::size_t lda, std::size_t ldb, std::size_t ldc, std::size_t k_offset,
                        bool accumulate, const std::vector<cl_event>& wait,
                        const cl::Buffer* workspace, std::size_t b_start) {
  const cl_int M = static_cast<cl_int>(m), N = static_cast<cl_int>(n), K = static_cast<cl_int>(k);
  const cl_int LDA = static_cast<cl_int>(lda), LDB = static_cast<cl_int>(ldb),
               LDC = static_cast<cl_int>(ldc), ACC = accumulate ? 1 : 0;
  const cl_long a_offset = static_cast<cl_long>(k_offset);
  const cl_long b_offset =
      static_cast<cl_long>(b_start) + static_cast<cl_long>(k_offset) * static_cast<cl_long>(ldb);
  cl_mem mems[4] = {a(), b(), c(), workspace ? (*workspace)() : nullptr};
  std::vector<KernelArg> args{{sizeof M, &M, "M"},
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
  if (workspace) args.push_back({sizeof(cl_mem), &mems[3], "W"});
  const std::size_t global[3] = {g.global[0], g.global[1], g.depth};
  const std::size_t local[3] = {g.local[0], g.local[1], 1};
  return set_and_enqueue(queue, kernel(), "", args, global, local, wait, g.depth > 1 ? 3 : 2);
}

constexpr std::size_t kSumGroup = 64;

std::size_t work_group_at_most(cl_kernel kernel, std::size_t most) {
  std::size_t group = 0;
  if (clGetKernelWorkGroupInfo(kernel, nullptr, CL_KERNEL_WORK_GROUP_SIZE, sizeof group, &group,
                               nullptr) != CL_SUCCESS ||
      group == 0) {
    return 1;
  }
  return std::min(group, most);
}

cl::Event launch_splitk_sum(const cl::CommandQueue& queue, const cl::Kernel& sum,
                            const cl::Buffer& workspace, const cl::Buffer& c, std::size_t m,
                            std::size_t n, std::size_t splits, std::size_t ldc, bool accumulate,
                            const std::vector<cl_event>& wait) {
  const cl_int M = static_cast<cl_int>(m), N = static_cast<cl_int>(n),
               S = static_cast<cl_int>(splits), LDC = static_cast<cl_int>(ldc),
               ACC = accumulate ? 1 : 0;
  cl_mem mems[2] = {workspace(), c()};
  const std::vector<KernelArg> args{{sizeof M, &M, "M"},
                                    {sizeof N, &N, "N"},
                                    {sizeof S, &S, "splits"},
                                    {sizeof(cl_mem), &mems[0], "W"},
                                    {sizeof(cl_mem), &mems[1], "C"},
                                    {sizeof LDC, &LDC, "ldc"},
                                    {sizeof ACC, &ACC, "accumulate"}};
  // Rows of kSumGroup work-items, N rounded up to them: a driver left to
  // choose divides N itself, and for a prime N (8191) that is one
  // work-item a group (the pass then took longer than the product).
  const std::size_t group = work_group_at_most(sum(), kSumGroup);
  const std::size_t global[2] = {(n + group - 1) / group * group, m};
  const std::size_t local[2] = {group, 1};
  return set_and_enqueue(queue, sum(), "matmul_splitk_sum", args, global, local, wait);
}

std::vector<cl_event> copy_rows(cl_command_queue queue, cl_mem x,
                                const std::vector<std::size_t>& from, std::size_t ld, cl_mem t,
                                std::size_t t_offset, std::size_t t_stride, std::size_t t_ld,
                                std::size_t cols, std::size_t rows, std::size_t element,
                                const std::vector<cl_event>& wait) {
  const std::size_t pitch = ld * element, t_pitch = t_ld * element;
  const std::size_t spacing = from.size() > 1 ? from[1] - from[0] : 0;
  bool even = from.size() > 1 && from[1] > from[0] && spacing % ld == 0 && spacing >= rows * ld &&
              t_stride % t_ld == 0;
  for (std::size_t i = 1; even && i < from.size(); ++i) even = from[i] - from[i - 1] == spacing;
  // An origin as (byte in the row, row): the offset need not start a row.
  auto origin = [](std::size_t bytes, std::size_t row_pitch) {
    return std::array<std::size_t, 3>{bytes % row_pitch, bytes / row_pitch, 0};
  };
  std::vector<cl_event> events;
  auto copy = [&](std::size_t src, std::size_t dst, std::size_t depth) {
    const auto so = origin(src * element, pitch), to = origin(dst * element, t_pitch);
    const std::size_t region[3] = {cols * element, rows, depth};
    cl_event e = nullptr;
    check_cl(clEnqueueCopyBufferRect(queue, x, t, so.data(), to.data(), region, pitch,
                                     depth > 1 ? spacing * element : 0, t_pitch,
                                     depth > 1 ? t_stride * element : 0, cl_uint(wait.size()),
                                     wait.empty() ? nullptr : wait.data(), &e),
             "clEnqueueCopyBufferRect(B into rows of " + std::to_string(t_ld) + " elements)");
    events.push_back(e);
  };
  if (even) {
    copy(from[0], t_offset, from.size());
  } else {
    for (std::size_t i = 0; i < from.size(); ++i) copy(from[i], t_offset + i * t_stride, 1);
  }
  return events;
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
    throw Error(manifest.family +
                ": a blocked grid needs a point that stages in local memory and one "
                "that does not (the GPU and CPU defaults)");
  }
  return d;
}

// A skinny family's ranking before any measurement: the points of the
// device's kind (GPU-shaped: K spread over several work-items, `gpu_shaped`;
// CPU-shaped: one wide vector per work-item) in manifest order. For a
// problem, first by a model of the passes over the large operand: a variant
// that takes `width` rows (few-rows, MS) or columns (few-columns, NS) a pass
// reads it ceil(small / width) times, and each row or column of a pass costs
// about a quarter of a read (cost = passes x (1 + width / 4)).
Ranking skinny_ranking(const Manifest& manifest, std::function<bool(const Variant&)> gpu_shaped,
                       const std::string& kinds, const char* width, std::size_t small_dim) {
  std::map<std::string, std::size_t> order;
  for (const Variant& v : manifest.variants) order.emplace(v.name, order.size());
  Ranking r;
  r.score = [order, gpu_shaped](const Variant& v, const DeviceCaps& caps) {
    const auto it = order.find(v.name);
    const double listed = it == order.end() ? 0 : double(it->second);
    return (gpu_shaped(v) == caps.is_gpu() ? 1000.0 : 0.0) - listed;
  };
  r.rule = "the first point of this kind of device in the manifest (" + kinds + ")";
  r.shape_score = [gpu_shaped, width, small_dim](const Variant& v, const DeviceCaps& caps,
                                                 const std::vector<std::size_t>& problem) {
    const double kind = gpu_shaped(v) == caps.is_gpu() ? 1000.0 : 0.0;
    if (problem.size() != 3) return kind;
    const double w = double(v.param(width));
    const double passes = std::ceil(double(problem[small_dim]) / w);
    // At equal cost, fewer passes.
    return kind - passes * (1 + w / 4) - passes * 1e-3;
  };
  r.shape_rule =
      std::string("this kind of device, then the fewest passes over the large operand (") + width +
      " " + (small_dim == 0 ? "rows" : "columns") + " a pass; cost = passes x (1 + " + width +
      " / 4))";
  return r;
}

// How much of the device `groups` work-groups fill: at most one counted
// per compute unit (too few leave units idle).
double device_fill(double groups, const DeviceCaps& caps) {
  return std::min(1.0, groups / std::max(1.0, double(caps.compute_units)));
}

// The work-groups a variant of `family` launches for a problem, its K split
// as matmul_k_splits splits it (the part K runs in one launch).
double launched_groups(MatmulKernel family, const Variant& v, const DeviceCaps& caps,
                       const std::vector<std::size_t>& problem) {
  const std::size_t parts =
      matmul_k_splits(family, v, problem[0], problem[1],
                      std::min(problem[2], matmul_k_per_launch(caps, family, v)), caps);
  const LaunchGeometry g = matmul_geometry(family, v, problem[0], problem[1], {16, 16}, parts);
  return double(g.global[0] / g.local[0]) * double(g.global[1] / g.local[1]) * double(g.depth);
}

// A skinny family's model of a problem (FamilyDescription::efficiency): a
// rate's share, like the others'. A pass over the large operand computes
// `width` rows (MS) or columns (NS) at about the same cost however many of
// them are inside the matrix, so the share is the small side over the
// passes' width, side / (passes x width): an entry measured at 4 rows
// carried to 5 gives a 4-row point 5/8 of its rate (two passes for 5/4 of
// the work) and an 8-row one 5/4. Counting passes alone (1 / passes, until
// 2026-12-05) gave a one-column point carried from 8 columns to 5 8/5 of
// its measured rate, and chose the few-columns kernel at 555 x 5 x 663 on
// Intel's runtime (12.3 GFLOP/s) where the tiled one ran 15.4 (2 cores of
// a Zen 4). Times how much of the device its work-groups fill, K split
// included (14 x 48 x 290 on the H200: one work-group of the few-rows
// point, 48.8 us against 10.7 for the tiled kernel's three).
std::function<double(const Variant&, const DeviceCaps&, const std::vector<std::size_t>&)>
skinny_efficiency(MatmulKernel family, const char* width, std::size_t small_dim) {
  return [family, width, small_dim](const Variant& v, const DeviceCaps& caps,
                                    const std::vector<std::size_t>& problem) {
    if (problem.size() != 3) return 1.0;
    const double w = double(v.param(width)), side = double(problem[small_dim]);
    return device_fill(launched_groups(family, v, caps, problem), caps) * side /
           (std::ceil(side / w) * w);
  };
}

// The model of a family that runs one work-item per element of C in square
// work-groups of `side` (tiled: TILE, K in slices of TILE; naive: the
// free work-group, K not sliced): the work not spent on padding, times
// how much of the device its work-groups fill.
double per_element_efficiency(double side, bool k_sliced, const DeviceCaps& caps,
                              const std::vector<std::size_t>& problem) {
  if (problem.size() != 3) return 1;
  const double m = double(problem[0]), n = double(problem[1]), k = double(problem[2]);
  const double rows = std::ceil(m / side), cols = std::ceil(n / side);
  const double slices = k_sliced ? std::ceil(k / side) * side : k;
  return m * n * k / (rows * side * cols * side * slices) * device_fill(rows * cols, caps);
}
double tiled_efficiency(const Variant& v, const DeviceCaps& caps,
                        const std::vector<std::size_t>& problem) {
  return per_element_efficiency(double(v.param("TILE")), true, caps, problem);
}
double naive_efficiency(const Variant&, const DeviceCaps& caps,
                        const std::vector<std::size_t>& problem) {
  return per_element_efficiency(16, false, caps, problem);
}

// The blocked family's model of a problem (FamilyDescription::efficiency):
// the share of the launched work that is not a tile's padding (M, N to
// whole MWG x NWG tiles, the rows and columns a moved last tile computes
// again included; K to whole KWG slices); the cost of the guarded path,
// which a point that reads A (or B) from global memory takes on every
// slice where M < MWG (or N < NWG), and, where K is not split, on its last
// slice where K is not a multiple of KWG (PoCL, 2 cores of a Zen 4,
// 2026-12-02: at 2000 x 2000 x 300 the 16-wide KWG16 point, 19 slices, ran
// 130 GFLOP/s against 154 for its KWG4 twin, 75 whole slices, which the
// 1024^3 tune had measured 8 % slower), at a share of the fast path's rate:
// kGuardedShareCpu on a CPU (measured on PoCL, 2 cores of a Zen 4: the
// 16-wide CPU point ran 155 GFLOP/s at 1024^3 and 34 at 1000^3 when every
// unaligned row took that path), kGuardedShareGpu on a GPU (the H200's
// 128 x 128 point that reads A from global memory, 2026-12-02: 13.3
// TFLOP/s guarded at 127 x 8191 x 4099, 8.3 unguarded at 130 x 8191 x
// 4099, where its tiles compute 256 rows: about 0.8 of what the padding
// alone predicts); a point that stages the operand guards only its fetch,
// which cost the H200's 128 x 128 points nothing measurable (33.3 TFLOP/s
// at 127 x 8191 x 4099); and how much of the device its work-groups
// fill (at most one per compute unit counted: too few tiles leave units
// idle, as 127 rows in 128-row tiles do on the H200, unless K is split
// over them, matmul_k_splits: then each part's K is padded to whole slices
// too, and the second pass, which reads the parts once, is not counted).
// Not counted: a last wave of work-groups that is nearly empty (1500^3 on
// the H200, 2026-12-02: 144 work-groups of the 128 x 128 point for 132
// units ran 20.6 TFLOP/s against 39.3 at 2048^3). Counting waves of one
// work-group a unit chose worse there (1500^3 at 0.75 of the fastest
// instead of 0.87: it moved the choice to the 64 x 64 tile, of which
// several fit a unit, and which lost as much, 37.8 -> 19.3): how many fit
// depends on registers that OpenCL does not report.
constexpr double kGuardedShareCpu = 0.25;
constexpr double kGuardedShareGpu = 0.8;
double blocked_efficiency(const Variant& v, const DeviceCaps& caps,
                          const std::vector<std::size_t>& problem) {
  if (problem.size() != 3) return 1;
  const double m = double(problem[0]), n = double(problem[1]), k = double(problem[2]);
  const double mwg = double(v.param("MWG")), nwg = double(v.param("NWG")),
               kwg = double(v.param("KWG"));
  const double tiles_m = std::ceil(m / mwg), tiles_n = std::ceil(n / nwg);
  const std::size_t k_launch =
      std::min(problem[2], matmul_k_per_launch(caps, MatmulKernel::Blocked, v));
  const double parts =
      double(matmul_k_splits(MatmulKernel::Blocked, v, problem[0], problem[1], k_launch, caps));
  const double k_part = std::ceil(std::ceil(k / parts) / kwg) * kwg;
  const double useful = (m * n * k) / (tiles_m * mwg * tiles_n * nwg * parts * k_part);
  const bool guarded_loop = (v.param("SA") == 0 && m < mwg) || (v.param("SB") == 0 && n < nwg);
  const bool unstaged = v.param("SA") == 0 || v.param("SB") == 0;
  const double slices = k_part / kwg;
  const double guarded_slices = guarded_loop                                       ? slices
                                : unstaged && parts == 1 && std::fmod(k, kwg) != 0 ? 1
                                                                                   : 0;
  const double share = caps.is_gpu() ? kGuardedShareGpu : kGuardedShareCpu;
  const double guarded = slices / (slices - guarded_slices + guarded_slices / share);
  return useful * guarded * device_fill(tiles_m * tiles_n * parts, caps);
}

Family make_family(MatmulKernel kernel, const EmbeddedFamily& embedded) {
  const Manifest manifest = Manifest::parse(embedded.manifest_json);
  FamilyDescription d;
  switch (kernel) {
    case MatmulKernel::Blocked:
      d.ranking = matmul_blocked_ranking(manifest);
      d.efficiency = blocked_efficiency;
      break;
    case MatmulKernel::Tiled:
      d.ranking = Ranking::by_work_group_items();
      d.efficiency = tiled_efficiency;
      break;
    case MatmulKernel::Naive:
      d.efficiency = naive_efficiency;
      break;
    case MatmulKernel::FewRows:
      d.ranking = skinny_ranking(
          manifest, [](const Variant& v) { return v.param("WGK") > 1; },
          "GPU: WGK > 1, K over several work-items; CPU: WGK = 1", "MS", 0);
      d.efficiency = skinny_efficiency(MatmulKernel::FewRows, "MS", 0);
      break;
    case MatmulKernel::FewCols:
      d.ranking = skinny_ranking(
          manifest, [](const Variant& v) { return v.param("WG") >= 32; },
          "GPU: WG >= 32 work-items per row; CPU: fewer, more rows per work-group", "NS", 1);
      d.efficiency = skinny_efficiency(MatmulKernel::FewCols, "NS", 1);
      break;
    default:
      break;
  }
  // As Matmul launches it: a launch per slice of K (matmul_k_per_launch),
  // two where that slice is split over work-groups, and the copy of B where
  // its rows would alias (matmul_padded_ldb).
  d.launches = [kernel](const Variant& v, const DeviceCaps& caps,
                        const std::vector<std::size_t>& p) {
    if (p.size() != 3) return 1.0;
    const std::size_t step = matmul_k_per_launch(caps, kernel, v);
    if (const std::size_t w = matmul_b_panel_width(kernel, v, caps, p[0], p[1], p[2])) {
      return double(matmul_panel_launches(p[1], p[2], w, step));
    }
    double count = matmul_padded_ldb(kernel, v, caps, p[1]) ? 1 : 0;
    for (std::size_t k0 = 0; k0 < p[2]; k0 += step) {
      const std::size_t kc = std::min(step, p[2] - k0);
      count += matmul_k_splits(kernel, v, p[0], p[1], kc, caps) > 1 ? 2 : 1;
    }
    return count;
  };
  d.trial = [kernel](const cl::Context& context, const cl::Device& device, const cl::Kernel& k,
                     const Variant& v) {
    return matmul_trial_launch(kernel, context, device, k, v);
  };
  d.shipped_tuning_lines = detail::kShippedTuning;
  return Family(embedded, std::move(d));
}

}  // namespace

// The blocked family's ranking before any measurement: fma() only where the
// device fuses it (else emulated), then closest to the default point of the
// device's class, then less local memory.
Ranking matmul_blocked_ranking(const Manifest& manifest) {
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
    case MatmulKernel::FewRows:
      return "fewrows";
    case MatmulKernel::FewCols:
      return "fewcols";
  }
  return "?";
}

const std::vector<MatmulKernel>& matmul_kernels() {
  static const std::vector<MatmulKernel> all{MatmulKernel::Blocked, MatmulKernel::Tiled,
                                             MatmulKernel::Naive, MatmulKernel::FewRows,
                                             MatmulKernel::FewCols};
  return all;
}

std::string matmul_kernel_names() {
  std::string names;
  for (MatmulKernel k : matmul_kernels()) {
    names += std::string(names.empty() ? "" : ", ") + to_string(k);
  }
  return names;
}

MatmulKernel matmul_kernel_named(const std::string& name) {
  for (MatmulKernel k : matmul_kernels()) {
    if (name == to_string(k)) return k;
  }
  throw Error("no bundled matmul family is called \"" + name.substr(0, 100) +
              "\" (the families: " + matmul_kernel_names() + ")");
}

MatmulKernel matmul_family_for(std::size_t m, std::size_t n, MatmulKernel general, bool gpu) {
  if (m <= kMatmulSkinny && m <= n) return MatmulKernel::FewRows;
  if (n <= (gpu ? kMatmulFewColsGpu : kMatmulSkinny)) return MatmulKernel::FewCols;
  return general;
}

namespace {

// Why the weighed predictions decide (choose_matmul_family) and what the
// explanation says of it: the rule's family among them, else an entry
// measured at the shape itself (learning online writes such entries: the
// next run must read what it learned); otherwise the rule stands, since a
// family is not passed over for want of a measurement.
enum class FamilyDecision { Weighed, AtShape, Rule };
FamilyDecision family_decision(const MatmulFamilyChoice& choice) {
  for (const FamilyPrediction& p : choice.predictions) {
    if (p.weighed && p.family == choice.rule) return FamilyDecision::Weighed;
  }
  for (const FamilyPrediction& p : choice.predictions) {
    if (p.weighed && p.distance == 0) return FamilyDecision::AtShape;
  }
  return FamilyDecision::Rule;
}

// The prediction whose device the others are weighed against: this
// device's own where they can decide (the rule's family is among them, or
// an entry at the shape itself: what it measured, online too, is what the
// next run must read), else the rule's family's neighbour, else this
// device's, else the nearest's. Rates of two machines, and distances of
// two lattices, are not comparable: on a Xeon with blocked entries of its
// own at 256 and up and a Zen 4's lattice for the rest, the Zen 4's naive
// entry at 64^3 won against the Xeon's blocked one six powers of two away
// (2026-12-06). Nor does a device's lattice decide without the rule's
// family: at 1733 x 4 x 197 the Xeon's blocked entry alone left the rule,
// the few-columns kernel, at 6.1 GFLOP/s where the tiled one, which the
// Zen 4's lattice puts ahead of it there, ran 13.9 (Intel's runtime).
const FamilyPrediction& weighed_device(const MatmulFamilyChoice& choice) {
  for (const FamilyPrediction& p : choice.predictions) {
    if (p.this_device && (p.family == choice.rule || p.distance == 0)) return p;
  }
  for (const FamilyPrediction& p : choice.predictions) {
    if (p.family == choice.rule) return p;
  }
  for (const FamilyPrediction& p : choice.predictions) {
    if (p.this_device) return p;
  }
  return choice.predictions.front();
}

}  // namespace

MatmulFamilyChoice choose_matmul_family(const DeviceCaps& caps, const Store& store, std::size_t m,
                                        std::size_t n, std::size_t k, MatmulKernel general) {
  MatmulFamilyChoice choice;
  choice.rule = matmul_family_for(m, n, general, caps.is_gpu());
  choice.family = choice.rule;
  std::vector<MatmulKernel> candidates;
  const MatmulKernel chain[] = {MatmulKernel::Blocked, MatmulKernel::Tiled, MatmulKernel::Naive};
  bool after_general = false;
  for (MatmulKernel f : chain) {
    after_general = after_general || f == general;
    if (after_general) candidates.push_back(f);
  }
  if (m <= kMatmulSkinny) candidates.push_back(MatmulKernel::FewRows);
  if (n <= kMatmulSkinny) candidates.push_back(MatmulKernel::FewCols);
  const std::vector<std::size_t> problem{m, n, k};
  // A family's prediction from its nearest entry, of any device or of the
  // device `on_device_of` was measured on; the entry beside it.
  auto predict = [&](MatmulKernel f, const TuningEntry* on_device_of)
      -> std::pair<std::optional<FamilyPrediction>, const TuningEntry*> {
    const Family& family = matmul_family(f);
    const TuningMatch match =
        store.find_tuning(caps, family.manifest(), problem, shipped_tuning_for(family, caps),
                          family.description().efficiency != nullptr, "", on_device_of);
    if (!match.entry || match.entry->ranking.empty()) return {std::nullopt, nullptr};
    FamilyPrediction p;
    p.family = f;
    p.entry = match.entry->describe();
    p.measured = match.entry->problem;
    p.measured_on = match.entry->platform + " / " + match.entry->device + " [" +
                    match.entry->driver + "]";
    p.this_device = match.similarity == 1;
    for (std::size_t i = 0; i < 3 && i < p.measured.size(); ++i) {
      p.distance += std::fabs(std::log2(double(std::max<std::size_t>(1, p.measured[i]))) -
                              std::log2(double(problem[i])));
    }
    p.variant = carry_tuning(*match.entry, family, caps, problem, nullptr, &p.gflops,
                             launch_floor_ms(store, family, caps))
                    .ranking.front()
                    .variant;
    return {std::move(p), match.entry};
  };
  std::vector<const TuningEntry*> entries;  // beside choice.predictions
  for (MatmulKernel f : candidates) {
    auto [p, entry] = predict(f, nullptr);
    if (!p) continue;
    choice.predictions.push_back(std::move(*p));
    entries.push_back(entry);
  }
  // Where a neighbour's entries are weighed, the families this device has
  // entries of are weighed by the neighbour's too, where it has them: one
  // lattice decides which family runs the product, each family's own
  // entries which of its points (load()). A Xeon with blocked entries of its
  // own at 256^3 and up weighed a Zen 4's few-columns entry without the
  // Zen 4's blocked ones at 710 x 16 x 101, and ran the few-columns kernel
  // at 10.9 GFLOP/s where a blocked point ran 41.8 (PoCL, 2026-12-06).
  if (!choice.predictions.empty()) {
    const FamilyPrediction& weighed = weighed_device(choice);
    if (!weighed.this_device) {
      const std::size_t w = std::size_t(&weighed - choice.predictions.data());
      const TuningEntry* neighbour = entries[w];
      const std::string device = weighed.measured_on;
      for (std::size_t i = 0; i < choice.predictions.size(); ++i) {
        if (choice.predictions[i].measured_on == device) continue;
        auto [p, entry] = predict(choice.predictions[i].family, neighbour);
        if (p) choice.predictions[i] = std::move(*p);
      }
    }
  }
  if (choice.predictions.empty()) return choice;
  std::stable_sort(
      choice.predictions.begin(), choice.predictions.end(),
      [](const FamilyPrediction& a, const FamilyPrediction& b) { return a.distance < b.distance; });
  const std::string device = weighed_device(choice).measured_on;
  double reach = -1;
  const FamilyPrediction* best = nullptr;
  for (FamilyPrediction& p : choice.predictions) {
    if (p.measured_on != device) continue;
    if (reach < 0) reach = p.distance + kFamilyReach;  // the nearest of that device's
    p.weighed = p.distance <= reach;
    if (p.weighed && (!best || p.gflops > best->gflops)) best = &p;
  }
  if (family_decision(choice) != FamilyDecision::Rule) choice.family = best->family;
  return choice;
}

std::string MatmulFamilyChoice::to_string() const {
  if (predictions.empty()) return "";
  const FamilyDecision decision = family_decision(*this);
  std::string out =
      std::string(fatcl::to_string(family)) +
      (decision == FamilyDecision::Weighed
           ? " runs it: its measured neighbour predicts the highest rate of the families "
             "(measured GFLOP/s, carried here by the family's model)"
       : decision == FamilyDecision::AtShape
           ? " runs it: of the families measured at this shape itself, it predicts the highest "
             "rate (the rule's family has no measured neighbour near enough)"
           : " runs it, by the rule: it has no measured neighbour near enough to weigh it "
             "against the others");
  const std::string& device = weighed_device(*this).measured_on;
  for (const FamilyPrediction& p : predictions) {
    out += detail::format("\n  %-7s %.1f GFLOP/s (%s) from the entry %s, %.1f powers of two away",
                          fatcl::to_string(p.family), p.gflops, p.variant.c_str(), p.entry.c_str(),
                          p.distance);
    if (!p.weighed && p.measured_on != device) {
      out += ", not weighed (measured on " + p.measured_on + ", the families weighed on " +
             device + ")";
    } else if (!p.weighed) {
      out += detail::format(", not weighed (more than %.0f beyond the nearest)", kFamilyReach);
    }
  }
  return out;
}

const Family& matmul_family(MatmulKernel kernel) {
  static const Family blocked = make_family(MatmulKernel::Blocked, kernels::matmul_blocked());
  static const Family tiled = make_family(MatmulKernel::Tiled, kernels::matmul_tiled());
  static const Family naive = make_family(MatmulKernel::Naive, kernels::matmul_naive());
  static const Family fewrows = make_family(MatmulKernel::FewRows, kernels::matmul_fewrows());
  static const Family fewcols = make_family(MatmulKernel::FewCols, kernels::matmul_fewcols());
  switch (kernel) {
    case MatmulKernel::Blocked:
      return blocked;
    case MatmulKernel::Tiled:
      return tiled;
    case MatmulKernel::Naive:
      return naive;
    case MatmulKernel::FewRows:
      return fewrows;
    case MatmulKernel::FewCols:
      return fewcols;
    case MatmulKernel::Auto:
      break;
  }
  throw Error("matmul_family: Auto is a choice among families, not a family");
}

MatmulKernel matmul_kernel_of(const std::string& variant) {
  for (MatmulKernel k : matmul_kernels()) {
    for (const Variant& v : matmul_family(k).manifest().variants) {
      if (v.name == variant) return k;
    }
  }
  throw Error("no bundled matmul family (" + matmul_kernel_names() + ") has a variant \"" +
              variant.substr(0, 100) + "\"");
}

LaunchGeometry matmul_geometry(MatmulKernel family, const Variant& variant, std::size_t m,
                               std::size_t n, std::array<std::size_t, 2> free_local,
                               std::size_t k_splits) {
  if (k_splits == 0) throw Error("matmul_geometry: k_splits is 0 (1 or more)");
  LaunchGeometry g;
  if (family == MatmulKernel::Blocked) {
    // One NDIMC x MDIMC work-group per NWG x MWG tile of C.
    const std::size_t nwg = static_cast<std::size_t>(variant.param("NWG"));
    const std::size_t mwg = static_cast<std::size_t>(variant.param("MWG"));
    const std::size_t ndimc = static_cast<std::size_t>(variant.param("NDIMC"));
    const std::size_t mdimc = static_cast<std::size_t>(variant.param("MDIMC"));
    g.local = {ndimc, mdimc};
    g.global = {(n + nwg - 1) / nwg * ndimc, (m + mwg - 1) / mwg * mdimc};
    g.depth = k_splits;
    return g;
  }
  if (family == MatmulKernel::FewRows) {
    // One WGN x WGK work-group per WGN * VW columns of C.
    const std::size_t wgn = static_cast<std::size_t>(variant.param("WGN"));
    const std::size_t wgk = static_cast<std::size_t>(variant.param("WGK"));
    const std::size_t vw = static_cast<std::size_t>(variant.param("VW"));
    g.local = {wgn, wgk};
    g.global = {(n + wgn * vw - 1) / (wgn * vw) * wgn, wgk * k_splits};
    return g;
  }
  if (family == MatmulKernel::FewCols) {
    // One WG x RG work-group per RG rows of C.
    const std::size_t wg = static_cast<std::size_t>(variant.param("WG"));
    const std::size_t rg = static_cast<std::size_t>(variant.param("RG"));
    g.local = {wg, rg};
    g.global = {wg * k_splits, (m + rg - 1) / rg * rg};
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

namespace {

// The trial product of a variant: two of its tiles and a ragged edge in
// every direction. A blocked variant's tile is NWG x MWG (K slices of KWG);
// a few-rows one covers MS rows and WGN * VW columns and reads K in steps of
// 4 * WGK; a few-columns one covers RG rows and NS columns and reads K in
// steps of WG * VW; the others' tile is their work-group.
std::array<std::size_t, 3> trial_shape(MatmulKernel family, const Variant& v) {
  auto p = [&v](const char* key) { return static_cast<std::size_t>(v.param(key)); };
  switch (family) {
    case MatmulKernel::Blocked: {
      const std::size_t m = p("MWG"), n = p("NWG");
      return {2 * m + 1, 2 * n + 1, 2 * std::max({m, n, p("KWG")}) + 3};
    }
    case MatmulKernel::FewRows:
      return {2 * p("MS") + 1, 2 * p("WGN") * p("VW") + 1, 8 * p("WGK") + 3};
    case MatmulKernel::FewCols:
      return {2 * p("RG") + 1, 2 * p("NS") + 1, 2 * p("WG") * p("VW") + 3};
    default: {
      const LaunchGeometry unit = matmul_geometry(family, v, 1, 1, {1, 1});
      const std::size_t m = unit.local[1], n = unit.local[0];
      return {2 * m + 1, 2 * n + 1, 2 * std::max(m, n) + 3};
    }
  }
}

}  // namespace

std::string matmul_trial_launch(MatmulKernel family, const cl::Context& context,
                                const cl::Device& device, const cl::Kernel& kernel,
                                const Variant& variant) {
  const LaunchGeometry unit = matmul_geometry(family, variant, 1, 1, {1, 1});
  const std::array<std::size_t, 3> shape = trial_shape(family, variant);
  const std::size_t m = shape[0], n = shape[1], k = shape[2];
  try {
    const MatmulProblem p =
        make_matmul_problem(context, m, n, k, MatmulInputs::SmallIntegers, nullptr);
    const cl::CommandQueue queue = queue_for(context, device);
    const CheckedRun r = run_checked(queue, p, [&] {
      detail::launch_matmul(queue, kernel, matmul_geometry(family, variant, m, n, unit.local), p.a,
                            p.b, p.c, m, n, k, k, n, n, 0, false, {},
                            matmul_is_skinny(family) ? &p.c : nullptr);
      return std::string();
    });
    if (!r.ran && !status_says_code(r.status)) throw Error(r.failure, r.status);
    if (!r.ran) return "the launch did not complete: " + r.failure;
    return r.ok ? "" : "wrong result: " + r.mismatch;
  } catch (const Error& e) {
    if (!status_says_code(e.cl_code())) throw;  // the moment's (TrialLaunch)
    return e.what();
  }
}

std::size_t matmul_k_splits(MatmulKernel family, const Variant& variant, std::size_t m,
                            std::size_t n, std::size_t k, const DeviceCaps& caps) {
  if (!matmul_splits_k(family)) return 1;
  const LaunchGeometry g = matmul_geometry(family, variant, m, n);
  const std::size_t groups = (g.global[0] / g.local[0]) * (g.global[1] / g.local[1]);
  const std::size_t units = std::max<cl_uint>(1, caps.compute_units);
  // Each part at least 16 steps of the kernel's walk through K.
  const std::size_t step = family == MatmulKernel::FewRows ? 4 * std::size_t(variant.param("WGK"))
                           : family == MatmulKernel::FewCols
                               ? std::size_t(variant.param("WG") * variant.param("VW"))
                               : std::size_t(variant.param("KWG"));
  const std::size_t most = std::max<std::size_t>(1, k / (16 * step));
  if (family == MatmulKernel::Blocked) {
    // A blocked work-group keeps a whole tile in registers: one or two fit a
    // unit. Split only where the tiles leave units idle, into as many parts
    // as one wave of two per unit holds (a second, partial wave would cost
    // what the split saves).
    if (groups >= units) return 1;
    return std::min({2 * units / groups, most, kMatmulMaxKSplits});
  }
  // Enough work-groups to keep every compute unit busy: several per unit on
  // a GPU (each hides the others' memory latency), a couple on a CPU.
  const std::size_t wanted = (caps.is_gpu() ? 8 : 2) * units;
  if (groups >= wanted) return 1;
  return std::min({(wanted + groups - 1) / groups, most, kMatmulMaxKSplits});
}

std::size_t matmul_k_per_launch(const DeviceCaps& caps) {
  return has_driver_quirk(caps, "loop-limit-65536") ? kMatmulMaxKPerLaunchLoopLimited
                                                    : kMatmulMaxKPerLaunch;
}

namespace {

constexpr std::size_t kPageBytes = 4096;

// A blocked point on a CPU that reads B from global memory.
bool cpu_reads_b_in_place(MatmulKernel family, const Variant& variant, const DeviceCaps& caps) {
  return family == MatmulKernel::Blocked && param_or(variant, "SB", 1) == 0 &&
         (caps.device_type & CL_DEVICE_TYPE_CPU) != 0;
}

}  // namespace

std::size_t matmul_k_per_launch(const DeviceCaps& caps, MatmulKernel family,
                                const Variant& variant, std::size_t b_row_bytes) {
  const std::size_t most = matmul_k_per_launch(caps);
  if (!cpu_reads_b_in_place(family, variant, caps)) return most;
  return std::min(most, b_row_bytes >= kPageBytes ? kMatmulCpuPagedKPerLaunch
                                                  : kMatmulCpuKPerLaunch);
}

std::size_t matmul_padded_ldb(MatmulKernel family, const Variant& variant, const DeviceCaps& caps,
                              std::size_t ldb, std::size_t element_bytes) {
  if (!cpu_reads_b_in_place(family, variant, caps)) return 0;
  constexpr std::size_t kAliasBytes = 4096, kLineBytes = 64;
  return (ldb * element_bytes) % kAliasBytes == 0 ? ldb + kLineBytes / element_bytes : 0;
}

std::size_t matmul_b_panel_width(MatmulKernel family, const Variant& variant,
                                 const DeviceCaps& caps, std::size_t m, std::size_t n,
                                 std::size_t k, std::size_t element_bytes) {
  if (!cpu_reads_b_in_place(family, variant, caps)) return 0;
  const std::size_t width = std::size_t(variant.param("NWG"));
  const std::size_t tile_rows = std::size_t(variant.param("MWG"));
  const std::size_t units = std::max<cl_uint>(1, caps.compute_units);
  const bool busy = (m + tile_rows - 1) / tile_rows >= kMatmulPanelTilesPerUnit * units;
  const bool pays = n * element_bytes >= kPageBytes && n >= 2 * width && k >= kMatmulPanelMinK;
  return busy && pays ? width : 0;
}

std::size_t matmul_panel_launches(std::size_t n, std::size_t k, std::size_t width,
                                  std::size_t k_per_launch) {
  const std::size_t panels = n / width, packed = n % width ? panels - 1 : panels;
  return packed + panels * ((k + k_per_launch - 1) / k_per_launch);
}

}  // namespace fatcl
