// The GEMM families described (one per precision, over the blocked
// family's parameters and PRECISION; the reference path's, one variant
// each), their launch, and their trial launch.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dgemm_axpy.hpp"
#include "dgemm_blocked.hpp"
#include "dgemm_dot.hpp"
#include "dgemm_lanes.hpp"
#include "dgemm_naive.hpp"
#include "dgemm_rows.hpp"
#include "fatcl/matmul.hpp"
#include "gemm_sum_parts.hpp"
#include "gemm_transpose.hpp"
#include "gemm_transpose_block.h"
#include "hgemm_axpy.hpp"
#include "hgemm_blocked.hpp"
#include "hgemm_dot.hpp"
#include "hgemm_lanes.hpp"
#include "hgemm_naive.hpp"
#include "hgemm_rows.hpp"
#include "launch.hpp"
#include "sgemm_axpy.hpp"
#include "sgemm_blocked.hpp"
#include "sgemm_dot.hpp"
#include "sgemm_lanes.hpp"
#include "sgemm_naive.hpp"
#include "sgemm_rows.hpp"
#include "shipped_tuning.hpp"

namespace fatcl::detail {
namespace {

// A scalar in the kernel's real type: double for 64-bit elements, else
// float (half is computed in float). Its KernelArg points into it.
struct Real {
  Real(double x, int bits) : wide(bits == 64), d(x), f(static_cast<float>(x)) {}
  Real(const Real&) = delete;
  Real& operator=(const Real&) = delete;
  KernelArg arg(const char* name) const {
    return wide ? KernelArg{sizeof d, &d, name} : KernelArg{sizeof f, &f, name};
  }
  bool wide;
  double d;
  float f;
};

// A variant's tile of C and its work-group (the reference path's: one
// element per work-item, WG x WG; the dot family's: RG rows of C and a pass
// of NS columns, WK x RG work-items, as the product runs where M >= N; the
// axpy family's: a pass of MS rows and WGN x VW columns, WGN x WGK
// work-items, as it runs where M <= N), and its K slice (the dot family's:
// a step of its work-items along K; the axpy family's: four steps).
struct Tile {
  std::size_t mwg, nwg, mdimc, ndimc, kwg;
};
// Whether the variant has the parameter `name` (which tells its kernel:
// NS the dot family's, NV the rows family's).
bool has_param(const Variant& v, const char* name) {
  return std::any_of(v.params.begin(), v.params.end(),
                     [name](const auto& p) { return p.first == name; });
}
bool is_dot(const Variant& v) { return has_param(v, "NS"); }
bool is_axpy(const Variant& v) { return has_param(v, "WGK"); }
Tile tile_of(const Variant& v) {
  for (const auto& [key, value] : v.params) {
    if (key == "WG") return {std::size_t(value), std::size_t(value), std::size_t(value),
                             std::size_t(value), 1};
  }
  if (is_dot(v)) {
    const std::size_t rg = std::size_t(v.param("RG")), wk = std::size_t(v.param("WK"));
    return {rg, std::size_t(v.param("NS")), rg, wk, wk * std::size_t(v.param("VW"))};
  }
  if (is_axpy(v)) {
    const std::size_t wgn = std::size_t(v.param("WGN")), wgk = std::size_t(v.param("WGK"));
    return {std::size_t(v.param("MS")), wgn * std::size_t(v.param("VW")), wgk, wgn, 4 * wgk};
  }
  return {std::size_t(v.param("MWG")), std::size_t(v.param("NWG")), std::size_t(v.param("MDIMC")),
          std::size_t(v.param("NDIMC")), std::size_t(v.param("KWG"))};
}
// The axpy family's work-groups for an m x n product (a part of K): along
// C's long side, nwg columns each.
std::size_t axpy_groups(const Tile& t, std::size_t m, std::size_t n) {
  return (std::max(m, n) + t.nwg - 1) / t.nwg;
}

// The trial: an M x N x K product of small integers (two tiles and a
// ragged edge in every direction, so every path of the kernel runs: whole
// and moved tiles, guarded slices), C poisoned with NaN, compared exactly
// (every sum is an integer that each precision holds).
std::string trial(const cl::Context& context, const cl::Device& device, const cl::Kernel& kernel,
                  const Variant& v, int bits) {
  const Tile t = tile_of(v);
  // (The dot family's fast path where M >= N: X is then A, along K.)
  const std::size_t n = 2 * t.nwg + 5, k = 2 * t.kwg + 1;
  const std::size_t m = is_dot(v) ? std::max(2 * t.mwg + 3, n + 1) : 2 * t.mwg + 3;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-2, 2);
  const std::size_t bytes = std::size_t(bits) / 8;
  std::vector<unsigned char> ha(m * k * bytes), hb(k * n * bytes), hc(m * n * bytes);
  for (std::size_t i = 0; i < m * k; ++i) set_element(ha, bits, i, small(rng));
  for (std::size_t i = 0; i < k * n; ++i) set_element(hb, bits, i, small(rng));
  for (std::size_t i = 0; i < m * n; ++i) set_element(hc, bits, i, std::nan(""));
  std::vector<double> want(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t j = 0; j < n; ++j) {
        want[i * n + j] += element(ha, bits, i * k + p) * element(hb, bits, p * n + j);
      }
    }
  }
  try {
    const cl::CommandQueue queue = queue_for(context, device);
    cl_int err = CL_SUCCESS;
    const cl::Buffer da(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, ha.size(), ha.data(), &err);
    check_cl(err, "clCreateBuffer(A)");
    const cl::Buffer db(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, hb.size(), hb.data(), &err);
    check_cl(err, "clCreateBuffer(B)");
    const cl::Buffer dc(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, hc.size(), hc.data(), &err);
    check_cl(err, "clCreateBuffer(C)");
    const cl::Buffer unused(context, CL_MEM_READ_ONLY, 16, nullptr, &err);
    check_cl(err, "clCreateBuffer(the batch arguments)");
    GemmLaunch l;
    l.m = m, l.n = n, l.k = k;
    l.a = da(), l.b = db(), l.c = dc();
    l.a_ld = k, l.b_ld = n, l.c_ld = n;
    l.batch_offsets = l.batch_scalars = unused();
    const cl::Event done(launch_gemm(queue(), kernel(), v, bits, l, {}), false);
    check_cl(done.wait(), "waiting for the trial launch");
    check_cl(queue.enqueueReadBuffer(dc, CL_TRUE, 0, hc.size(), hc.data()),
             "clEnqueueReadBuffer(C)");
  } catch (const Error& e) {
    if (!status_says_code(e.cl_code())) throw;  // the moment's (TrialLaunch)
    return e.what();
  }
  for (std::size_t i = 0; i < m * n; ++i) {
    const double got = element(hc, bits, i);
    if (!(got == want[i])) {
      return "wrong result: C[" + std::to_string(i / n) + "][" + std::to_string(i % n) + "] = " +
             std::to_string(got) + ", expected " + std::to_string(want[i]) + " (" +
             std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ")";
    }
  }
  return "";
}

// The speed of the blocked kernel's guarded path (scalar loads, each
// checked against the matrix) over its unguarded one. A point that reads an
// operand from global memory (SA = 0, SB = 0) takes the unguarded path only
// in tiles that lie inside C; the kernel moves the edge tiles back to end at
// M and N, so only where M < MWG (N < NWG) is there none. Row-major
// products so, on the Xeon (family 6 model 207, 2026-12-06, shapes no entry
// named): the 32 x 64 CPU point at 122 x 60 x 352 ran 19 GFLOP/s where the
// 16 x 32 one ran 146 (Intel's runtime), at 709 x 41 x 78 12 against 56,
// and under PoCL the 24 x 16 point at 17 x 206 x 1015 14 against 83. The
// model took them as alike: their tiles pad C alike. Over the share of
// their tiles that is C's, the guarded path ran at 0.13, 0.22 and 0.17 of
// the unguarded one there, and at 664 x 24 x 325 the 16 x 32 point's at
// 0.16 of the 24 x 16 one's (13 GFLOP/s against 82, Intel's runtime,
// 2026-12-07): a sixth on CPUs (their geometric mean); GPUs keep a quarter.
double guarded_path_speed(const DeviceCaps& caps) { return caps.is_gpu() ? 0.25 : 1.0 / 6; }

// How a variant's tiles cover a problem {M, N, K, batch}: the share of the
// tiles' M x N that is C's (not padding), the share of the K slices' K that
// is K's, how much of the device the work-groups, the whole batch's, fill
// (on a CPU one per compute unit fills it; a GPU runs them in waves of one
// a unit, and a last wave partly empty leaves the others' units idle), and
// the speed of the path its tiles take (1, or guarded_path_speed where none
// lies inside C; where K is not whole slices, the last slice at that speed
// and the others at 1). A side not given or 0 counts as covered.
struct Coverage {
  double mn = 1, k = 1, fill = 1, path = 1;
};
Coverage coverage(const Variant& v, const DeviceCaps& caps, const std::vector<std::size_t>& p) {
  Coverage c;
  if (p.size() < 2 || p[0] == 0 || p[1] == 0) return c;
  const double m = double(p[0]), n = double(p[1]), batch = p.size() > 3 ? double(p[3]) : 1;
  const double tiles_m = std::ceil(m / double(v.param("MWG")));
  const double tiles_n = std::ceil(n / double(v.param("NWG")));
  c.mn = detail::tiles_share_of_c(v, p[0], p[1]);
  if ((v.param("SA") == 0 && p[0] < std::size_t(v.param("MWG"))) ||
      (v.param("SB") == 0 && p[1] < std::size_t(v.param("NWG")))) {
    c.path = guarded_path_speed(caps);
  }
  // A product whose K the entry points split launches a work-group a tile
  // and part.
  const double parts = batch == 1 && p.size() > 2
                           ? double(GemmKParts(caps, int(v.param("PRECISION")), p[0], p[1], p[2]))
                           : 1;
  // On the H100 (2026-12-06) at 418 x 8623 x 2774 the 128 x 256 point's
  // 136 work-groups, two waves for 132 units, ran 16.2 TFLOP/s and the 64 x
  // 64 point's 945, eight waves, 19.8; counted as filling the device alike,
  // the point measured faster at 64 x 8192 x 8192 was carried ahead.
  const double groups = tiles_m * tiles_n * batch * parts;
  const double units = std::max(1.0, double(caps.compute_units));
  c.fill =
      caps.is_gpu() ? groups / (std::ceil(groups / units) * units) : std::min(1.0, groups / units);
  if (p.size() > 2 && p[2] > 0) {
    const double k = double(p[2]), kwg = double(v.param("KWG"));
    const double slices = std::ceil(k / kwg);
    c.k = k / (slices * kwg);
    // Such a point's tiles inside C take the guarded path on a last slice
    // that K does not fill, as fatcl::Matmul's model counts it.
    if (c.path == 1 && (v.param("SA") == 0 || v.param("SB") == 0) && std::fmod(k, kwg) != 0) {
      c.path = slices / (slices - 1 + 1 / guarded_path_speed(caps));
    }
  }
  return c;
}

// The family's model of a problem {M, N, K, batch} (Ranking::shape_score):
// the share of its tiles' work that is C's (not padding) times how well its
// work-groups fill the device (coverage), and its path's speed, each in
// quarters: a small tile wins only where a large one wastes a quarter of
// its work or leaves a quarter of the device idle (on the H200, 2026-12-02:
// at 2000 x 3000 x 1000 the 128 x 128 tile ran at 29 TFLOP/s and the 32 x
// 32 one, 1 % less padding, at 18). Ties keep the blocked ranking's order;
// a batch of 32 x 32 products takes the tile that fits them, a 1024^3
// product on 132 units the 64 x 64 one.
double shape_score(const Variant& v, const DeviceCaps& caps, const std::vector<std::size_t>& p) {
  const Coverage c = coverage(v, caps, p);
  return std::round(c.mn * 4) / 4 * (std::round(c.fill * 4) / 4) * (std::round(c.path * 4) / 4);
}

// The family's model of a problem {M, N, K, batch} (FamilyDescription::
// efficiency), by which an entry measured at other sizes is carried to
// these (carry_tuning): coverage's shares, K's included, times its fill and
// its path's speed, unrounded. Without it the H200's 1,000 products of 32^3
// took the entry of 1,000 of 128^3 as it was, and its 64 x 64 tile (22 us a
// call) over the 32 x 32 one (12 us, 2026-12-03).
double efficiency(const Variant& v, const DeviceCaps& caps, const std::vector<std::size_t>& p) {
  if (p.size() < 3 || p[2] == 0) return 1;
  const Coverage c = coverage(v, caps, p);
  return c.mn * c.k * c.fill * c.path;
}

Family make_family(const EmbeddedFamily& embedded, int bits) {
  const Manifest manifest = Manifest::parse(embedded.manifest_json);
  FamilyDescription d;
  d.ranking = matmul_blocked_ranking(manifest);
  d.ranking.shape_score = shape_score;
  d.efficiency = efficiency;
  d.ranking.shape_rule =
      "the share of the tiles' work that is C's times how well the work-groups fill the "
      "compute units (on a CPU one each fills them; a GPU runs them in waves of one a unit) "
      "times the speed of the path a point that reads an operand in place takes (a quarter on "
      "guarded slices: every slice where no tile lies inside C, else a last slice K does not "
      "fill), each in quarters";
  d.shipped_tuning_lines = kGemmShippedTuning;
  d.trial = [bits](const cl::Context& context, const cl::Device& device, const cl::Kernel& k,
                   const Variant& v) { return trial(context, device, k, v, bits); };
  return Family(embedded, std::move(d));
}

// The reference path's and the lanes family's: their points in the
// manifest's order, each tried on a small product first.
FamilyDescription plain_description(int bits) {
  FamilyDescription d;
  d.trial = [bits](const cl::Context& context, const cl::Device& device, const cl::Kernel& k,
                   const Variant& v) { return trial(context, device, k, v, bits); };
  return d;
}
Family make_plain_family(const EmbeddedFamily& embedded, int bits) {
  return Family(embedded, plain_description(bits));
}

// The rows family's model of a problem {M, N, K, batch} (its shape rule;
// ties keep the manifest's order): how evenly its work-items, a stripe of
// NWG columns and MWG rows each, share the compute units (the columns
// computed over those the waves of work-items could, in tenths: in quarters
// 1287 columns on 2 units read 0.75 in two stripes of 1024 and in six of
// 256, which share them at 0.63 and 0.84), then the wider stripe. On the
// Xeon (2 cores, 2026-12-06, three runs each) at 32 x 2048 x 2048 stripes
// of 1024 columns ran 238-245 GFLOP/s under Intel's runtime and 226-236
// under PoCL, of 512 226-231 and 174-184, of 256 216-218 and 204-217; at 4
// x 1465 x 244 stripes of 512 or 1024 leave a core idle for a third of the
// call, of 256 for a twentieth.
double rows_shape_score(const Variant& v, const DeviceCaps& caps,
                        const std::vector<std::size_t>& p) {
  if (p.size() < 2 || p[0] == 0 || p[1] == 0) return 1;
  const double nwg = double(v.param("NWG")), mwg = double(v.param("MWG"));
  const double batch = p.size() > 3 ? double(std::max<std::size_t>(1, p[3])) : 1;
  const double rows = std::ceil(double(p[0]) / mwg) * batch;
  const double items = std::ceil(double(p[1]) / nwg) * rows;
  const double units = double(std::max<cl_uint>(1, caps.compute_units));
  const double waves = std::ceil(items / units);
  const double share = double(p[1]) * rows / (waves * units * nwg);
  return std::round(std::min(1.0, share) * 10) / 10 * (1 + nwg * 1e-6);
}

// The dot family's model of a problem {M, N, K, batch} (its shape rule;
// ties keep the manifest's order): a point of the device's kind (a GPU's
// spreads K over work-items, a CPU's does not) before any other, then the
// fewest passes over the large operand (a pass reads all of it: NS columns
// of the small side a pass), then the pass's columns the product fills.
double dot_shape_score(const Variant& v, const DeviceCaps& caps,
                       const std::vector<std::size_t>& p) {
  const bool kind = (v.param("WK") > 1) == caps.is_gpu();
  if (p.size() < 2 || p[0] == 0 || p[1] == 0) return kind ? 1 : 0.01;
  const double q = double(std::min(p[0], p[1])), ns = double(v.param("NS"));
  const double passes = std::ceil(q / ns);
  return (kind ? 1 : 0.01) * (1 / passes + 0.1 * q / (passes * ns));
}

Family make_dot_family(const EmbeddedFamily& embedded, int bits) {
  FamilyDescription d = plain_description(bits);
  d.ranking.shape_score = dot_shape_score;
  d.ranking.shape_rule =
      "a point of the device's kind (K over many work-items on a GPU, in one on a CPU), then "
      "the fewest passes over the large operand, then the share of a pass's columns filled";
  return Family(embedded, std::move(d));
}

// The axpy family's model of a problem {M, N, K, batch} on a GPU (its
// shape rule; ties keep the manifest's order, its widest point first): how
// many of the units a point's work-groups reach, with K's parts
// (axpy_k_parts), counted full at 4 groups for 10 units, then the wider
// group. On an H100 (132 units, 2026-12-07, op(A) = A^T, one column) the
// point of 128 columns a group ran 1.33 to 1.81 times the 16-column one's
// speed where it had 64 groups or more (4096 x 1 x 4096 in 4 parts, 2000 x
// 1 x 8192 in 8, 8192 x 1 x 1024 whole; 6000 x 1 x 6000 level), and 0.33
// to 0.84 of it where it had 48 or fewer (1000 x 1 x 1500 to 3000 x 1 x
// 3000: 119 to 522 GFLOP/s against 359 to 770).
double axpy_shape_score(const Variant& v, const DeviceCaps& caps,
                        const std::vector<std::size_t>& p) {
  constexpr double kFullShare = 0.4;
  if (!caps.is_gpu() || p.size() < 3 || p[0] == 0 || p[1] == 0) return 1;
  const Tile t = tile_of(v);
  const double groups =
      double(axpy_groups(t, p[0], p[1])) * double(axpy_k_parts(v, caps, p[0], p[1], p[2]));
  const double full = std::max(1.0, kFullShare * double(caps.compute_units));
  return std::min(1.0, groups / full) + double(t.nwg) * 1e-6;
}

Family make_axpy_family(const EmbeddedFamily& embedded, int bits) {
  FamilyDescription d = plain_description(bits);
  d.ranking.shape_score = axpy_shape_score;
  d.ranking.shape_rule =
      "how many of the units the work-groups reach with K's parts (full at 4 for 10 units), "
      "then the wider group";
  return Family(embedded, std::move(d));
}

// The rows family's: the plain family's, ranked by its shape rule.
Family make_rows_family(const EmbeddedFamily& embedded, int bits) {
  FamilyDescription d = plain_description(bits);
  d.ranking.shape_score = rows_shape_score;
  d.ranking.shape_rule =
      "how evenly the work-items (a stripe of columns each) share the compute units, in "
      "tenths, then the wider stripe";
  return Family(embedded, std::move(d));
}

}  // namespace
}  // namespace fatcl::detail

namespace fatcl {

namespace {

// Of a precision's three families, the one for `bits`-bit elements.
const Family& of_bits(int bits, const Family& h, const Family& s, const Family& d,
                      const char* what) {
  switch (bits) {
    case 16:
      return h;
    case 32:
      return s;
    case 64:
      return d;
    default:
      throw Error(std::string(what) + ": no family for " + std::to_string(bits) +
                  "-bit elements (16, 32 or 64)");
  }
}

}  // namespace

const Family& gemm_family(int bits) {
  static const Family s = detail::make_family(kernels::sgemm_blocked(), 32);
  static const Family d = detail::make_family(kernels::dgemm_blocked(), 64);
  static const Family h = detail::make_family(kernels::hgemm_blocked(), 16);
  return of_bits(bits, h, s, d, "gemm_family");
}

const Family& gemm_naive_family(int bits) {
  static const Family s = detail::make_plain_family(kernels::sgemm_naive(), 32);
  static const Family d = detail::make_plain_family(kernels::dgemm_naive(), 64);
  static const Family h = detail::make_plain_family(kernels::hgemm_naive(), 16);
  return of_bits(bits, h, s, d, "gemm_naive_family");
}

const Family& gemm_lanes_family(int bits) {
  static const Family s = detail::make_plain_family(kernels::sgemm_lanes(), 32);
  static const Family d = detail::make_plain_family(kernels::dgemm_lanes(), 64);
  static const Family h = detail::make_plain_family(kernels::hgemm_lanes(), 16);
  return of_bits(bits, h, s, d, "gemm_lanes_family");
}

const Family& gemm_rows_family(int bits) {
  static const Family s = detail::make_rows_family(kernels::sgemm_rows(), 32);
  static const Family d = detail::make_rows_family(kernels::dgemm_rows(), 64);
  static const Family h = detail::make_rows_family(kernels::hgemm_rows(), 16);
  return of_bits(bits, h, s, d, "gemm_rows_family");
}

const Family& gemm_axpy_family(int bits) {
  static const Family s = detail::make_axpy_family(kernels::sgemm_axpy(), 32);
  static const Family d = detail::make_axpy_family(kernels::dgemm_axpy(), 64);
  static const Family h = detail::make_axpy_family(kernels::hgemm_axpy(), 16);
  return of_bits(bits, h, s, d, "gemm_axpy_family");
}

bool GemmAxpyFit(const DeviceCaps& caps, std::size_t m, std::size_t n, std::size_t k,
                 bool a_trans, bool b_trans) {
  if (!caps.is_gpu() || k < kGemmAxpyLeastK || has_driver_quirk(caps, "loop-limit-65536")) {
    return false;
  }
  const bool along_long_side = m <= n ? !b_trans : a_trans;
  return along_long_side && std::min(m, n) <= kGemmAxpyMostRows &&
         std::max(m, n) >= kGemmAxpyLeastColumns;
}

const Family& gemm_dot_family(int bits) {
  static const Family s = detail::make_dot_family(kernels::sgemm_dot(), 32);
  static const Family d = detail::make_dot_family(kernels::dgemm_dot(), 64);
  static const Family h = detail::make_dot_family(kernels::hgemm_dot(), 16);
  return of_bits(bits, h, s, d, "gemm_dot_family");
}

bool GemmDotFit(const DeviceCaps& caps, std::size_t m, std::size_t n, std::size_t k,
                bool a_trans, bool b_trans) {
  if (!caps.is_gpu() || k < kGemmDotLeastK || has_driver_quirk(caps, "loop-limit-65536")) {
    return false;
  }
  const bool along_k = m < n ? b_trans : !a_trans;
  return along_k && std::min(m, n) <= kGemmDotMostColumns &&
         std::max(m, n) >= kGemmDotLeastRows;
}

bool GemmRowsFit(const DeviceCaps& caps, int bits, std::size_t m, std::size_t n, std::size_t k,
                 std::size_t batch, bool b_trans, bool a_trans) {
  const bool few_rows = m <= kGemmRowsMostRows && n >= kGemmRowsLeastColumns;
  // Fewer columns than a vector of 16 floats: the blocked points waste most
  // of a tile there or take their guarded path (N < NWG); at 1000 x 8 x 1000
  // the rows kernel ran 103-113 GFLOP/s, the blocked family's fastest point
  // 17 (2 Xeon cores, both CPU runtimes, 2026-12-06). At 16 columns they
  // differ by the shape: 2048 x 16 x 2048 194 against 236, 710 x 16 x 101
  // 103 against 70 (Intel's runtime). Up to 64 columns over a short K the
  // blocked tiles' work a tile is short too: at 12 such shapes (K 17 to
  // 128) the rows points ran 0.93 to 7.6 times the blocked family's eight
  // first, 11 of 12 ahead on both runtimes (2000 x 32 x 64 0.93 and 0.96);
  // at K 256 and more they fell behind at 16 to 48 columns (0.71 to 0.93).
  const bool few_columns =
      n < kGemmRowsFewColumns || (n <= kGemmRowsShortKColumns && k <= kGemmRowsShortK);
  // From one vector of 16 floats to two, the blocked points pad or guard a
  // whole tile's width: at 20 and 24 columns (M 664 to 2000, K 325 to 1000,
  // row NN) the rows points ran 1.11 to 1.35 times the automatic blocked
  // choice's speed under Intel's runtime and 0.97 to 1.68 under PoCL, where
  // at 32 columns the blocked 32-wide point led (1000 x 32 x 600: 0.71
  // under Intel's runtime; 2 Xeon cores, 2026-12-07). At 16 columns the
  // one blocked point 16 wide (24 x 16) is in no CPU entry measured before
  // it, and the entries' points guard or pad half a tile: the automatic
  // blocked choice ran 8 to 13 GFLOP/s at 664 x 16 x 325, 1000 x 16 x 1500
  // and 4000 x 16 x 200 where the rows points ran 108 to 197 and the 24 x
  // 16 point 121 to 164 (2 Zen 4 cores, both runtimes, 2026-12-07); over a
  // K of 2048 the 24 x 16 point led (127 to 168 against 91 to 116).
  const bool one_to_two_vectors = bits == 32 && !a_trans && !b_trans &&
                                  n >= kGemmRowsFewColumns && n < 2 * kGemmRowsFewColumns &&
                                  k < kGemmRowsMostK;
  // Rows of four of a register's vectors or more (the 4 x 4 point's block
  // on an AVX-512 CPU) over a K below 1024: the rows points ran 107 such
  // shapes (M 16 to 3000, N 64 to 1024, K 64 to 1000, row NN; 226 timings
  // on the two CPU runtimes) at 0.92 to 2.45 times the blocked family's
  // fastest point, 11 timings below 1 (by up to 8 %, at 96 to 1024
  // columns); row TN, column-major NN and double precision at 5 or 6
  // shapes each at 1.06 to 2.84 (2 Xeon cores, 2026-12-06). At K 2048
  // they were behind at 20 to 56 and at 96 columns (0.70 to 0.95), level
  // or ahead from 64 (0.87 to 1.45); 1024^3 0.91 to 1.08.
  const bool medium_k = n * std::size_t(bits / 8) >= kGemmRowsLeastRowBytes && k < kGemmRowsMostK;
  // op(B) = B^T there too, and with op(A) = A^T: the kernel transposes B^T
  // a tile at a time and reads A^T in place (copied a block at a time where
  // B is not transposed). Row NT, TN and TT took 1.55, 1.07 and 1.34 times
  // row NN's time at 256^3 with B^T packed by a pass first (TT as its
  // transpose), 1.28, 1.13 and 1.17 at 512^3, 1.05, 1.16 and 1.14 at 2048 x
  // 2048 x 128; with the tiles 1.01, 1.04, 1.03; 0.98, 1.01, 1.00; 0.95,
  // 0.99, 1.03 (Intel's CPU runtime, 2 Xeon cores, 2026-12-07). Products of
  // a few columns too, with op(A) = A: row NT at 2000 x 8 x 1000, 4000 x 12
  // x 500 and 1000 x 4 x 3000 took 10.6, 5.8 and 11.0 times NN's time on
  // the blocked points, 1.12, 1.04 and 1.06 here; TT there runs faster as
  // its transpose (0.47-0.69 against 1.12-1.30 here).
  // In half precision, B^T with op(A) = A at any width, and with op(A) = A^T
  // over the first point's tile width (64) or more where the columns are
  // not a few (TT of a few columns runs faster as its transpose here too).
  static const std::size_t half_tile =
      detail::rows_tile_width(gemm_rows_family(16).manifest().variants.front(), 16);
  const bool half_b_trans = bits == 16 && (!a_trans || (n >= half_tile && !few_columns));
  const bool b_trans_fits = medium_k || (few_columns && !a_trans) || half_b_trans;
  const bool a_precision = bits == 16 || bits == 32 || bits == 64;
  if ((caps.device_type & CL_DEVICE_TYPE_CPU) == 0 || caps.is_gpu() || !a_precision || m == 0 ||
      n == 0 || k == 0 || has_driver_quirk(caps, "loop-limit-65536") ||
      (b_trans && !b_trans_fits)) {
    return false;
  }
  // Half precision at every other shape, however few its work-items: at
  // 1024^3 and 2048^3 the rows points ran 252 and 236 GFLOP/s, the blocked
  // family's 135 and 134; at 28 shapes no entry names (1 to 2038 a side,
  // row NN) 1.04 to 33 times the blocked family's fastest (geometric mean
  // 3.5), 17 x 206 x 1015 on one work-item 111 against 62; through the entry
  // points, 96 shapes and forms took 0.78 of the time they took with the
  // rules above, the slowest 2048 x 32 x 2048 row NN (1.11 times: 125-127
  // GFLOP/s where the blocked points ran 140-146; Intel's CPU runtime, 2
  // Xeon cores, 2026-12-07).
  if (bits == 16) return true;
  if (!(few_rows || few_columns || medium_k || one_to_two_vectors)) return false;
  // A work-item a stripe of columns (and rows, and product): fewer than the
  // compute units would leave some idle, where the blocked family's tiles
  // would not. The first point's stripe, read once (this runs every call).
  struct Stripe {
    std::size_t columns, rows;
  };
  auto stripe_of = [](int b) {
    const Variant& first = gemm_rows_family(b).manifest().variants.front();
    return Stripe{std::size_t(first.param("NWG")), std::size_t(first.param("MWG"))};
  };
  static const Stripe of32 = stripe_of(32), of64 = stripe_of(64);
  const Stripe& s = bits == 64 ? of64 : of32;
  const std::size_t items = (n + s.columns - 1) / s.columns * ((m + s.rows - 1) / s.rows) * batch;
  return items >= std::max<std::size_t>(1, caps.compute_units);
}

std::vector<const Family*> gemm_families(int bits) {
  return {&gemm_family(bits), &gemm_naive_family(bits), &gemm_lanes_family(bits),
          &gemm_rows_family(bits), &gemm_dot_family(bits), &gemm_axpy_family(bits)};
}

std::size_t GemmKParts(const DeviceCaps& caps, int bits, std::size_t m, std::size_t n,
                       std::size_t k) {
  // On the H200 (132 units, 2026-12-04) 8192 x 64 x 8192 in single
  // precision ran in 0.44 ms on its fastest point unsplit (32 x 32 tiles,
  // 512 work-groups), and as 4 parts of 2048 in 0.31, 16 of 512 in 0.28
  // (64 x 64 tiles, 2048 work-groups), as a strided batch.
  constexpr std::size_t kTile = 64, kGroupsPerUnit = 16, kMinPartK = 512, kMostParts = 32;
  if (!caps.is_gpu() || bits == 16 || m == 0 || n == 0) return 1;
  const std::size_t units = std::max<cl_uint>(1, caps.compute_units);
  const std::size_t tiles = ((m + kTile - 1) / kTile) * ((n + kTile - 1) / kTile);
  if (tiles >= units) return 1;
  std::size_t parts = 1;
  while (2 * parts <= kMostParts && tiles * 2 * parts <= kGroupsPerUnit * units &&
         k / (2 * parts) >= kMinPartK) {
    parts *= 2;
  }
  return parts;
}

}  // namespace fatcl

namespace fatcl::detail {

std::size_t axpy_k_parts(const Variant& variant, const DeviceCaps& caps, std::size_t m,
                         std::size_t n, std::size_t k) {
  // matmul_k_splits's rule for the few-rows family, whose layout this is,
  // by work-items: 2048 a unit (8 groups of 256: each hides the others'
  // memory latency); each part at least 16 of the kernel's unrolled steps
  // (with 4, the parts' shorter walks ran 2000 x 1 x 1500 with op(A) =
  // A^T at 178 GFLOP/s on an H100 where unsplit it ran 274, 4096 x 1 x 4096
  // at 807 against 1020 in 4 parts, 8192 x 1 x 8192 at 1198 against 1294).
  constexpr std::size_t kItemsPerUnit = 2048, kLeastSteps = 16, kMostParts = 32;
  if (!caps.is_gpu() || m == 0 || n == 0) return 1;
  const Tile t = tile_of(variant);
  const std::size_t items = axpy_groups(t, m, n) * t.ndimc * t.mdimc;
  const std::size_t wanted = kItemsPerUnit * std::max<std::size_t>(1, caps.compute_units);
  if (items >= wanted) return 1;
  const std::size_t most = std::max<std::size_t>(1, k / (kLeastSteps * t.kwg));
  return std::min({(wanted + items - 1) / items, most, kMostParts});
}

const Family& gemm_sum_parts_family() {
  static const Family f(kernels::gemm_sum_parts());
  return f;
}

constexpr std::size_t kSumPartsGroup = 64;

cl_event launch_sum_parts(cl_command_queue queue, cl_kernel kernel, int bits, std::size_t m,
                          std::size_t n, std::size_t parts, cl_mem w, std::size_t w_offset,
                          double alpha, double beta, cl_mem c, std::size_t c_offset,
                          std::size_t c_ld, const std::vector<cl_event>& wait) {
  const cl_int M = cl_int(m), N = cl_int(n), P = cl_int(parts), LDC = cl_int(c_ld);
  const cl_long WO = cl_long(w_offset), CO = cl_long(c_offset);
  const Real alpha_real(alpha, bits), beta_real(beta, bits);
  set_kernel_args(kernel, "gemm_sum_parts",
           {{sizeof M, &M, "M"},
            {sizeof N, &N, "N"},
            {sizeof P, &P, "parts"},
            {sizeof(cl_mem), &w, "W"},
            {sizeof WO, &WO, "w_offset"},
            alpha_real.arg("alpha"),
            beta_real.arg("beta"),
            {sizeof(cl_mem), &c, "C"},
            {sizeof CO, &CO, "c_offset"},
            {sizeof LDC, &LDC, "ldc"}});
  // Work-groups of 64 work-items (fewer where the kernel takes fewer): a
  // row of C's columns, as many as the next power of two above N holds,
  // and as many rows as fill the rest (one column, the axpy family's
  // product as its transpose: 64 rows); C rounded up to whole groups (the
  // kernel skips what lies past C). A driver left to choose divides N and
  // M itself, and for primes (127 x 8191) that is one work-item a group,
  // as matmul_splitk_sum found.
  const std::size_t most = work_group_at_most(kernel, kSumPartsGroup);
  std::size_t across = 1;
  while (across < n && across < most) across *= 2;
  across = std::min(across, most);
  const std::size_t down = std::max<std::size_t>(1, most / across);
  const std::size_t global[2] = {(n + across - 1) / across * across,
                                 (m + down - 1) / down * down};
  const std::size_t local[2] = {across, down};
  cl_event e = nullptr;
  if (const cl_int err = clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, local,
                                                static_cast<cl_uint>(wait.size()),
                                                wait.empty() ? nullptr : wait.data(), &e)) {
    check_cl(err, "clEnqueueNDRangeKernel(gemm_sum_parts)");
  }
  return e;
}

const Family& gemm_transpose_family() {
  static const Family f(kernels::gemm_transpose());
  return f;
}

std::vector<cl_event> launch_transpose(cl_command_queue queue, cl_kernel blocks, cl_kernel edge,
                                       std::size_t rows, std::size_t cols, cl_mem x,
                                       std::size_t offset, std::size_t ld, std::size_t stride,
                                       cl_mem batch_offsets, bool per_batch, int which, cl_mem t,
                                       std::size_t t_offset, std::size_t t_ld, std::size_t batch,
                                       const std::vector<cl_event>& wait) {
  const cl_int R = cl_int(rows), C = cl_int(cols), LD = cl_int(ld), PB = per_batch ? 1 : 0,
               W = which, TLD = cl_int(t_ld);
  const cl_long O = cl_long(offset), S = cl_long(stride), TO = cl_long(t_offset);
  const std::vector<KernelArg> args{{sizeof R, &R, "rows"},
                              {sizeof C, &C, "cols"},
                              {sizeof(cl_mem), &x, "X"},
                              {sizeof O, &O, "offset"},
                              {sizeof LD, &LD, "ld"},
                              {sizeof S, &S, "stride"},
                              {sizeof(cl_mem), &batch_offsets, "batch_offsets"},
                              {sizeof PB, &PB, "per_batch"},
                              {sizeof W, &W, "which"},
                              {sizeof(cl_mem), &t, "T"},
                              {sizeof TO, &TO, "t_offset"},
                              {sizeof TLD, &TLD, "t_ld"}};
  // Dimension 0 along X's columns, a work-item per block (the kernel's
  // own); the work-group is the driver's (kernels/gemm_transpose.cl).
  constexpr std::size_t block_rows = GEMM_TRANSPOSE_BLOCK_ROWS;
  constexpr std::size_t block_cols = GEMM_TRANSPOSE_BLOCK_COLS;
  const std::size_t whole_rows = rows / block_rows, whole_cols = cols / block_cols;
  std::vector<cl_event> done;
  auto enqueue = [&](cl_kernel kernel, const char* name, const std::size_t(&global)[3]) {
    set_kernel_args(kernel, name, args);
    cl_event e = nullptr;
    if (const cl_int err = clEnqueueNDRangeKernel(queue, kernel, 3, nullptr, global, nullptr,
                                                  static_cast<cl_uint>(wait.size()),
                                                  wait.empty() ? nullptr : wait.data(), &e)) {
      check_cl(err, std::string("clEnqueueNDRangeKernel(") + name + ")");
    }
    done.push_back(e);
  };
  try {
    if (whole_rows > 0 && whole_cols > 0) {
      enqueue(blocks, "gemm_transpose", {whole_cols, whole_rows, batch});
    }
    if (whole_rows * block_rows < rows || whole_cols * block_cols < cols) {
      enqueue(edge, "gemm_transpose_edge", {std::max(rows, cols), 1, batch});
    }
  } catch (...) {
    for (cl_event e : done) clReleaseEvent(e);
    throw;
  }
  return done;
}

std::size_t rows_tile_width(const Variant& v, int bits) {
  return std::size_t(v.param("NV")) * (bits == 64 ? 8 : 16);
}

RowsGrid rows_grid(std::size_t m, std::size_t n, std::size_t batch, std::size_t units,
                   std::size_t tile_width, std::size_t stripe_most) {
  const auto up = [](std::size_t a, std::size_t b) {
    return (a + b - 1) / std::max<std::size_t>(1, b);
  };
  const std::size_t wanted = kRowsItemsPerUnit * std::max<std::size_t>(1, units);
  const std::size_t most_groups = std::max<std::size_t>(1, m / kRowsLeastGroupRows);
  std::size_t groups = std::clamp<std::size_t>(up(m, kRowsGroupRows), 1, most_groups);
  const std::size_t tiles = std::max<std::size_t>(1, up(n, tile_width));
  const std::size_t stripes = std::clamp<std::size_t>(up(wanted, groups * batch),
                                                      std::min(tiles, up(n, stripe_most)), tiles);
  if (stripes * groups * batch < wanted) {
    groups = std::clamp<std::size_t>(up(wanted, stripes * batch), groups, most_groups);
  }
  return {stripes, groups};
}

cl_event launch_gemm(cl_command_queue queue, cl_kernel kernel, const Variant& v, int bits,
                     const GemmLaunch& l, const std::vector<cl_event>& wait, bool event) {
  const cl_int M = static_cast<cl_int>(l.m), N = static_cast<cl_int>(l.n),
               K = static_cast<cl_int>(l.k), K0 = static_cast<cl_int>(l.k_begin),
               ACC = l.accumulate ? 1 : 0, LDA = static_cast<cl_int>(l.a_ld),
               LDB = static_cast<cl_int>(l.b_ld), LDC = static_cast<cl_int>(l.c_ld),
               TA = l.a_trans ? 1 : 0, TB = l.b_trans ? 1 : 0, PB = l.per_batch ? 1 : 0;
  const cl_long AO = static_cast<cl_long>(l.a_offset), BO = static_cast<cl_long>(l.b_offset),
                CO = static_cast<cl_long>(l.c_offset), AS = static_cast<cl_long>(l.a_stride),
                BS = static_cast<cl_long>(l.b_stride), CS = static_cast<cl_long>(l.c_stride);
  const Real alpha(l.alpha, bits), beta(l.beta, bits);
  const std::vector<KernelArg> args{{sizeof M, &M, "M"},
                              {sizeof N, &N, "N"},
                              {sizeof K, &K, "K"},
                              {sizeof K0, &K0, "k_begin"},
                              {sizeof ACC, &ACC, "accumulate"},
                              alpha.arg("alpha"),
                              beta.arg("beta"),
                              {sizeof(cl_mem), &l.a, "A"},
                              {sizeof AO, &AO, "a_offset"},
                              {sizeof LDA, &LDA, "lda"},
                              {sizeof TA, &TA, "a_trans"},
                              {sizeof AS, &AS, "a_stride"},
                              {sizeof(cl_mem), &l.b, "B"},
                              {sizeof BO, &BO, "b_offset"},
                              {sizeof LDB, &LDB, "ldb"},
                              {sizeof TB, &TB, "b_trans"},
                              {sizeof BS, &BS, "b_stride"},
                              {sizeof(cl_mem), &l.c, "C"},
                              {sizeof CO, &CO, "c_offset"},
                              {sizeof LDC, &LDC, "ldc"},
                              {sizeof CS, &CS, "c_stride"},
                              {sizeof(cl_mem), &l.batch_offsets, "batch_offsets"},
                              {sizeof(cl_mem), &l.batch_scalars, "batch_scalars"},
                              {sizeof PB, &PB, "per_batch"}};
  set_kernel_args(kernel, v.name, args);
  // One NDIMC x MDIMC work-group per NWG x MWG tile of C, per product; the
  // rows family with op(B) = B^T a work-item per share of C (rows_grid).
  const Tile t = tile_of(v);
  std::size_t global[3] = {(l.n + t.nwg - 1) / t.nwg * t.ndimc, (l.m + t.mwg - 1) / t.mwg * t.mdimc,
                           l.batch};
  const bool rows = has_param(v, "NV");
  if (l.b_trans && rows) {
    const RowsGrid g = rows_grid(l.m, l.n, l.batch, l.units, rows_tile_width(v, bits), t.nwg);
    global[0] = g.stripes, global[1] = g.groups;
  }
  // The dot family takes a product of fewer rows than columns as its
  // transpose: its rows of work-items along N, its passes along M.
  if (l.m < l.n && is_dot(v)) {
    global[0] = (l.m + t.nwg - 1) / t.nwg * t.ndimc;
    global[1] = (l.n + t.mwg - 1) / t.mwg * t.mdimc;
  }
  // The axpy family's groups lie along C's long side (N, or M where it
  // takes the product as its transpose), one group of rows: each walks all
  // of them, a pass at a time.
  if (is_axpy(v)) {
    global[0] = axpy_groups(t, l.m, l.n) * t.ndimc;
    global[1] = t.mdimc;
  }
  const std::size_t local[3] = {t.ndimc, t.mdimc, 1};
  cl_event done = nullptr;
  // (The message is built only where it is thrown: this runs every call.)
  if (const cl_int err = clEnqueueNDRangeKernel(
          queue, kernel, 3, nullptr, global, local, static_cast<cl_uint>(wait.size()),
          wait.empty() ? nullptr : wait.data(), event ? &done : nullptr)) {
    check_cl(err, "clEnqueueNDRangeKernel(" + v.name + ", " + std::to_string(t.ndimc) + "x" +
                      std::to_string(t.mdimc) + " work-groups, " + std::to_string(l.batch) +
                      (l.batch == 1 ? " product)" : " products)"));
  }
  return done;
}

double tiles_share_of_c(const Variant& variant, std::size_t m, std::size_t n) {
  const std::size_t mwg = std::size_t(variant.param("MWG"));
  const std::size_t nwg = std::size_t(variant.param("NWG"));
  return double(m) * double(n) /
         (double((m + mwg - 1) / mwg * mwg) * double((n + nwg - 1) / nwg * nwg));
}

double element(const std::vector<unsigned char>& bytes, int bits, std::size_t i) {
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
  cl_half h;
  std::memcpy(&h, &bytes[i * 2], 2);
  return half_to_float(h);
}

void set_element(std::vector<unsigned char>& bytes, int bits, std::size_t i, double x) {
  if (bits == 64) {
    std::memcpy(&bytes[i * 8], &x, 8);
  } else if (bits == 32) {
    const float f = float(x);
    std::memcpy(&bytes[i * 4], &f, 4);
  } else {
    const cl_half h = float_to_half(float(x));
    std::memcpy(&bytes[i * 2], &h, 2);
  }
}

float half_to_float(cl_half h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: mant * 2^-24
    const float f = std::ldexp(static_cast<float>(mant), -24);
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

cl_half float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (kept quiet)
    return static_cast<cl_half>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<cl_half>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half: a subnormal or 0
    const float scaled = std::fabs(f) * 16777216.0f;  // in units of 2^-24, exact
    const float r = std::nearbyint(scaled);           // to nearest even
    return static_cast<cl_half>(sign | static_cast<std::uint16_t>(r));
  }
  // Normal: drop 13 bits of mantissa, rounding to nearest even.
  const std::uint32_t rebased = abs - (112u << 23);
  const std::uint32_t keep = rebased >> 13, rest = rebased & 0x1fffu;
  std::uint32_t h = keep;
  if (rest > 0x1000u || (rest == 0x1000u && (keep & 1u))) ++h;
  return static_cast<cl_half>(sign | h);
}

}  // namespace fatcl::detail
