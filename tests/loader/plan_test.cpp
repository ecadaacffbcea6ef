// Selection on synthetic devices: local memory 16/32/48/64 KiB, work-group
// limits 256 and 1024, OpenCL 1.2 / 2.1 / 3.0 with and without IL, NVIDIA's
// empty IL string.
#include <gtest/gtest.h>

#include <sstream>

#include "error_of.hpp"
#include "fatcl/loader.hpp"
#include "synthetic_device.hpp"
#include "test_manifests.hpp"

namespace fatcl {
namespace {

using test::device;

// The tiled family's ranking: work-items per group, then less local memory.
Plan tiled_plan(const Manifest& m, const DeviceCaps& caps, const LoadOptions& options = {}) {
  return plan(m, caps, options, Ranking::by_work_group_items());
}

// A family with a variant that needs 40 KiB of local memory and 256
// work-items, as register-blocked variants will.
Manifest family() {
  Manifest m = test::tiled_manifest({4, 8, 16, 32, 64});
  Variant big = test::tiled_variant(16);
  big.name = "matmul_tiled_TILE16_BIG";
  big.local_mem_bytes = 40 * 1024;
  m.variants.push_back(big);
  return m;
}

std::vector<std::string> chain_names(const Plan& p) {
  std::vector<std::string> out;
  for (const Candidate& c : p.chain) out.push_back(c.variant->name + "/" + to_string(c.tier));
  return out;
}

const Step* rejection(const Plan& p, const std::string& variant, std::optional<Tier> tier) {
  for (const Step& s : p.rejected) {
    if (s.variant == variant && s.tier == tier) return &s;
  }
  return nullptr;
}

TEST(Plan, LocalMemoryLimits) {
  const Manifest m = family();
  for (std::uint64_t kib : {16, 32, 48, 64}) {
    SCOPED_TRACE(std::to_string(kib) + " KiB");
    Plan p = tiled_plan(m, device(kib, 1024, 3, 0, ""));
    const Step* big = rejection(p, "matmul_tiled_TILE16_BIG", std::nullopt);
    if (kib < 40) {
      ASSERT_NE(big, nullptr);
      EXPECT_NE(big->reason.find("needs 40960 B of local memory, the device has " +
                                 std::to_string(kib * 1024) + " B"),
                std::string::npos)
          << big->reason;
    } else {
      EXPECT_EQ(big, nullptr);
    }
    ASSERT_FALSE(p.chain.empty());
    EXPECT_EQ(p.chain.front().variant->name, "matmul_tiled_TILE32");
  }
}

TEST(Plan, WorkGroupLimits) {
  const Manifest m = family();
  Plan p1024 = tiled_plan(m, device(48, 1024, 3, 0, ""));
  EXPECT_EQ(chain_names(p1024).front(), "matmul_tiled_TILE32/source");
  const Step* t64 = rejection(p1024, "matmul_tiled_TILE64", std::nullopt);
  ASSERT_NE(t64, nullptr);
  EXPECT_NE(t64->reason.find("needs 4096 work-items per group (64x64x1), "
                             "CL_DEVICE_MAX_WORK_GROUP_SIZE is 1024"),
            std::string::npos)
      << t64->reason;

  Plan p256 = tiled_plan(m, device(64, 256, 3, 0, ""));
  ASSERT_NE(rejection(p256, "matmul_tiled_TILE32", std::nullopt), nullptr);
  // TILE16 and TILE16_BIG tie on work-items; less local memory wins.
  std::vector<std::string> expected = {"matmul_tiled_TILE16/source",
                                       "matmul_tiled_TILE16_BIG/source",
                                       "matmul_tiled_TILE8/source", "matmul_tiled_TILE4/source"};
  EXPECT_EQ(chain_names(p256), expected);

  DeviceCaps narrow = device(64, 1024, 3, 0, "");
  narrow.max_work_item_sizes = {1024, 16, 1};
  Plan pn = tiled_plan(m, narrow);
  const Step* t32 = rejection(pn, "matmul_tiled_TILE32", std::nullopt);
  ASSERT_NE(t32, nullptr);
  EXPECT_NE(t32->reason.find("32 work-items in dimension 1"), std::string::npos) << t32->reason;
}

TEST(Plan, OpenCL12WithoutILUsesSourceOnly) {
  const Manifest m = test::tiled_manifest({8, 16});
  Plan p = tiled_plan(m, device(32, 1024, 1, 2, ""));
  EXPECT_EQ(chain_names(p),
            (std::vector<std::string>{"matmul_tiled_TILE16/source", "matmul_tiled_TILE8/source"}));
  const Step* s = rejection(p, "matmul_tiled_TILE16", Tier::SpirV);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->reason.find("OpenCL 1.2 without cl_khr_il_program takes no IL"), std::string::npos);
}

TEST(Plan, OpenCL12WithKhrIlProgramTakesSpirV) {
  const Manifest m = test::tiled_manifest({16});
  Plan p = tiled_plan(m, device(32, 1024, 1, 2, "SPIR-V_1.0", true));
  EXPECT_EQ(chain_names(p),
            (std::vector<std::string>{"matmul_tiled_TILE16/spirv", "matmul_tiled_TILE16/source"}));
}

TEST(Plan, OpenCL21WithIL) {
  const Manifest m = test::tiled_manifest({8, 16});
  Plan p = tiled_plan(m, device(64, 1024, 2, 1, "SPIR-V_1.2 SPIR-V_1.0"));
  EXPECT_EQ(chain_names(p),
            (std::vector<std::string>{"matmul_tiled_TILE16/spirv", "matmul_tiled_TILE16/source",
                                      "matmul_tiled_TILE8/spirv", "matmul_tiled_TILE8/source"}));
  for (const Step& s : p.rejected) EXPECT_EQ(s.tier, Tier::Ptx) << s.reason;  // no PTX here
}

TEST(Plan, OpenCL21WithoutILString) {
  const Manifest m = test::tiled_manifest({16});
  Plan p = tiled_plan(m, device(64, 1024, 2, 1, ""));
  EXPECT_EQ(chain_names(p), (std::vector<std::string>{"matmul_tiled_TILE16/source"}));
}

TEST(Plan, NvidiaEmptyILStringMeansSourceTier) {
  // NVIDIA 580: OpenCL 3.0, CL_DEVICE_IL_VERSION "" (size query 1), 48 KiB.
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  Plan p = tiled_plan(m, device(48, 1024, 3, 0, ""));
  EXPECT_EQ(chain_names(p).front(), "matmul_tiled_TILE32/source");
  const Step* s = rejection(p, "matmul_tiled_TILE32", Tier::SpirV);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->reason.find("CL_DEVICE_IL_VERSION is empty"), std::string::npos);
}

TEST(Plan, OpenCL30WithIL) {
  const Manifest m = test::tiled_manifest({32});
  Plan p = tiled_plan(m, device(64, 1024, 3, 0, "SPIR-V_1.2"));
  EXPECT_EQ(chain_names(p),
            (std::vector<std::string>{"matmul_tiled_TILE32/spirv", "matmul_tiled_TILE32/source"}));
}

TEST(Plan, ModuleNewerThanTheDeviceTakes) {
  Manifest m;
  m = test::tiled_manifest({});
  m.variants.push_back(test::tiled_variant(16, "1.4"));
  Plan p = tiled_plan(m, device(64, 1024, 3, 0, "SPIR-V_1.0 SPIR-V_1.2"));
  const Step* s = rejection(p, "matmul_tiled_TILE16", Tier::SpirV);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->reason.find("takes SPIR-V up to 1.2, the module is SPIR-V 1.4"), std::string::npos)
      << s->reason;
}

TEST(Plan, CallerRestrictions) {
  Manifest m = test::tiled_manifest({8, 16});
  LoadOptions only;
  only.variant = "matmul_tiled_TILE8";
  only.tier = Tier::Source;
  Plan p = tiled_plan(m, device(64, 1024, 3, 0, "SPIR-V_1.2"), only);
  EXPECT_EQ(chain_names(p), (std::vector<std::string>{"matmul_tiled_TILE8/source"}));
  ASSERT_NE(rejection(p, "matmul_tiled_TILE16", std::nullopt), nullptr);
  ASSERT_NE(rejection(p, "matmul_tiled_TILE8", Tier::SpirV), nullptr);
  only.variant = "matmul_tiled_TILE99";
  EXPECT_THROW(tiled_plan(m, device(64, 1024, 3, 0, ""), only), Error);
}

TEST(Plan, NothingFitsLeavesAnEmptyChainWithReasons) {
  const Manifest m = test::tiled_manifest({32});
  Plan p = tiled_plan(m, device(4, 64, 1, 2, ""));
  EXPECT_TRUE(p.chain.empty());
  ASSERT_EQ(p.rejected.size(), 1u);
  EXPECT_NE(p.rejected[0].reason.find("CL_DEVICE_MAX_WORK_GROUP_SIZE is 64"), std::string::npos);
}

TEST(Explanation, NamesEveryStep) {
  Explanation e;
  e.device = "dev";
  e.ranking = Ranking::by_work_group_items().rule;
  e.steps = {{"a", Tier::SpirV, Step::Outcome::Failed, "clCreateProgramWithIL failed"},
             {"a", Tier::Source, Step::Outcome::Chosen, "built"},
             {"b", std::nullopt, Step::Outcome::Rejected, "too big"}};
  std::string text = e.to_string();
  EXPECT_NE(text.find("chosen: a (source tier)"), std::string::npos) << text;
  EXPECT_NE(text.find("a [spirv]"), std::string::npos) << text;
  EXPECT_NE(text.find("failed: clCreateProgramWithIL failed"), std::string::npos) << text;
  EXPECT_NE(text.find("rejected: too big"), std::string::npos) << text;
}

// The text for people gives the steps passed over for the same reason in
// one line with their number; the chosen and failed ones and the steps of
// another reason stay one by one, and EveryStep lists each.
TEST(Explanation, GroupsTheStepsPassedOverForOneReason) {
  Explanation e;
  e.device = "dev";
  const std::string no_il = "CL_DEVICE_IL_VERSION is empty: the driver takes no SPIR-V";
  for (const char* v : {"a", "b", "c"}) {
    e.steps.push_back({v, Tier::SpirV, Step::Outcome::Rejected, no_il});
    e.steps.push_back({v, Tier::Ptx, Step::Outcome::Rejected, "PTX is taken only by NVIDIA"});
  }
  e.steps.push_back({"a", Tier::Source, Step::Outcome::Failed, "clBuildProgram failed"});
  e.steps.push_back({"b", Tier::Source, Step::Outcome::Chosen, "built"});
  e.steps.push_back({"c", Tier::Source, Step::Outcome::Unneeded, "ranked below b"});
  e.steps.push_back({"d", std::nullopt, Step::Outcome::Rejected, "needs 48 KiB"});
  e.steps.push_back({"e", std::nullopt, Step::Outcome::Rejected, "needs 64 KiB"});
  const std::string text = e.to_string();
  // The lines of the steps, in order, each squeezed to single spaces.
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("  ", 0) != 0) continue;
    std::string squeezed;
    for (char c : l.substr(2)) {
      if (c != ' ' || (!squeezed.empty() && squeezed.back() != ' ')) squeezed += c;
    }
    lines.push_back(squeezed);
  }
  const std::vector<std::string> want = {"3 variants [spirv] rejected: " + no_il,
                                         "3 variants [ptx] rejected: PTX is taken only by NVIDIA",
                                         "a [source] failed: clBuildProgram failed",
                                         "b [source] chosen: built",
                                         "c [source] not needed: ranked below b",
                                         "d rejected: needs 48 KiB",
                                         "e rejected: needs 64 KiB"};
  EXPECT_EQ(lines, want) << text;
  const std::string every = e.to_string(Explanation::Detail::EveryStep);
  for (const char* v : {"  a [spirv]", "  b [spirv]", "  c [spirv]", "  c [ptx]"}) {
    EXPECT_NE(every.find(v), std::string::npos) << v << "\n" << every;
  }
  EXPECT_EQ(every.find("variants"), std::string::npos) << every;
}

// A family's own ranking orders the chain; without one, the manifest's order.
TEST(Plan, TheFamilysRankingOrdersTheChain) {
  const Manifest m = test::tiled_manifest({8, 32, 16});
  const DeviceCaps caps = device(64, 1024, 1, 2, "");
  EXPECT_EQ(chain_names(plan(m, caps)),
            (std::vector<std::string>{"matmul_tiled_TILE8/source", "matmul_tiled_TILE32/source",
                                      "matmul_tiled_TILE16/source"}));
  Ranking fewest;
  fewest.score = [](const Variant& v, const DeviceCaps&) { return -double(v.work_group_items()); };
  EXPECT_EQ(chain_names(plan(m, caps, {}, fewest)),
            (std::vector<std::string>{"matmul_tiled_TILE8/source", "matmul_tiled_TILE16/source",
                                      "matmul_tiled_TILE32/source"}));
  EXPECT_EQ(chain_names(tiled_plan(m, caps)),
            (std::vector<std::string>{"matmul_tiled_TILE32/source", "matmul_tiled_TILE16/source",
                                      "matmul_tiled_TILE8/source"}));
}

// The blocked family ranks fma() first where the device fuses it and last
// where it would be emulated; the shape comes from the device's class.
// NO_SOURCE: the source tier is refused with its reason; a device without
// SPIR-V intake has nothing to try, and the manifest keeps the flag.
TEST(Plan, NoSourceBundlesOfferOnlyPrecompiledTiers) {
  Manifest m = test::tiled_manifest({8, 16});
  m.source_embedded = false;
  const Manifest again = Manifest::parse(m.dump());
  EXPECT_FALSE(again.source_embedded);
  EXPECT_NE(m.dump().find("\"source_embedded\": false"), std::string::npos);
  EXPECT_EQ(test::tiled_manifest({8}).dump().find("source_embedded"), std::string::npos)
      << "bundles with their source keep their bytes";
  const Plan with_il = tiled_plan(m, device(64, 1024, 3, 0, "SPIR-V_1.2"));
  EXPECT_EQ(chain_names(with_il),
            (std::vector<std::string>{"matmul_tiled_TILE16/spirv", "matmul_tiled_TILE8/spirv"}));
  const Step* refused = rejection(with_il, "matmul_tiled_TILE16", Tier::Source);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->reason.find("left out on purpose (NO_SOURCE)"), std::string::npos);
  EXPECT_TRUE(tiled_plan(m, device(64, 1024, 3, 0, "")).chain.empty());
}

// The PTX tier: offered between SPIR-V and source on NVIDIA's OpenCL for
// variants that carry PTX, refused elsewhere with the reason.
TEST(Plan, PtxTierIsOfferedOnNvidiaOnly) {
  Manifest m = test::tiled_manifest({8, 16});
  PtxModule ptx;
  ptx.file = "matmul_tiled_TILE16.ptx";
  m.variants[1].ptx = ptx;  // TILE16 has PTX, TILE8 none
  DeviceCaps nvidia = device(48, 1024, 3, 0, "");
  nvidia.platform_name = "NVIDIA CUDA";
  const Plan p = tiled_plan(m, nvidia);
  EXPECT_EQ(chain_names(p),
            (std::vector<std::string>{"matmul_tiled_TILE16/ptx", "matmul_tiled_TILE16/source",
                                      "matmul_tiled_TILE8/source"}));
  const Step* none = rejection(p, "matmul_tiled_TILE8", Tier::Ptx);
  ASSERT_TRUE(none);
  EXPECT_NE(none->reason.find("no PTX for this variant"), std::string::npos) << none->reason;
  DeviceCaps with_il = nvidia;
  with_il.il_version = "SPIR-V_1.2";
  EXPECT_EQ(chain_names(tiled_plan(m, with_il)).front(), "matmul_tiled_TILE16/spirv")
      << "SPIR-V first, then PTX";
  EXPECT_EQ(chain_names(tiled_plan(m, with_il))[1], "matmul_tiled_TILE16/ptx");
  DeviceCaps pocl = device(64, 1024, 3, 0, "");
  pocl.platform_name = "Portable Computing Language";
  const Plan q = tiled_plan(m, pocl);
  const Step* refused = rejection(q, "matmul_tiled_TILE16", Tier::Ptx);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->reason.find("only by NVIDIA's OpenCL; this platform is Portable"),
            std::string::npos)
      << refused->reason;
  // A ranking that measured TILE16's source build tries that tier first.
  Ranking measured = Ranking::by_work_group_items();
  measured.tier_first = [](const Variant& v) -> std::optional<Tier> {
    if (v.name == "matmul_tiled_TILE16") return Tier::Source;
    return std::nullopt;
  };
  EXPECT_EQ(chain_names(plan(m, nvidia, {}, measured)),
            (std::vector<std::string>{"matmul_tiled_TILE16/source", "matmul_tiled_TILE16/ptx",
                                      "matmul_tiled_TILE8/source"}));
  LoadOptions only;
  only.tier = parse_tier("ptx");
  EXPECT_EQ(chain_names(tiled_plan(m, nvidia, only)),
            (std::vector<std::string>{"matmul_tiled_TILE16/ptx"}));
  EXPECT_THROW(parse_tier("cubin"), Error);
}

}  // namespace
}  // namespace fatcl
