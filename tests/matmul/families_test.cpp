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

}  // namespace
}  // namespace fatcl
