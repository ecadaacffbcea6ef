// The bundled SGEMM families' descriptions on synthetic devices: how they
// rank their variants (no OpenCL needed).
#include <gtest/gtest.h>

#include "fatcl/matmul.hpp"
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
                  (fused ? "1" : "0"));
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
            "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0");
}

// The shipped entries name the bundled modules as they are: a kernel or
// toolchain change that rebuilds them must come with new measurements
// (tools/ship-tuning.py), else the loader would pass the entries over.
TEST(MatmulFamilies, ShippedEntriesMatchTheBundledModules) {
  const std::vector<TuningEntry>& shipped =
      matmul_family(MatmulKernel::Blocked).description().shipped_tuning;
  ASSERT_FALSE(shipped.empty());
  // matmul/tuning/shipped.json holds blocked entries only.
  EXPECT_TRUE(matmul_family(MatmulKernel::Tiled).description().shipped_tuning.empty());
  EXPECT_TRUE(matmul_family(MatmulKernel::Naive).description().shipped_tuning.empty());
  const Manifest& blocked = matmul_family(MatmulKernel::Blocked).manifest();
  for (const TuningEntry& e : shipped) {
    SCOPED_TRACE(e.describe());
    EXPECT_EQ(e.origin, "shipped with fatcl");
    EXPECT_EQ(e.family, blocked.family);
    ASSERT_FALSE(e.ranking.empty());
    for (const TunedVariant& t : e.ranking) {
      bool found = false;
      for (const Variant& v : blocked.variants) {
        if (v.name == t.variant) {
          found = true;
          EXPECT_EQ(tier_sha256(blocked, v, t.tier), t.sha256) << t.variant;
        }
      }
      EXPECT_TRUE(found) << t.variant;
    }
  }
}

// The blocked family's defaults are its grid's first points of each kind
// (matmul/CMakeLists.txt), named in the ranking's rule.
TEST(MatmulFamilies, BlockedDefaultsAreReadFromTheGrid) {
  const Family& blocked = matmul_family(MatmulKernel::Blocked);
  const std::string& rule = blocked.description().ranking.rule;
  EXPECT_NE(rule.find("GPU: " + blocked.manifest().variants.front().name), std::string::npos)
      << rule;
  EXPECT_NE(rule.find("CPU: matmul_blocked_MWG32_NWG64_KWG8_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI8_"
                      "PF0_FMA1"),
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
                                   "VWN4_SA1_SB1_KWI2_PF1_FMA0");
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
      "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0";
  const char* small =
      "matmul_blocked_MWG64_NWG64_KWG16_MDIMC8_NDIMC8_VWM4_VWN4_SA1_SB1_KWI2_PF1_FMA0";
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
  EXPECT_EQ(carried.ranking.front().gflops, 35000.0);  // the measured rate, not the prediction
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
      "matmul_blocked_MWG128_NWG128_KWG16_MDIMC16_NDIMC16_VWM4_VWN4_SA0_SB1_KWI2_PF1_FMA0";
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
      "matmul_blocked_MWG32_NWG64_KWG16_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI4_PF0_FMA1";
  const char* k4 = "matmul_blocked_MWG32_NWG64_KWG4_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI4_PF0_FMA1";
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

}  // namespace
}  // namespace fatcl
