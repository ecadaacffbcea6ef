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

}  // namespace
}  // namespace fatcl
