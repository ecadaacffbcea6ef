// The bundled SGEMM families' descriptions on synthetic devices: how they
// rank their variants (no OpenCL needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>

#include "fatcl/gemm.hpp"
#include "fatcl/matmul.hpp"
#include "fatcl/online.hpp"
#include "fatcl/store.hpp"
#include "synthetic_device.hpp"

namespace fatcl {
namespace {

using test::device;

TEST(MatmulFamilies, BlockedRankingFollowsFusedMultiplyAdd) {
  const Family& blocked = matmul_family(MatmulKernel::Blocked);
  DeviceCaps cpu = device(1024, 4096, 3, 0, "");
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  auto fma_of = [](const Candidate& c) {
    for (const auto& [k, v] : c.variant->params) {
      if (k == "FMA") return v;
    }
    return -1LL;
  };
  for (bool fused : {true, false}) {
    SCOPED_TRACE(fused ? "fused" : "not fused");
    cpu.fused_multiply_add = fused;
    const Plan p = plan(blocked.manifest(), cpu, {}, blocked.description().ranking);
    ASSERT_FALSE(p.chain.empty());
    EXPECT_EQ(p.chain.front().variant->name,
              std::string("matmul_blocked_MWG32_NWG64_KWG8_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI8_"
                          "PF0_FMA") +
                  (fused ? "1" : "0") + "_DB0_VWA1");
    if (!fused) {
      bool seen_fma = false;
      for (const Candidate& c : p.chain) {
        if (fma_of(c) == 1) seen_fma = true;
        EXPECT_FALSE(seen_fma && fma_of(c) == 0) << c.variant->name << " after an fma() variant";
      }
    }
  }
  DeviceCaps gpu = device(48, 1024, 3, 0, "");
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  gpu.fused_multiply_add = true;
  const Plan p = plan(blocked.manifest(), gpu, {}, blocked.description().ranking);
  ASSERT_FALSE(p.chain.empty());
  EXPECT_EQ(p.chain.front().variant->name,
            "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_"
            "DB0_VWA1");
}

// The shipped entries name the bundled modules as they are: a kernel or
// toolchain change that rebuilds them must come with new measurements
// (tools/ship-tuning.py), else the loader would pass the entries over.
void expect_shipped_entries_match(const std::string& path,
                                  const std::vector<const Family*>& families) {
  SCOPED_TRACE(path);
  // The file read whole, as a store document: every entry, each family's own.
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::vector<TuningEntry> all = parse_tuning_entries(text, "shipped.json");
  ASSERT_FALSE(all.empty());
  std::map<std::pair<std::string, std::string>, std::size_t> per_family_and_platform;
  for (const TuningEntry& e : all) ++per_family_and_platform[{e.family, e.platform}];
  std::size_t matched = 0;
  for (const Family* family : families) {
    const Manifest& manifest = family->manifest();
    for (const auto& [key, count] : per_family_and_platform) {
      if (key.first != manifest.family) continue;
      // What a device of that platform reads, a line at a time, is all of them.
      DeviceCaps caps;
      caps.platform_name = key.second;
      const std::vector<TuningEntry>& shipped = shipped_tuning_for(*family, caps);
      EXPECT_EQ(shipped.size(), count) << key.first << " on " << key.second;
      matched += count;
      for (const TuningEntry& e : shipped) {
        SCOPED_TRACE(e.describe());
        EXPECT_EQ(e.origin, "shipped with fatcl");
        EXPECT_EQ(e.family, manifest.family);
        EXPECT_EQ(e.platform, key.second);
        ASSERT_FALSE(e.ranking.empty());
        for (const TunedVariant& t : e.ranking) {
          bool found = false;
          for (const Variant& v : manifest.variants) {
            if (v.name == t.variant) {
              found = true;
              EXPECT_EQ(tier_sha256(manifest, v, t.tier), t.sha256) << t.variant;
            }
          }
          EXPECT_TRUE(found) << t.variant;
        }
      }
    }
  }
  EXPECT_EQ(matched, all.size()) << "entries of a family not bundled";
}

TEST(MatmulFamilies, ShippedEntriesMatchTheBundledModules) {
  std::vector<const Family*> families;
  for (MatmulKernel k : matmul_kernels()) families.push_back(&matmul_family(k));
  expect_shipped_entries_match(FATCL_SOURCE_DIR "/matmul/tuning/shipped.json", families);
  // A platform fatcl never measured reads none.
  DeviceCaps unknown;
  unknown.platform_name = "a platform nobody measured";
  EXPECT_TRUE(shipped_tuning_for(matmul_family(MatmulKernel::Blocked), unknown).empty());
}

// The GEMM entry points' entries likewise (gemm/tuning/shipped.json):
// kernels/gemm_blocked.cl edited, even a comment, voids its source tier.
TEST(MatmulFamilies, GemmShippedEntriesMatchTheBundledModules) {
  expect_shipped_entries_match(FATCL_SOURCE_DIR "/gemm/tuning/shipped.json",
                               {&gemm_family(16), &gemm_family(32), &gemm_family(64)});
}

// The blocked family's defaults are its grid's first points of each kind
// (matmul/CMakeLists.txt), named in the ranking's rule.
TEST(MatmulFamilies, BlockedDefaultsAreReadFromTheGrid) {
  const Family& blocked = matmul_family(MatmulKernel::Blocked);
  const std::string& rule = blocked.description().ranking.rule;
  EXPECT_NE(rule.find("GPU: " + blocked.manifest().variants.front().name), std::string::npos)
      << rule;
  EXPECT_NE(rule.find("CPU: matmul_blocked_MWG32_NWG64_KWG8_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI8_"
                      "PF0_FMA1_DB0_VWA1"),
            std::string::npos)
      << rule;
}

// Launch geometry follows the family, not a parameter's presence.
TEST(MatmulFamilies, GeometryFollowsTheFamily) {
  const Family& blocked = matmul_family(MatmulKernel::Blocked);
  const Variant& v = blocked.manifest().variants.front();  // 128x128 tiles, 16x16 work-items
  const LaunchGeometry g = matmul_geometry(MatmulKernel::Blocked, v, 300, 129);
  EXPECT_EQ(g.local, (std::array<std::size_t, 2>{16, 16}));
  EXPECT_EQ(g.global, (std::array<std::size_t, 2>{2 * 16, 3 * 16}));
  const Variant& t16 = matmul_family(MatmulKernel::Tiled).manifest().variant("matmul_tiled_TILE16");
  const LaunchGeometry t = matmul_geometry(MatmulKernel::Tiled, t16, 300, 129);
  EXPECT_EQ(t.local, (std::array<std::size_t, 2>{16, 16}));
  EXPECT_EQ(t.global, (std::array<std::size_t, 2>{144, 304}));
  const Variant& naive = matmul_family(MatmulKernel::Naive).manifest().variants.front();
  EXPECT_EQ(matmul_geometry(MatmulKernel::Naive, naive, 5, 7, {4, 2}).global,
            (std::array<std::size_t, 2>{8, 6}));
  EXPECT_THROW(matmul_geometry(MatmulKernel::Blocked, t16, 1, 1), Error);
  EXPECT_THROW(matmul_geometry(MatmulKernel::Auto, t16, 1, 1), Error);
}

// Which family runs a shape: few rows up to 16, few columns up to 16 on a
// CPU and 4 on a GPU, the general family elsewhere.
TEST(MatmulFamilies, SkinnyShapesGoToTheSkinnyFamilies) {
  const MatmulKernel b = MatmulKernel::Blocked;
  EXPECT_EQ(matmul_family_for(1, 8192, b, true), MatmulKernel::FewRows);
  EXPECT_EQ(matmul_family_for(16, 16, b, false), MatmulKernel::FewRows);
  EXPECT_EQ(matmul_family_for(17, 8192, b, true), b);
  EXPECT_EQ(matmul_family_for(8192, 16, b, false), MatmulKernel::FewCols);
  EXPECT_EQ(matmul_family_for(8192, 16, b, true), b);
  EXPECT_EQ(matmul_family_for(8192, 4, b, true), MatmulKernel::FewCols);
  EXPECT_EQ(matmul_family_for(8192, 4, MatmulKernel::Tiled, true), MatmulKernel::FewCols);
  EXPECT_EQ(matmul_family_for(300, 300, MatmulKernel::Tiled, true), MatmulKernel::Tiled);
}

// The skinny families' geometry and K splits: enough work-groups for the
// device, each part at least 16 steps of the walk through K, none on a CPU
// the shape already fills.
TEST(MatmulFamilies, SkinnyGeometryAndKSplits) {
  const Variant& rows =
      matmul_family(MatmulKernel::FewRows).manifest().variant("matmul_fewrows_WGN32_WGK8_VW4_MS4");
  const LaunchGeometry g = matmul_geometry(MatmulKernel::FewRows, rows, 1, 1000, {16, 16}, 3);
  EXPECT_EQ(g.local, (std::array<std::size_t, 2>{32, 8}));
  EXPECT_EQ(g.global, (std::array<std::size_t, 2>{8 * 32, 3 * 8}));
  const Variant& cols =
      matmul_family(MatmulKernel::FewCols).manifest().variant("matmul_fewcols_WG32_RG8_VW1_NS4");
  const LaunchGeometry c = matmul_geometry(MatmulKernel::FewCols, cols, 100, 3, {16, 16}, 5);
  EXPECT_EQ(c.local, (std::array<std::size_t, 2>{32, 8}));
  EXPECT_EQ(c.global, (std::array<std::size_t, 2>{5 * 32, 104}));
  EXPECT_THROW(matmul_geometry(MatmulKernel::FewRows, rows, 1, 1, {16, 16}, 0), Error);

  DeviceCaps gpu = device(48, 1024, 3, 0, "");
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  gpu.compute_units = 132;
  // 64 work-groups across N = 8192; 8 x 132 wanted; at most 8192 / (16 x 4 x 8) parts.
  EXPECT_EQ(matmul_k_splits(MatmulKernel::FewRows, rows, 1, 8192, 8192, gpu), 16u);
  EXPECT_EQ(matmul_k_splits(MatmulKernel::FewRows, rows, 1, 8192, 100, gpu), 1u);
  DeviceCaps cpu = gpu;
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  cpu.compute_units = 2;
  EXPECT_EQ(matmul_k_splits(MatmulKernel::FewRows, rows, 1, 8192, 8192, cpu), 1u);
  // Blocked: 127 x 8191 in 128 x 128 tiles is 64 work-groups on 132 units,
  // so as many parts as 2 x 132 holds; 8192 x 256 is 128 work-groups, 2
  // parts; a product that fills the units, none; and never parts of under
  // 16 KWG slices.
  const Variant& blocked = matmul_family(MatmulKernel::Blocked)
                               .manifest()
                               .variant(
                                   "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_"
                                   "VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1");
  EXPECT_EQ(matmul_k_splits(MatmulKernel::Blocked, blocked, 127, 8191, 4099, gpu), 4u);
  EXPECT_EQ(matmul_k_splits(MatmulKernel::Blocked, blocked, 8192, 256, 8192, gpu), 2u);
  EXPECT_EQ(matmul_k_splits(MatmulKernel::Blocked, blocked, 2048, 2048, 8192, gpu), 1u);
  EXPECT_EQ(matmul_k_splits(MatmulKernel::Blocked, blocked, 127, 8191, 500, gpu), 1u);
  EXPECT_EQ(matmul_k_splits(MatmulKernel::Blocked, blocked, 127, 8191, 1100, gpu), 4u);
  EXPECT_EQ(matmul_k_splits(MatmulKernel::Blocked, blocked, 1024, 1024, 1024, cpu), 1u);
  const LaunchGeometry d = matmul_geometry(MatmulKernel::Blocked, blocked, 127, 8191, {16, 16}, 4);
  EXPECT_EQ(d.global, (std::array<std::size_t, 2>{64 * 16, 16}));
  EXPECT_EQ(d.depth, 4u);
  EXPECT_EQ(matmul_geometry(MatmulKernel::Blocked, blocked, 127, 8191).depth, 1u);
  EXPECT_EQ(matmul_geometry(MatmulKernel::FewRows, rows, 1, 1000, {16, 16}, 3).depth, 1u);
}

// Two CPU points of the blocked family, 32 x 64: one reads B in place, one
// stages it; and a CPU for them.
struct CpuPoints {
  const Manifest& m = matmul_family(MatmulKernel::Blocked).manifest();
  const Variant& in_place = m.variant(
      "matmul_blocked_MWG32_NWG64_KWG8_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1");
  const Variant& staged = m.variant(
      "matmul_blocked_MWG32_NWG64_KWG32_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB1_KWI8_PF0_FMA1_DB0_VWA1");
  DeviceCaps cpu = [] {
    DeviceCaps c = device(48, 1024, 3, 0, "");
    c.device_type = CL_DEVICE_TYPE_CPU;
    return c;
  }();
};

// A CPU point that reads B in place gets B copied with rows one cache line
// longer where B's rows lie a multiple of 4 KiB apart; a point that stages
// B, another family, a GPU and other strides read B where it lies.
TEST(MatmulFamilies, BIsCopiedWhereItsRowsWouldAliasInTheCaches) {
  const CpuPoints points;
  const Variant &in_place = points.in_place, &staged = points.staged;
  DeviceCaps cpu = points.cpu;
  EXPECT_EQ(matmul_padded_ldb(MatmulKernel::Blocked, in_place, cpu, 1024), 1040u);
  EXPECT_EQ(matmul_padded_ldb(MatmulKernel::Blocked, in_place, cpu, 3072), 3088u);
  EXPECT_EQ(matmul_padded_ldb(MatmulKernel::Blocked, in_place, cpu, 1536), 0u);
  EXPECT_EQ(matmul_padded_ldb(MatmulKernel::Blocked, in_place, cpu, 1000), 0u);
  EXPECT_EQ(matmul_padded_ldb(MatmulKernel::Blocked, staged, cpu, 2048), 0u);
  const Variant& tiled = matmul_family(MatmulKernel::Tiled).manifest().variants.front();
  EXPECT_EQ(matmul_padded_ldb(MatmulKernel::Tiled, tiled, cpu, 2048), 0u);
  DeviceCaps gpu = cpu;
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  EXPECT_EQ(matmul_padded_ldb(MatmulKernel::Blocked, in_place, gpu, 2048), 0u);
}

// A CPU point that reads B in place gets B packed into panels NWG columns
// wide where B's rows lie a page (1024 floats) apart or more, K is at least
// kMatmulPanelMinK and every compute unit has kMatmulPanelTilesPerUnit rows
// of tiles per panel; a point that stages B, a GPU and smaller products read
// B where it lies.
TEST(MatmulFamilies, BIsPackedIntoPanelsWhereItsRowsLieAPageApart) {
  const CpuPoints points;
  const Variant &in_place = points.in_place, &staged = points.staged;
  DeviceCaps cpu = points.cpu;
  cpu.compute_units = 2;
  const auto width = [&](const Variant& v, std::size_t m, std::size_t n, std::size_t k) {
    return matmul_b_panel_width(MatmulKernel::Blocked, v, cpu, m, n, k);
  };
  EXPECT_EQ(width(in_place, 2048, 2048, 2048), 64u);
  EXPECT_EQ(width(in_place, 256, 1024, 512), 64u);
  EXPECT_EQ(width(in_place, 225, 1024, 512), 64u);   // 8 rows of tiles, the last partial
  EXPECT_EQ(width(in_place, 224, 1024, 512), 0u);    // 7 rows of tiles for 2 units
  EXPECT_EQ(width(in_place, 2048, 1023, 2048), 0u);  // rows of B less than a page apart
  EXPECT_EQ(width(in_place, 2048, 2048, 511), 0u);   // K too short to pay for the copies
  EXPECT_EQ(width(staged, 2048, 2048, 2048), 0u);
  cpu.compute_units = 64;
  EXPECT_EQ(width(in_place, 2048, 2048, 2048), 0u);  // 64 rows of tiles for 64 units
  DeviceCaps gpu = cpu;
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  EXPECT_EQ(matmul_b_panel_width(MatmulKernel::Blocked, in_place, gpu, 8192, 8192, 8192), 0u);
  EXPECT_EQ(matmul_panel_launches(2048, 2048, 64, 1024), 32u + 32 * 2);
  EXPECT_EQ(matmul_panel_launches(2050, 1000, 64, 1024), 31u + 32);
}

// Before any measurement a skinny family ranks by its model of the passes
// over the large operand: one column, the NS = 1 point of the device's kind;
// four columns, an NS = 4 one; sixteen on a CPU, the NS = 16 one.
TEST(MatmulFamilies, SkinnyModelPicksTheWidthThatFitsTheShape) {
  const Family& f = matmul_family(MatmulKernel::FewCols);
  const Ranking& r = f.description().ranking;
  ASSERT_TRUE(r.shape_score);
  auto best = [&](const DeviceCaps& caps, std::size_t n) {
    const Variant* top = nullptr;
    double score = 0;
    for (const Variant& v : f.manifest().variants) {
      const double s = r.shape_score(v, caps, {4096, n, 4096}) * 1e5 + r.score(v, caps);
      if (!top || s > score) top = &v, score = s;
    }
    return top->name;
  };
  DeviceCaps gpu = device(48, 1024, 3, 0, "");
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  DeviceCaps cpu = gpu;
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  EXPECT_EQ(best(gpu, 1), "matmul_fewcols_WG128_RG1_VW4_NS1");
  EXPECT_EQ(best(gpu, 4), "matmul_fewcols_WG32_RG8_VW1_NS4");
  EXPECT_EQ(best(cpu, 1), "matmul_fewcols_WG1_RG16_VW16_NS1");
  EXPECT_EQ(best(cpu, 3), "matmul_fewcols_WG1_RG16_VW16_NS4");
  EXPECT_EQ(best(cpu, 16), "matmul_fewcols_WG1_RG64_VW8_NS16");
  EXPECT_NE(r.shape_rule.find("fewest passes"), std::string::npos);
}

// A tuning entry carried to another shape by the blocked family's model:
// at 127x8191x200, 127 rows in 128-row tiles give 64 work-groups for 132
// compute units and K is too short to split over them, so a 64 x 64 tile
// measured 16 % slower at 4096^3 leads; at 127x8191x4099 K is split into 4
// parts, the 128 x 128 tiles fill the device and the measured order stands,
// as it does at the entry's own sizes.
TEST(MatmulFamilies, BlockedModelCarriesAnEntryToAnotherShape) {
  const Family& blocked = matmul_family(MatmulKernel::Blocked);
  const Manifest& m = blocked.manifest();
  const char* big =
      "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  const char* small =
      "matmul_blocked_MWG64_NWG64_KWG16_MDIMC8_NDIMC8_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  TuningEntry e;
  e.family = m.family;
  e.problem = {4096, 4096, 4096};
  for (const auto& [name, gflops] : {std::pair{big, 41700.0}, std::pair{small, 35000.0}}) {
    e.ranking.push_back({name, tier_sha256(m, m.variant(name), Tier::Ptx), Tier::Ptx, gflops});
  }
  DeviceCaps gpu = device(48, 1024, 3, 0, "");
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  gpu.compute_units = 132;
  std::string why;
  const TuningEntry carried = carry_tuning(e, blocked, gpu, {127, 8191, 200}, &why);
  ASSERT_EQ(carried.ranking.size(), 2u);
  EXPECT_EQ(carried.ranking.front().variant, small) << why;
  // The rates are the model's predictions here, as the explanation gives them.
  EXPECT_NEAR(carried.ranking.back().gflops, 19286, 1);
  EXPECT_GT(carried.ranking.front().gflops, carried.ranking.back().gflops);
  EXPECT_NE(why.find("carries the entry to 127x8191x200"), std::string::npos) << why;
  EXPECT_NE(why.find(std::string(big) + " [ptx] 41700 x 0.46 / 1.00 = 19286"), std::string::npos)
      << why;
  EXPECT_EQ(carry_tuning(e, blocked, gpu, {127, 8191, 4099}, &why).ranking.front().variant, big);
  EXPECT_EQ(why, "");
  EXPECT_EQ(carry_tuning(e, blocked, gpu, {4096, 4096, 4096}, &why).ranking.front().variant, big);
  EXPECT_EQ(why, "");
  // At 8192^3 both fill the device without padding: the measured order.
  EXPECT_EQ(carry_tuning(e, blocked, gpu, {8192, 8192, 8192}, &why).ranking.front().variant, big);

  // Measured where 127 rows fit one 128-row tile, carried to 130 rows: a
  // 128-row tile computes 256 of them, a 64-row one 192; the point that
  // reads A from global memory ran guarded there, which on a GPU costs it
  // a fifth (the H200's figures, 2026-12-02), not the CPU's three quarters.
  const char* unstaged =
      "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA0_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  TuningEntry thin = e;
  thin.problem = {127, 8191, 4099};
  thin.ranking.clear();
  for (const auto& [name, gflops] :
       {std::pair{big, 32800.0}, std::pair{small, 27900.0}, std::pair{unstaged, 13300.0}}) {
    thin.ranking.push_back({name, tier_sha256(m, m.variant(name), Tier::Ptx), Tier::Ptx, gflops});
  }
  const TuningEntry at130 = carry_tuning(thin, blocked, gpu, {130, 8191, 4099}, &why);
  ASSERT_EQ(at130.ranking.size(), 3u);
  EXPECT_EQ(at130.ranking[0].variant, small) << why;
  EXPECT_EQ(at130.ranking[1].variant, big) << why;
  EXPECT_EQ(at130.ranking[2].variant, unstaged) << why;

  // A CPU point that reads its operands from global memory runs a partial
  // last K slice guarded: at K = 300 the KWG16 point's 19th slice, not the
  // KWG4 point's (75 whole slices), so the one measured 8 % faster at
  // 1024^3 comes second (PoCL's figures on a Zen 4, 2026-12-02).
  const char* k16 =
      "matmul_blocked_MWG32_NWG64_KWG16_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI4_PF0_FMA1_DB0_VWA1";
  const char* k4 =
      "matmul_blocked_MWG32_NWG64_KWG4_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI4_PF0_FMA1_DB0_VWA1";
  TuningEntry cpu_entry = e;
  cpu_entry.problem = {1024, 1024, 1024};
  cpu_entry.ranking.clear();
  for (const auto& [name, gflops] : {std::pair{k16, 139.6}, std::pair{k4, 128.9}}) {
    cpu_entry.ranking.push_back(
        {name, tier_sha256(m, m.variant(name), Tier::Source), Tier::Source, gflops});
  }
  DeviceCaps cpu = device(1024, 4096, 3, 0, "");
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  cpu.compute_units = 2;
  EXPECT_EQ(carry_tuning(cpu_entry, blocked, cpu, {2000, 2000, 300}, &why).ranking.front().variant,
            k4)
      << why;
  EXPECT_EQ(carry_tuning(cpu_entry, blocked, cpu, {2000, 2000, 320}, &why).ranking.front().variant,
            k16)
      << why;
}

// A GPU with the H200's 132 compute units and 48 KiB of local memory.
DeviceCaps gpu_with_132_units() {
  DeviceCaps gpu = device(48, 1024, 3, 0, "");
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  gpu.compute_units = 132;
  return gpu;
}

// Two cores of an AVX-512 CPU that fuses multiply-adds, on one synthetic
// platform: two makers' CPUs similar enough to share their entries.
DeviceCaps avx512_cpu(const char* name, const char* vendor) {
  DeviceCaps cpu = device(48, 1024, 3, 0, "");
  cpu.platform_name = "synthetic CPU platform";
  cpu.device_name = name;
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  cpu.vendor = vendor;
  cpu.compute_units = 2;
  cpu.isa = "avx512";
  cpu.fused_multiply_add = true;
  return cpu;
}

// An NN entry of the single-precision GEMM family measured on the
// synthetic device, its variants (PTX tier) at these rates.
TuningEntry synthetic_gemm_entry(std::vector<std::size_t> problem,
                                 const std::vector<std::pair<std::string, double>>& ranking) {
  const Manifest& m = gemm_family(32).manifest();
  TuningEntry e;
  e.family = m.family;
  e.platform = "synthetic";
  e.device = "device";
  e.driver = "1";
  e.form = "NN";
  e.problem = std::move(problem);
  for (const auto& [name, gflops] : ranking) {
    e.ranking.push_back({name, tier_sha256(m, m.variant(name), Tier::Ptx), Tier::Ptx, gflops});
  }
  return e;
}

// Learning online tries the leaders of entries measured on similar devices
// only near the problem (each size within 4 times its own): the leader of a
// thin class, the 8 x 128 tile, was a candidate at every size an H100
// learned (2026-12-07) and its warm-up took 3.5 to 5.5 times the choice's
// time on square products.
TEST(MatmulFamilies, OnlineCandidatesTakeLeadersOfEntriesNearTheProblem) {
  const Family& sgemm = gemm_family(32);
  const std::string thin = "sgemm_blocked_PRECISION32_MWG8_NWG128_KWG32_MDIMC2_NDIMC32_VWM4_VWN4_"
                           "SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  const std::string square = "sgemm_blocked_PRECISION32_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_"
                             "VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  const DeviceCaps gpu = gpu_with_132_units();
  auto store = std::make_shared<Store>();
  for (const auto& [problem, leader] :
       {std::pair{std::vector<std::size_t>{8, 8192, 8192, 1}, thin},
        std::pair{std::vector<std::size_t>{2048, 2048, 2048, 1}, square}}) {
    TuningEntry e = measured_entry(gpu, sgemm.manifest().family, "NN", problem, "test");
    const Manifest& m = sgemm.manifest();
    e.ranking.push_back({leader, tier_sha256(m, m.variant(leader), Tier::Ptx), Tier::Ptx, 1000});
    store->put_tuning(e);
  }
  LoadOptions o;
  o.store = store;
  o.form = "NN";
  auto candidates = [&](std::vector<std::size_t> problem) {
    o.problem = std::move(problem);
    const Plan p = ranked_plan(sgemm, gpu, o);
    return online_candidates(sgemm, gpu, o, p.chain.front().variant->name, 4);
  };
  const auto has = [](const std::vector<std::string>& v, const std::string& name) {
    return std::find(v.begin(), v.end(), name) != v.end();
  };
  const std::vector<std::string> at_3000 = candidates({3000, 3000, 3000, 1});
  EXPECT_FALSE(has(at_3000, thin)) << at_3000.size();
  EXPECT_TRUE(has(at_3000, square));
  EXPECT_TRUE(has(candidates({12, 8192, 4096, 1}), thin));
}

// Learning online leaves out what it predicts under a third of the current
// choice's rate: a CPU entry at 1024^3 (the Xeon's, 2026-12-07: the 16 x 32
// point at 198 GFLOP/s, the 24 x 16 one at 131; 150 here) carried to 664 x
// 24 x 325, where the 16 x 32 point has no tile inside C (its guarded path)
// and ran 13 GFLOP/s against 82; and without an entry, the dot family's CPU
// points (K in one work-item) on a GPU, by the family's model alone (one
// took 3.9 times the GPU point's call at 8192 x 1 x 8192 on an H100).
TEST(MatmulFamilies, OnlineCandidatesLeaveOutWhatIsPredictedSlow) {
  const Family& sgemm = gemm_family(32);
  const Manifest& m = sgemm.manifest();
  const std::string narrow = "sgemm_blocked_PRECISION32_MWG16_NWG32_KWG8_MDIMC2_NDIMC2_VWM1_VWN16_"
                             "SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1";
  const std::string t24 = "sgemm_blocked_PRECISION32_MWG24_NWG16_KWG16_MDIMC4_NDIMC1_VWM1_VWN16_"
                          "SA0_SB0_KWI4_PF0_FMA1_DB0_VWA1";
  const DeviceCaps cpu = avx512_cpu("Synthetic Xeon", "GenuineIntel");
  auto store = std::make_shared<Store>();
  TuningEntry e = measured_entry(cpu, m.family, "NN", {1024, 1024, 1024, 1}, "test");
  for (const auto& [name, gflops] : {std::pair{narrow, 150.0}, std::pair{t24, 131.0}}) {
    e.ranking.push_back(
        {name, tier_sha256(m, m.variant(name), Tier::Source), Tier::Source, gflops});
  }
  store->put_tuning(e);
  LoadOptions o;
  o.store = store;
  o.form = "NN";
  const auto has = [](const std::vector<std::string>& v, const std::string& name) {
    return std::find(v.begin(), v.end(), name) != v.end();
  };
  o.problem = {664, 24, 325, 1};
  const std::vector<std::string> guarded = online_candidates(sgemm, cpu, o, t24, 4);
  EXPECT_FALSE(has(guarded, narrow)) << guarded.size();
  o.problem = {664, 32, 325, 1};
  EXPECT_TRUE(has(online_candidates(sgemm, cpu, o, t24, 4), narrow));

  const Family& dot = gemm_dot_family(32);
  const DeviceCaps gpu = gpu_with_132_units();
  LoadOptions d;
  d.store = std::make_shared<Store>();
  d.form = "NN";
  d.problem = {8192, 1, 8192, 1};
  const Plan p = ranked_plan(dot, gpu, d);
  ASSERT_FALSE(p.chain.empty());
  const std::vector<std::string> on_gpu =
      online_candidates(dot, gpu, d, p.chain.front().variant->name, 4);
  std::size_t cpu_points = 0;
  for (const Variant& v : dot.manifest().variants) {
    if (v.param("WK") > 1) continue;
    ++cpu_points;
    EXPECT_FALSE(has(on_gpu, v.name)) << v.name;
  }
  EXPECT_GT(cpu_points, 0u);
}

// The GEMM families carry an entry to sizes it was not measured at by
// their model (padding to whole tiles, the batch's work-groups over the
// compute units): the H200's entry for 1,000 products of 128^3 (the 64 x 64
// tile ahead, 2026-12-03) gives 1,000 products of 32^3, which fill a
// quarter of each 64 x 64 tile, to the 32 x 32 tile, and stays as it was
// for products the size it was measured at.
TEST(MatmulFamilies, GemmEntriesCarryToOtherSizesByTheModel) {
  const Family& sgemm = gemm_family(32);
  ASSERT_TRUE(sgemm.description().efficiency);
  const std::string t64 = "sgemm_blocked_PRECISION32_MWG64_NWG64_KWG16_MDIMC8_NDIMC8_VWM4_VWN4_"
                          "SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  const std::string t32 = "sgemm_blocked_PRECISION32_MWG32_NWG32_KWG32_MDIMC8_NDIMC8_VWM4_VWN4_"
                          "SA1_SB1_KWI2_PF0_FMA0_DB0_VWA1";
  const TuningEntry e =
      synthetic_gemm_entry({128, 128, 128, 1000}, {{t64, 28865.0}, {t32, 19445.0}});
  const DeviceCaps gpu = gpu_with_132_units();
  std::string why;
  EXPECT_EQ(carry_tuning(e, sgemm, gpu, {32, 32, 32, 1000}, &why).ranking.front().variant, t32)
      << why;
  EXPECT_NE(why.find("carries the entry to"), std::string::npos) << why;
  EXPECT_EQ(carry_tuning(e, sgemm, gpu, {128, 128, 128, 1000}, &why).ranking.front().variant,
            t64);
  // 8 products of 128^3 in 64 x 64 tiles are 32 work-groups for 132 units,
  // in 32 x 32 tiles 128: the smaller tile, whose rate measured there was
  // two thirds, fills four times as much.
  EXPECT_EQ(carry_tuning(e, sgemm, gpu, {128, 128, 128, 8}, &why).ranking.front().variant, t32)
      << why;
}

// A GPU runs a product's work-groups in waves of one a compute unit, and a
// last wave that is partly empty leaves the other units idle: on the H100
// (2026-12-06) at 418 x 8623 x 2774 the 128 x 256 point's 136 work-groups
// (two waves for 132 units) ran 16.2 TFLOP/s, the 64 x 64 point's 945
// (eight) 19.8. The H200's entry at 64 x 8192 x 8192 (K split in 16 parts:
// 512 and 2048 work-groups) carries the 64 x 64 point there; counting the
// 136 work-groups as filling the device, it carried the 128 x 256 one,
// whose tiles pad the 64 rows there to 128 and the 418 here to 512.
TEST(MatmulFamilies, GemmModelCountsAGpusWaves) {
  const Family& sgemm = gemm_family(32);
  const Manifest& m = sgemm.manifest();
  const auto& efficiency = sgemm.description().efficiency;
  ASSERT_TRUE(efficiency);
  const std::string wide = "sgemm_blocked_PRECISION32_MWG128_NWG256_KWG16_MDIMC16_NDIMC16_VWM4_"
                           "VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  const std::string t64 = "sgemm_blocked_PRECISION32_MWG64_NWG64_KWG16_MDIMC8_NDIMC8_VWM4_VWN4_"
                          "SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  const DeviceCaps gpu = gpu_with_132_units();
  EXPECT_DOUBLE_EQ(efficiency(m.variant(wide), gpu, {512, 8704, 2784, 1}), 136.0 / 264);
  EXPECT_DOUBLE_EQ(efficiency(m.variant(wide), gpu, {512, 8448, 2784, 1}), 1.0);
  // A CPU counts its units filled by one work-group each.
  const DeviceCaps cpu = avx512_cpu("Synthetic Xeon", "GenuineIntel");
  EXPECT_DOUBLE_EQ(efficiency(m.variant(wide), cpu, {512, 8704, 2784, 1}), 1.0);
  const TuningEntry e =
      synthetic_gemm_entry({64, 8192, 8192, 1}, {{t64, 30069.0}, {wide, 18182.0}});
  std::string why;
  EXPECT_EQ(carry_tuning(e, sgemm, gpu, {418, 8623, 2774, 1}, &why).ranking.front().variant, t64)
      << why;
  // Where its tiles fill two whole waves the wide point is carried ahead.
  EXPECT_EQ(carry_tuning(e, sgemm, gpu, {512, 8448, 2774, 1}, &why).ranking.front().variant, wide)
      << why;
}

// A CPU point that reads B in place (SB = 0) whose tile is wider than C has
// no tile inside it, so every slice takes the kernel's guarded path: the
// model counts that at a sixth of the speed on a CPU (a quarter on a GPU). On the Xeon of 2026-12-06
// the 32 x 64 point ran 122 x 60 x 352 at 19 GFLOP/s, the 16 x 32 one at
// 146, though their tiles pad C alike; an entry measured at 1024^3 with the
// wide point ahead now carries the narrow one there, and the wide one where
// C holds its tiles (122 rows, 64 columns or more).
TEST(MatmulFamilies, GemmModelCountsTheGuardedPath) {
  const Family& sgemm = gemm_family(32);
  const Manifest& m = sgemm.manifest();
  const auto& efficiency = sgemm.description().efficiency;
  ASSERT_TRUE(efficiency);
  const std::string wide = "sgemm_blocked_PRECISION32_MWG32_NWG64_KWG8_MDIMC4_NDIMC4_VWM1_VWN16_"
                           "SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1";
  const std::string narrow = "sgemm_blocked_PRECISION32_MWG16_NWG32_KWG8_MDIMC2_NDIMC2_VWM1_VWN16_"
                             "SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1";
  const DeviceCaps cpu = avx512_cpu("Synthetic Xeon", "GenuineIntel");
  // The guarded path at a sixth of the other on a CPU, a quarter on a GPU.
  EXPECT_DOUBLE_EQ(efficiency(m.variant(wide), cpu, {122, 60, 352, 1}),
                   efficiency(m.variant(narrow), cpu, {122, 60, 352, 1}) / 6);
  const DeviceCaps gpu = gpu_with_132_units();
  EXPECT_DOUBLE_EQ(efficiency(m.variant(wide), gpu, {122, 60, 352, 1}) /
                       efficiency(m.variant(wide), gpu, {128, 64, 352, 1}),
                   0.25 * efficiency(m.variant(narrow), gpu, {122, 60, 352, 1}) /
                       efficiency(m.variant(narrow), gpu, {128, 64, 352, 1}));
  EXPECT_DOUBLE_EQ(efficiency(m.variant(wide), cpu, {128, 64, 352, 1}),
                   efficiency(m.variant(narrow), cpu, {128, 64, 352, 1}));
  TuningEntry e;
  e.family = m.family;
  e.platform = cpu.platform_name;
  e.device = cpu.device_name;
  e.driver = cpu.driver_version;
  e.form = "NN";
  e.problem = {1024, 1024, 1024, 1};
  for (const auto& [name, gflops] : {std::pair{wide, 200.0}, std::pair{narrow, 150.0}}) {
    e.ranking.push_back(
        {name, tier_sha256(m, m.variant(name), Tier::Source), Tier::Source, gflops});
  }
  std::string why;
  EXPECT_EQ(carry_tuning(e, sgemm, cpu, {122, 60, 352, 1}, &why).ranking.front().variant, narrow)
      << why;
  EXPECT_EQ(carry_tuning(e, sgemm, cpu, {122, 64, 352, 1}, &why).ranking.front().variant, wide)
      << why;
  // A point that stages B (SB = 1) guards its staging, not its slices.
  const Variant& staged = m.variant(
      "sgemm_blocked_PRECISION32_MWG32_NWG32_KWG16_MDIMC8_NDIMC8_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_"
      "DB0_VWA1");
  EXPECT_DOUBLE_EQ(efficiency(staged, cpu, {64, 16, 32, 1}), 0.5);
  // A last slice that K does not fill is guarded too: under PoCL on the
  // Xeon (2026-12-06) the 32 x 128 point with slices of 64 ran 845 x 128 x
  // 58 (one slice, guarded) at 10.7 GFLOP/s, the 16 x 32 one with slices of
  // 8 (7 whole, 1 guarded) at 47.5.
  const std::string long_slices = "sgemm_blocked_PRECISION32_MWG32_NWG128_KWG64_MDIMC4_NDIMC4_"
                                  "VWM1_VWN16_SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1";
  EXPECT_DOUBLE_EQ(efficiency(m.variant(long_slices), cpu, {845, 128, 58, 1}),
                   58.0 / 64 / 6 * efficiency(m.variant(long_slices), cpu, {845, 128, 64, 1}));
  EXPECT_DOUBLE_EQ(efficiency(m.variant(narrow), cpu, {848, 128, 58, 1}),
                   8.0 / 13 * 58 / 64 * efficiency(m.variant(narrow), cpu, {848, 128, 64, 1}));
  EXPECT_DOUBLE_EQ(efficiency(staged, cpu, {64, 32, 30, 1}), 30.0 / 32);
  TuningEntry slices = e;
  slices.ranking.clear();
  for (const auto& [name, gflops] : {std::pair{long_slices, 200.0}, std::pair{narrow, 150.0}}) {
    slices.ranking.push_back(
        {name, tier_sha256(m, m.variant(name), Tier::Source), Tier::Source, gflops});
  }
  EXPECT_EQ(carry_tuning(slices, sgemm, cpu, {845, 128, 58, 1}, &why).ranking.front().variant,
            narrow)
      << why;
  EXPECT_EQ(carry_tuning(slices, sgemm, cpu, {845, 128, 64, 1}, &why).ranking.front().variant,
            long_slices)
      << why;
}

// The rows family's shape rule: the stripe whose work-items share the
// compute units most evenly, then the widest. On the Xeon's 2 cores (2026-12-06)
// 32 x 2048 x 2048 ran fastest in stripes of 1024 columns (two, one a
// core); 1465 columns in stripes of 512 or 1024 leave a core idle a third
// of the time, in 256 a twentieth; 3000 in 512 or 256 alike, so 512 (the
// wider); 16 cores share 4096 columns in 256 evenly, in 1024 a quarter.
TEST(MatmulFamilies, TheRowsFamilySharesItsStripesAmongTheUnits) {
  const Family& rows = gemm_rows_family(32);
  DeviceCaps cpu = avx512_cpu("Synthetic Xeon", "GenuineIntel");
  auto stripe = [&](std::vector<std::size_t> problem) -> long long {
    LoadOptions options;
    options.store = std::make_shared<Store>();
    options.problem = std::move(problem);
    options.form = "NN";
    std::string rule;
    const Plan plan = ranked_plan(rows, cpu, options, &rule);
    EXPECT_NE(rule.find("how evenly the work-items"), std::string::npos) << rule;
    if (plan.chain.empty()) return 0;
    EXPECT_EQ(plan.chain.front().variant->param("MB"), 4) << plan.chain.front().variant->name;
    return plan.chain.front().variant->param("NWG");
  };
  EXPECT_EQ(stripe({32, 2048, 2048, 1}), 1024);
  EXPECT_EQ(stripe({4, 1465, 244, 1}), 256);
  EXPECT_EQ(stripe({16, 3000, 500, 1}), 512);
  EXPECT_EQ(stripe({16, 1000, 1000, 1}), 512);
  EXPECT_EQ(stripe({51, 1287, 207, 1}), 256);  // 0.84 of the units' columns, not 0.63
  cpu.compute_units = 16;
  EXPECT_EQ(stripe({32, 4096, 512, 1}), 256);
}

// An entry measured on a neighbour (a similar CPU, not this one) does not
// tell apart speeds within 5 %: there the family's ranking for this device
// decides. A Zen 4's PoCL ranked the FMA = 0 twin of the 16 x 32 point 3 %
// ahead for row-major TN; on a Xeon that twin ran 20 % behind the CPU
// default point (2048^3, 2026-12-04). On the device measured, and beyond
// the resolution, the measurement stands.
// The GEMM entry points split one product's K on a GPU whose units
// outnumber its 64 x 64 tiles: up to 16 parts' tiles a unit, parts of 512
// of K at least, a power of two; never on a CPU or in half precision.
TEST(MatmulFamilies, GemmSplitsKWhereTheTilesLeaveUnitsIdle) {
  DeviceCaps gpu = device(48, 1024, 3, 0, "");
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  gpu.compute_units = 132;
  // 128 tiles: 16 parts make 2048 work-groups (at most 16 x 132 = 2112).
  EXPECT_EQ(GemmKParts(gpu, 32, 8192, 64, 8192), 16u);
  EXPECT_EQ(GemmKParts(gpu, 64, 64, 8192, 8192), 16u);
  // Parts of 512 at least: 4096 / 512 = 8; 1023 / 512 = 1.
  EXPECT_EQ(GemmKParts(gpu, 32, 8192, 64, 4096), 8u);
  EXPECT_EQ(GemmKParts(gpu, 32, 8192, 64, 1023), 1u);
  // One tile: 32 parts at most.
  EXPECT_EQ(GemmKParts(gpu, 32, 64, 64, 1 << 20), 32u);
  // Tiles enough for every unit: 1024^3 has 256, 4096 x 4096 x 256 4096.
  EXPECT_EQ(GemmKParts(gpu, 32, 1024, 1024, 1024), 1u);
  EXPECT_EQ(GemmKParts(gpu, 32, 4096, 4096, 256), 1u);
  EXPECT_EQ(GemmKParts(gpu, 16, 8192, 64, 8192), 1u);
  DeviceCaps cpu = gpu;
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  cpu.compute_units = 2;
  EXPECT_EQ(GemmKParts(cpu, 32, 32, 32, 1 << 20), 1u);
}

TEST(MatmulFamilies, TheLanesFamilyFitsBatchesOfSmallProductsOnAGpu) {
  DeviceCaps gpu = device(48, 1024, 3, 0, "");
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  gpu.compute_units = 132;
  EXPECT_TRUE(GemmLanesFit(gpu, 32, 32, 32, 10000));
  EXPECT_TRUE(GemmLanesFit(gpu, 45, 23, 1, 2));
  // One product, or a side past size class 32 (46 rounds to 64).
  EXPECT_FALSE(GemmLanesFit(gpu, 32, 32, 32, 1));
  EXPECT_FALSE(GemmLanesFit(gpu, 46, 32, 32, 10000));
  EXPECT_FALSE(GemmLanesFit(gpu, 32, 46, 32, 10000));
  EXPECT_FALSE(GemmLanesFit(gpu, 32, 32, 128, 1000));
  DeviceCaps cpu = gpu;
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  EXPECT_FALSE(GemmLanesFit(cpu, 32, 32, 32, 10000));
  // Its points launch as the blocked family's do: NDIMC x MDIMC a tile.
  for (int bits : {16, 32, 64}) {
    for (const Variant& v : gemm_lanes_family(bits).manifest().variants) {
      EXPECT_EQ(v.param("NWG"), v.param("NDIMC")) << v.name;
      EXPECT_EQ(v.param("MWG") % v.param("MDIMC"), 0) << v.name;
    }
  }
}

TEST(MatmulFamilies, ANeighboursEntryDoesNotTellApartSpeedsWithinItsResolution) {
  const Family& sgemm = gemm_family(32);
  const Manifest& m = sgemm.manifest();
  const std::string p = "sgemm_blocked_PRECISION32_", tail = "_VWM1_VWN16_SA0_SB0_KWI8_PF0_FMA";
  const std::string small0 = p + "MWG16_NWG32_KWG8_MDIMC2_NDIMC2" + tail + "0_DB0_VWA1",
                    small1 = p + "MWG16_NWG32_KWG8_MDIMC2_NDIMC2" + tail + "1_DB0_VWA1",
                    default1 = p + "MWG32_NWG64_KWG8_MDIMC4_NDIMC4" + tail + "1_DB0_VWA1",
                    default0 = p + "MWG32_NWG64_KWG8_MDIMC4_NDIMC4" + tail + "0_DB0_VWA1";
  const DeviceCaps zen4 = avx512_cpu("a Zen 4", "AuthenticAMD"),
                   xeon = avx512_cpu("a Xeon", "GenuineIntel");
  auto measured = [&](double first) {
    TuningEntry e;
    e.family = m.family;
    e.form = "TN";
    e.platform = zen4.platform_name;
    e.device = zen4.device_name;
    e.driver = zen4.driver_version;
    e.measured_on = zen4.profile();
    e.problem = {1024, 1024, 1024, 1};
    for (const auto& [name, gflops] : {std::pair{small0, first}, std::pair{default1, 100.4},
                                       std::pair{small1, 98.9}, std::pair{default0, 95.3}}) {
      e.ranking.push_back(
          {name, tier_sha256(m, m.variant(name), Tier::Source), Tier::Source, gflops});
    }
    return e;
  };
  auto first = [&](const DeviceCaps& caps, double measured_first,
                   std::vector<std::size_t> problem = {1024, 1024, 1024, 1}) {
    LoadOptions options;
    options.store = std::make_shared<Store>();
    options.store->put_tuning(measured(measured_first));
    options.problem = std::move(problem);
    options.form = "TN";
    std::string rule, tuning;
    const Plan plan = ranked_plan(sgemm, caps, options, &rule, &tuning, nullptr);
    EXPECT_NE(tuning.find("a Zen 4"), std::string::npos) << tuning;
    return plan.chain.empty() ? std::string() : plan.chain.front().variant->name;
  };
  EXPECT_EQ(first(xeon, 102.0), default1);
  EXPECT_EQ(first(zen4, 102.0), small0);
  EXPECT_EQ(first(xeon, 110.0), small0);
  // Carried to a shape where the model sets them apart, the neighbour's
  // speeds are the model's predictions: with 60 columns the 64-wide tile
  // has none inside C (a sixth of the speed on a CPU), so the 16 x 32 points lead,
  // where the measured speeds, within 5 %, left the order to the ranking.
  EXPECT_EQ(first(xeon, 102.0, {122, 60, 352, 1}).find(p + "MWG16_NWG32_"), 0u);
}

// An entry of a bundled family measured on the synthetic device, its
// variants (source tier) at these rates.
TuningEntry synthetic_entry(MatmulKernel k, std::vector<std::size_t> problem,
                            const std::vector<std::pair<const char*, double>>& ranking) {
  const Manifest& m = matmul_family(k).manifest();
  TuningEntry e;
  e.family = m.family;
  e.platform = "synthetic";
  e.device = "device";
  e.driver = "1";
  e.problem = std::move(problem);
  for (const auto& [name, gflops] : ranking) {
    e.ranking.push_back(
        {name, tier_sha256(m, m.variant(name), Tier::Source), Tier::Source, gflops});
  }
  return e;
}

// Auto weighs the families by what their measured neighbours predict
// (choose_matmul_family): at 14 x 48 x 290 on the H200 the tiled kernel ran
// 10.7 us and the few-rows point the rule gave it 48.8 us (2026-12-02);
// entries of every family measured near that shape choose the tiled one,
// while at 4000^3 only the blocked family's entry is near enough to weigh.
TEST(MatmulFamilies, AutoWeighsTheFamiliesByTheirMeasuredNeighbours) {
  const DeviceCaps gpu = gpu_with_132_units();
  const auto entry = synthetic_entry;
  const char* blocked32 =
      "matmul_blocked_MWG32_NWG32_KWG16_MDIMC8_NDIMC8_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  const char* blocked128 =
      "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_VWA1";
  Store store;
  store.put_tuning(entry(MatmulKernel::Tiled, {16, 64, 256},
                         {{"matmul_tiled_TILE16", 36.6}, {"matmul_tiled_TILE8", 29.5}}));
  store.put_tuning(entry(
      MatmulKernel::FewRows, {16, 64, 256},
      {{"matmul_fewrows_WGN64_WGK4_VW1_MS8", 19.3}, {"matmul_fewrows_WGN32_WGK8_VW4_MS4", 8.0}}));
  store.put_tuning(entry(MatmulKernel::Blocked, {16, 64, 256}, {{blocked32, 19.4}}));
  store.put_tuning(entry(MatmulKernel::Blocked, {4096, 4096, 4096}, {{blocked128, 41700}}));

  const MatmulFamilyChoice small =
      choose_matmul_family(gpu, store, 14, 48, 290, MatmulKernel::Blocked);
  EXPECT_EQ(small.rule, MatmulKernel::FewRows);
  EXPECT_EQ(small.family, MatmulKernel::Tiled) << small.to_string();
  ASSERT_EQ(small.predictions.size(), 3u);
  for (const FamilyPrediction& p : small.predictions) {
    EXPECT_TRUE(p.weighed) << to_string(p.family);
    EXPECT_EQ(p.measured, (std::vector<std::size_t>{16, 64, 256}));
  }
  const std::string why = small.to_string();
  EXPECT_NE(why.find("tiled runs it"), std::string::npos) << why;
  EXPECT_NE(why.find("(matmul_tiled_TILE16) from the entry matmul_tiled on device"),
            std::string::npos)
      << why;

  // Far from the small entries: the blocked family's own, alone weighed.
  const MatmulFamilyChoice big =
      choose_matmul_family(gpu, store, 4000, 4000, 4000, MatmulKernel::Blocked);
  EXPECT_EQ(big.family, MatmulKernel::Blocked) << big.to_string();
  ASSERT_FALSE(big.predictions.empty());
  EXPECT_EQ(big.predictions.front().variant, blocked128);
  for (const FamilyPrediction& p : big.predictions) {
    EXPECT_EQ(p.weighed, p.family == MatmulKernel::Blocked) << to_string(p.family);
  }
  // A family chosen at construction further down Auto's chain (the blocked
  // one loaded nothing) keeps the blocked one out.
  const MatmulFamilyChoice tiled_only =
      choose_matmul_family(gpu, store, 4000, 4000, 4000, MatmulKernel::Tiled);
  EXPECT_EQ(tiled_only.family, MatmulKernel::Tiled);
  // Entries of the tiled family alone near a skinny shape: the rule's
  // family has none to weigh, so the rule stands.
  Store tiled_only_store;
  tiled_only_store.put_tuning(
      entry(MatmulKernel::Tiled, {16, 64, 256}, {{"matmul_tiled_TILE16", 36.6}}));
  const MatmulFamilyChoice unmeasured_rule =
      choose_matmul_family(gpu, tiled_only_store, 14, 48, 290, MatmulKernel::Blocked);
  EXPECT_EQ(unmeasured_rule.family, MatmulKernel::FewRows);
  EXPECT_NE(unmeasured_rule.to_string().find("fewrows runs it, by the rule"), std::string::npos)
      << unmeasured_rule.to_string();
  // Unless that family was measured at the shape itself, as learning online
  // writes it (the H200 learned the naive kernel at 130 x 70 x 90, where the
  // blocked family's nearest entry lies 1.6 powers of two away): the next
  // run reads what was learned.
  tiled_only_store.put_tuning(
      entry(MatmulKernel::Tiled, {14, 48, 290}, {{"matmul_tiled_TILE8", 20.0}}));
  const MatmulFamilyChoice learned =
      choose_matmul_family(gpu, tiled_only_store, 14, 48, 290, MatmulKernel::Blocked);
  EXPECT_EQ(learned.family, MatmulKernel::Tiled) << learned.to_string();
  EXPECT_EQ(learned.predictions.front().variant, "matmul_tiled_TILE8");
  EXPECT_NE(learned.to_string().find("tiled runs it: of the families measured at this shape"),
            std::string::npos)
      << learned.to_string();
  // No entry for this device at all: the rule, and nothing to explain.
  DeviceCaps other = gpu;
  other.platform_name = "another";
  const MatmulFamilyChoice none =
      choose_matmul_family(other, store, 14, 48, 290, MatmulKernel::Blocked);
  EXPECT_EQ(none.family, MatmulKernel::FewRows);
  EXPECT_TRUE(none.predictions.empty());
  EXPECT_EQ(none.to_string(), "");
}

// Auto weighs rates of one device: a Xeon with blocked entries of its own
// at 256^3 and up took its tiled and naive entries from a Zen 4's lattice,
// whose naive entry at 64^3 outweighed the Xeon's blocked one six powers of
// two away, and the naive kernel ran 64^3 at 3.2 GFLOP/s (2026-12-06). The
// rule's family keeps its own entry; what the Xeon measured itself at the
// shape (learning online) still decides.
TEST(MatmulFamilies, AutoWeighsTheRatesOfOneDevice) {
  const DeviceCaps zen4 = avx512_cpu("a Zen 4", "AuthenticAMD"),
                   xeon = avx512_cpu("a Xeon", "GenuineIntel");
  auto on = [](const DeviceCaps& caps, TuningEntry e) {
    e.platform = caps.platform_name;
    e.device = caps.device_name;
    e.driver = caps.driver_version;
    e.measured_on = caps.profile();
    return e;
  };
  const char* blocked =
      "matmul_blocked_MWG32_NWG32_KWG8_MDIMC4_NDIMC2_VWM1_VWN16_SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1";
  Store store;
  store.put_tuning(on(xeon, synthetic_entry(MatmulKernel::Blocked, {256, 256, 256},
                                            {{blocked, 84.7}})));
  store.put_tuning(on(zen4, synthetic_entry(MatmulKernel::Naive, {64, 64, 64},
                                            {{"matmul_naive", 3.7}})));
  store.put_tuning(on(zen4, synthetic_entry(MatmulKernel::Tiled, {64, 64, 64},
                                            {{"matmul_tiled_TILE32", 3.2}})));
  const MatmulFamilyChoice mixed =
      choose_matmul_family(xeon, store, 64, 64, 64, MatmulKernel::Blocked);
  const std::string why = mixed.to_string();
  EXPECT_EQ(mixed.family, MatmulKernel::Blocked) << why;
  ASSERT_EQ(mixed.predictions.size(), 3u) << why;
  for (const FamilyPrediction& p : mixed.predictions) {
    EXPECT_EQ(p.weighed, p.family == MatmulKernel::Blocked) << why;
    EXPECT_EQ(p.this_device, p.family == MatmulKernel::Blocked) << why;
  }
  EXPECT_NE(why.find("blocked runs it: its measured neighbour predicts"), std::string::npos)
      << why;
  EXPECT_NE(why.find("not weighed (measured on synthetic CPU platform / a Zen 4 [1], the "
                     "families weighed on synthetic CPU platform / a Xeon [1])"),
            std::string::npos)
      << why;
  // The Zen 4 itself weighs its own lattice as before.
  const MatmulFamilyChoice zen =
      choose_matmul_family(zen4, store, 64, 64, 64, MatmulKernel::Blocked);
  EXPECT_EQ(zen.family, MatmulKernel::Naive) << zen.to_string();
  // The Xeon learned the naive kernel at the shape: its own measurement decides.
  store.put_tuning(on(xeon, synthetic_entry(MatmulKernel::Naive, {64, 64, 64},
                                            {{"matmul_naive", 3.9}})));
  const MatmulFamilyChoice learned =
      choose_matmul_family(xeon, store, 64, 64, 64, MatmulKernel::Blocked);
  EXPECT_EQ(learned.family, MatmulKernel::Naive) << learned.to_string();
  EXPECT_NE(learned.to_string().find("naive   3.9 GFLOP/s"), std::string::npos)
      << learned.to_string();
  // Where the Xeon's own entries leave out the rule's family, the lattice
  // that holds it decides: at 1733 x 4 x 197 the Zen 4's entries at 4096 x 8
  // x 512 put the tiled kernel ahead of the few-columns one (measured on the
  // Xeon: 13.9 GFLOP/s against 6.1), which the rule alone would run.
  Store lattices;
  lattices.put_tuning(on(xeon, synthetic_entry(MatmulKernel::Blocked, {256, 256, 256},
                                               {{blocked, 84.7}})));
  lattices.put_tuning(on(zen4, synthetic_entry(MatmulKernel::Tiled, {4096, 8, 512},
                                               {{"matmul_tiled_TILE16", 32.4}})));
  lattices.put_tuning(on(zen4, synthetic_entry(MatmulKernel::FewCols, {4096, 8, 512},
                                               {{"matmul_fewcols_WG1_RG16_VW16_NS4", 14.9}})));
  const MatmulFamilyChoice skinny =
      choose_matmul_family(xeon, lattices, 1733, 4, 197, MatmulKernel::Blocked);
  const std::string skinny_why = skinny.to_string();
  EXPECT_EQ(skinny.rule, MatmulKernel::FewCols) << skinny_why;
  EXPECT_EQ(skinny.family, MatmulKernel::Tiled) << skinny_why;
  for (const FamilyPrediction& p : skinny.predictions) {
    EXPECT_EQ(p.weighed, !p.this_device) << skinny_why;
  }
  EXPECT_NE(skinny_why.find("tiled runs it: its measured neighbour predicts"), std::string::npos)
      << skinny_why;
  // And that lattice weighs its own entries of the families this device has
  // entries of too: with the Zen 4's blocked entry near 710 x 16 x 101, the
  // blocked family runs it (the Xeon's PoCL ran the few-columns point at 10.9
  // GFLOP/s, a blocked one at 41.8), its point then chosen from the Xeon's
  // own entries (load()).
  lattices.put_tuning(on(zen4, synthetic_entry(MatmulKernel::FewCols, {512, 16, 64},
                                               {{"matmul_fewcols_WG1_RG16_VW16_NS4", 10.0}})));
  lattices.put_tuning(on(zen4, synthetic_entry(MatmulKernel::Blocked, {512, 16, 64},
                                               {{"matmul_blocked_MWG16_NWG16_KWG8_MDIMC2_NDIMC2_"
                                                 "VWM1_VWN8_SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1",
                                                 40.0}})));
  const MatmulFamilyChoice panel =
      choose_matmul_family(xeon, lattices, 710, 16, 101, MatmulKernel::Blocked);
  const std::string panel_why = panel.to_string();
  EXPECT_EQ(panel.rule, MatmulKernel::FewCols) << panel_why;
  EXPECT_EQ(panel.family, MatmulKernel::Blocked) << panel_why;
  for (const FamilyPrediction& p : panel.predictions) {
    EXPECT_FALSE(p.this_device) << panel_why;
    EXPECT_EQ(p.weighed, p.family != MatmulKernel::Tiled) << panel_why;  // 5.9 away
  }
  EXPECT_NE(panel_why.find("from the entry matmul_blocked on a Zen 4 (driver 1) for 512x16x64"),
            std::string::npos)
      << panel_why;
}

// The models of the per-element families: padding to whole tiles and how
// many compute units their work-groups fill.
TEST(MatmulFamilies, PerElementModelsCountPaddingAndFill) {
  const DeviceCaps gpu = gpu_with_132_units();
  const Family& tiled = matmul_family(MatmulKernel::Tiled);
  const auto& eff = tiled.description().efficiency;
  ASSERT_TRUE(eff);
  const Variant& t16 = tiled.manifest().variant("matmul_tiled_TILE16");
  EXPECT_DOUBLE_EQ(eff(t16, gpu, {4096, 4096, 4096}), 1.0);
  // 17 x 17 tiles of 16 hold 257^2 (289 work-groups: the device is full),
  // K 257 in 17 slices.
  EXPECT_NEAR(eff(t16, gpu, {257, 257, 257}), std::pow(257.0 / 272, 3), 1e-12);
  // 14 x 48: three work-groups for 132 units, 14 of 16 rows used.
  EXPECT_NEAR(eff(t16, gpu, {14, 48, 288}), 14.0 / 16 * 3 / 132, 1e-12);
  const Family& naive = matmul_family(MatmulKernel::Naive);
  ASSERT_TRUE(naive.description().efficiency);
  EXPECT_NEAR(naive.description().efficiency(naive.manifest().variants.front(), gpu, {8, 8, 3}),
              64.0 / 256 / 132, 1e-12);
}

// A skinny family's model is a rate: a pass over the large operand costs
// the same whatever share of it is useful, so a one-column point keeps its
// rate from 8 columns to 5 (eight passes, then five), and a 4-column point
// runs 5 columns at 5/8 of its rate at 4 (two passes for 5/4 of the work).
TEST(MatmulFamilies, SkinnyModelsCarryRatesNotPasses) {
  const DeviceCaps gpu = gpu_with_132_units();
  const Family& fewcols = matmul_family(MatmulKernel::FewCols);
  const auto& eff = fewcols.description().efficiency;
  ASSERT_TRUE(eff);
  const Variant& one = fewcols.manifest().variant("matmul_fewcols_WG1_RG16_VW16_NS1");
  const Variant& four = fewcols.manifest().variant("matmul_fewcols_WG1_RG16_VW16_NS4");
  const std::size_t rows = 1 << 16, k = 4096;
  EXPECT_NEAR(eff(one, gpu, {rows, 5, k}) / eff(one, gpu, {rows, 8, k}), 1.0, 1e-12);
  EXPECT_NEAR(eff(four, gpu, {rows, 5, k}) / eff(four, gpu, {rows, 4, k}), 5.0 / 8, 1e-12);
  EXPECT_NEAR(eff(four, gpu, {rows, 8, k}) / eff(four, gpu, {rows, 4, k}), 1.0, 1e-12);
  // A share of the rate, as every family's model is: at most 1.
  EXPECT_DOUBLE_EQ(eff(four, gpu, {rows, 8, k}), 1.0);
  EXPECT_DOUBLE_EQ(eff(one, gpu, {rows, 5, k}), 1.0);
}

// A measured time is its launches and its computing: with the device's time
// per launch, read off its smallest entries (launch_floor_ms), a product
// the size of a launch carries to twice the work as a launch plus twice
// the computing, not as the same rate; and a blocked product split over K
// is two launches.
TEST(MatmulFamilies, LaunchesAreToldApartFromComputing) {
  const DeviceCaps gpu = gpu_with_132_units();
  const Family& tiled = matmul_family(MatmulKernel::Tiled);
  auto entry = [](std::vector<std::size_t> problem, double gflops) {
    return synthetic_entry(MatmulKernel::Tiled, std::move(problem),
                           {{"matmul_tiled_TILE16", gflops}});
  };
  Store store;
  EXPECT_EQ(launch_floor_ms(store, tiled, gpu), 0);  // no small entry: throughput alone
  store.put_tuning(entry({8, 8, 8}, 0.1));           // 1024 flop in 10.24 us
  store.put_tuning(entry({512, 512, 512}, 1000));    // too large to tell a launch
  const double floor = launch_floor_ms(store, tiled, gpu);
  EXPECT_NEAR(floor, 0.01024, 1e-9);
  // 64^3 at 35 GFLOP/s: 15.0 us, 4.7 of them computing; 64x64x128 then
  // takes 10.24 + 9.5 us.
  const TuningEntry at64 = entry({64, 64, 64}, 35);
  double throughput = 0, with_launches = 0;
  carry_tuning(at64, tiled, gpu, {64, 64, 128}, nullptr, &throughput);
  std::string why;
  carry_tuning(at64, tiled, gpu, {64, 64, 128}, &why, &with_launches, floor);
  EXPECT_NEAR(throughput, 35, 1e-9);
  const double ms = 2.0 * 64 * 64 * 64 / 35e6;
  EXPECT_NEAR(with_launches, 2.0 * 64 * 64 * 128 / ((floor + 2 * (ms - floor)) * 1e6), 1e-6);
  EXPECT_GT(with_launches, 50);

  const Family& blocked = matmul_family(MatmulKernel::Blocked);
  const Variant& big = blocked.manifest().variant(
      "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0_DB0_"
      "VWA1");
  ASSERT_TRUE(blocked.description().launches);
  EXPECT_EQ(blocked.description().launches(big, gpu, {127, 8191, 4099}), 2);
  EXPECT_EQ(blocked.description().launches(big, gpu, {4096, 4096, 4096}), 1);
  // K beyond one launch's share (kMatmulMaxKPerLaunch): a launch per share.
  EXPECT_EQ(blocked.description().launches(big, gpu, {4096, 4096, 3 * kMatmulMaxKPerLaunch}), 3);
  // A CPU point that reads B in place: launches of kMatmulCpuKPerLaunch of
  // K, and the copy of B where its rows lie 4 KiB apart.
  const Variant& in_place = blocked.manifest().variant(
      "matmul_blocked_MWG32_NWG64_KWG8_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI8_PF0_FMA1_DB0_VWA1");
  DeviceCaps cpu = gpu;
  cpu.device_type = CL_DEVICE_TYPE_CPU;
  cpu.compute_units = 2;
  EXPECT_EQ(matmul_k_per_launch(cpu, MatmulKernel::Blocked, in_place), kMatmulCpuKPerLaunch);
  // B's rows a page or more apart (the GEMM entry points say so): shorter.
  EXPECT_EQ(matmul_k_per_launch(cpu, MatmulKernel::Blocked, in_place, 4095), kMatmulCpuKPerLaunch);
  EXPECT_EQ(matmul_k_per_launch(cpu, MatmulKernel::Blocked, in_place, 4096),
            kMatmulCpuPagedKPerLaunch);
  EXPECT_EQ(matmul_k_per_launch(cpu, MatmulKernel::Blocked, big, 8192), kMatmulMaxKPerLaunch);
  EXPECT_EQ(matmul_k_per_launch(gpu, MatmulKernel::Blocked, in_place, 8192),
            kMatmulMaxKPerLaunch);
  EXPECT_EQ(matmul_k_per_launch(cpu, MatmulKernel::Blocked, big), kMatmulMaxKPerLaunch);
  EXPECT_EQ(matmul_k_per_launch(gpu, MatmulKernel::Blocked, in_place), kMatmulMaxKPerLaunch);
  EXPECT_EQ(blocked.description().launches(in_place, cpu, {200, 3000, 3000}), 3);
  EXPECT_EQ(blocked.description().launches(in_place, cpu, {200, 3072, 3000}), 4);
  EXPECT_EQ(blocked.description().launches(in_place, cpu, {1000, 768, 1024}), 1);
  // B packed into panels 64 wide: a copy per packed panel, a launch per
  // panel and part of K; 3000 columns are 45 packed panels and a launch over
  // the last 120 that reads B in place.
  EXPECT_EQ(blocked.description().launches(in_place, cpu, {3000, 3000, 3000}), 45 + 46 * 3);
  EXPECT_EQ(blocked.description().launches(in_place, cpu, {3000, 3072, 3000}), 48 + 48 * 3);
  EXPECT_EQ(blocked.description().launches(in_place, cpu, {1000, 1024, 1024}), 16 + 16);

  // A launch behind the first (a split's sum) costs kLaterLaunchShare of
  // one: an entry measured split, carried to sizes run in one launch, loses
  // 1 + share launches and gains one.
  EXPECT_EQ(launch_cost(0), 1);
  EXPECT_EQ(launch_cost(1), 1);
  EXPECT_DOUBLE_EQ(launch_cost(2), 1 + kLaterLaunchShare);
  EXPECT_DOUBLE_EQ(launch_cost(3), 1 + 2 * kLaterLaunchShare);
  const std::vector<std::size_t> split{127, 8191, 4099}, whole{4096, 4096, 4096};
  const TuningEntry measured_split =
      synthetic_entry(MatmulKernel::Blocked, split, {{big.name.c_str(), 20000}});
  double carried = 0;
  carry_tuning(measured_split, blocked, gpu, whole, nullptr, &carried, floor);
  const auto& eff = blocked.description().efficiency;
  const double flop_split = 2.0 * 127 * 8191 * 4099, flop_whole = 2.0 * 4096 * 4096 * 4096;
  const double ms_split = flop_split / 20000e6;
  const double computing = ms_split - (1 + kLaterLaunchShare) * floor;
  const double ms_whole =
      floor + computing * (flop_whole / eff(big, gpu, whole)) / (flop_split / eff(big, gpu, split));
  EXPECT_NEAR(carried, flop_whole / (ms_whole * 1e6), 1e-6 * carried);
}

}  // namespace
}  // namespace fatcl
