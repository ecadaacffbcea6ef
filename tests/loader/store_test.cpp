// The store and remembered outcomes: lookups on synthetic devices,
// files that are corrupt, foreign or of a future format, and writes that a
// kill cannot leave half done.
#include "fatcl/store.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "error_of.hpp"
#include "temp_dir.hpp"
#include "test_manifests.hpp"

namespace fatcl {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

DeviceCaps h200() {
  DeviceCaps caps;
  caps.platform_name = "NVIDIA CUDA";
  caps.device_name = "NVIDIA H200";
  caps.driver_version = "580.159.04";
  caps.device_version = "OpenCL 3.0 CUDA";
  caps.cl_major = 3;
  caps.cl_minor = 0;
  return caps;
}

// An entry for the tiled test family ranking `first` then `second`.
TuningEntry entry(const Manifest& m, std::vector<std::size_t> problem, const std::string& first,
                  const std::string& second) {
  TuningEntry e;
  e.family = m.family;
  e.platform = "NVIDIA CUDA";
  e.device = "NVIDIA H200";
  e.driver = "580.159.04";
  e.problem = std::move(problem);
  e.measured = "2026-11-30T12:00:00Z";
  e.fatcl_version = fatcl_version();
  for (const std::string& name : {first, second}) {
    e.ranking.push_back({name, tier_sha256(m, m.variant(name), Tier::Source), Tier::Source, 1000});
  }
  return e;
}

TEST(Store, NearestSizeClassOfTheSameDriverDecides) {
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  Store store;
  store.put_tuning(entry(m, {4096, 4096, 4096}, "matmul_tiled_TILE16", "matmul_tiled_TILE8"));
  store.put_tuning(entry(m, {8192, 64, 8192}, "matmul_tiled_TILE4", "matmul_tiled_TILE8"));
  TuningMatch square = store.find_tuning(h200(), m, {4000, 4000, 4000});
  ASSERT_TRUE(square.entry);
  EXPECT_EQ(square.entry->ranking.front().variant, "matmul_tiled_TILE16");
  EXPECT_NE(square.to_string().find("measured 2026-11-30T12:00:00Z"), std::string::npos)
      << square.to_string();
  TuningMatch skinny = store.find_tuning(h200(), m, {8192, 64, 8192});
  ASSERT_TRUE(skinny.entry);
  EXPECT_EQ(skinny.entry->ranking.front().variant, "matmul_tiled_TILE4");
  // No problem given: the largest tuned.
  ASSERT_TRUE(store.find_tuning(h200(), m, {}).entry);
  EXPECT_EQ(store.find_tuning(h200(), m, {}).entry->problem,
            (std::vector<std::size_t>{4096, 4096, 4096}));
  // Far from every entry: passed over, with the reason.
  TuningMatch tiny = store.find_tuning(h200(), m, {16, 16, 16});
  EXPECT_FALSE(tiny.entry);
  EXPECT_NE(tiny.to_string().find("more than a factor 8"), std::string::npos) << tiny.to_string();
  // Replacing an entry of the same class keeps one.
  store.put_tuning(entry(m, {4000, 4100, 4096}, "matmul_tiled_TILE32", "matmul_tiled_TILE8"));
  EXPECT_EQ(store.tuning().size(), 2u);
}

// A size that the problem or the entry leaves out counts as 1: the GEMM
// families' entries hold {M, N, K, batch}, and `fatcl validate --problem
// 2048x2048x2048` asks for one product (it had passed over every entry).
TEST(Store, ASizeLeftOutCountsAsOne) {
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  Store store;
  store.put_tuning(entry(m, {2048, 2048, 2048, 1}, "matmul_tiled_TILE16", "matmul_tiled_TILE8"));
  TuningMatch one = store.find_tuning(h200(), m, {2000, 2000, 2000});
  ASSERT_TRUE(one.entry) << one.to_string();
  EXPECT_EQ(one.entry->ranking.front().variant, "matmul_tiled_TILE16");
  // A batch of 10,000 is far from one product.
  Store batches;
  batches.put_tuning(entry(m, {32, 32, 32, 10000}, "matmul_tiled_TILE8", "matmul_tiled_TILE4"));
  TuningMatch none = batches.find_tuning(h200(), m, {32, 32, 32});
  EXPECT_FALSE(none.entry);
  EXPECT_NE(none.to_string().find("more than a factor 8"), std::string::npos) << none.to_string();
  ASSERT_TRUE(batches.find_tuning(h200(), m, {32, 32, 32, 8000}).entry);
}

TEST(Store, AnotherDriverOrChangedCodeArePassedOverWithTheReason) {
  Manifest m = test::tiled_manifest({4, 8, 16, 32});
  Store store;
  store.put_tuning(entry(m, {4096, 4096, 4096}, "matmul_tiled_TILE16", "matmul_tiled_TILE8"));
  DeviceCaps newer = h200();
  newer.driver_version = "590.1";
  TuningMatch other_driver = store.find_tuning(newer, m, {4096, 4096, 4096});
  EXPECT_FALSE(other_driver.entry);
  EXPECT_NE(other_driver.to_string().find("measured with driver 580.159.04, the device has 590.1"),
            std::string::npos)
      << other_driver.to_string();
  // The entry measured the source tier: a new SPIR-V module of a variant
  // leaves it standing, a new source does not.
  for (Variant& v : m.variants) {
    if (v.name == "matmul_tiled_TILE8") v.sha256 = std::string(64, 'e');
  }
  EXPECT_TRUE(store.find_tuning(h200(), m, {4096, 4096, 4096}).entry);
  m.source_sha256 = std::string(64, 'f');
  TuningMatch rebuilt = store.find_tuning(h200(), m, {4096, 4096, 4096});
  EXPECT_FALSE(rebuilt.entry);
  EXPECT_NE(rebuilt.to_string().find("the source code of matmul_tiled_TILE16 changed since"),
            std::string::npos)
      << rebuilt.to_string();
  // A SPIR-V measurement holds while its module does.
  Manifest n = test::tiled_manifest({4, 8, 16, 32});
  TuningEntry spirv = entry(n, {1024, 1024, 1024}, "matmul_tiled_TILE16", "matmul_tiled_TILE8");
  for (TunedVariant& t : spirv.ranking) {
    t.tier = Tier::SpirV;
    t.sha256 = n.variant(t.variant).sha256;
  }
  store.put_tuning(spirv);
  EXPECT_TRUE(store.find_tuning(h200(), n, {1024, 1024, 1024}).entry);
  for (Variant& v : n.variants) {
    if (v.name == "matmul_tiled_TILE8") v.sha256 = std::string(64, 'e');
  }
  EXPECT_NE(store.find_tuning(h200(), n, {1024, 1024, 1024})
                .to_string()
                .find("the spirv code of matmul_tiled_TILE8 changed since"),
            std::string::npos);
  // Another device: not an entry for it at all.
  DeviceCaps other = h200();
  other.device_name = "NVIDIA H100";
  EXPECT_TRUE(
      store.find_tuning(other, test::tiled_manifest({4, 8, 16, 32}), {}).passed_over.empty());
}

// Device patterns: an entry for "pthread-*" serves any PoCL CPU, one for
// "pthread-*avx512*" is preferred where both match at the same distance,
// and an exact name before either.
TEST(Store, TheMostSpecificDevicePatternWins) {
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  DeviceCaps pocl = h200();
  pocl.platform_name = "Portable Computing Language";
  pocl.device_name = "pthread-skylake-avx512-AMD EPYC";
  pocl.driver_version = "3.1+debian";
  auto for_pattern = [&](const std::string& device, const std::string& first) {
    TuningEntry e = entry(m, {1024, 1024, 1024}, first, "matmul_tiled_TILE4");
    e.platform = pocl.platform_name;
    e.device = device;
    e.driver = pocl.driver_version;
    return e;
  };
  Store store;
  store.put_tuning(for_pattern("pthread-*", "matmul_tiled_TILE8"));
  store.put_tuning(for_pattern("pthread-*avx512*", "matmul_tiled_TILE16"));
  ASSERT_TRUE(store.find_tuning(pocl, m, {1024, 1024, 1024}).entry);
  EXPECT_EQ(store.find_tuning(pocl, m, {1024, 1024, 1024}).entry->ranking.front().variant,
            "matmul_tiled_TILE16");
  store.put_tuning(for_pattern(pocl.device_name, "matmul_tiled_TILE32"));
  EXPECT_EQ(store.find_tuning(pocl, m, {1024, 1024, 1024}).entry->ranking.front().variant,
            "matmul_tiled_TILE32");
  DeviceCaps haswell = pocl;
  haswell.device_name = "pthread-haswell-Intel(R) Xeon(R)";
  ASSERT_TRUE(store.find_tuning(haswell, m, {1024, 1024, 1024}).entry);
  EXPECT_EQ(store.find_tuning(haswell, m, {1024, 1024, 1024}).entry->ranking.front().variant,
            "matmul_tiled_TILE8");
  // A pattern is named as one, an exact name as the device.
  const std::string pattern = store.find_tuning(haswell, m, {1024, 1024, 1024}).to_string();
  EXPECT_NE(pattern.find("tuning entry: matmul_tiled on Portable Computing Language devices "
                         "matching \"pthread-*\" (driver 3.1+debian)"),
            std::string::npos)
      << pattern;
  const std::string exact = store.find_tuning(pocl, m, {1024, 1024, 1024}).to_string();
  EXPECT_NE(exact.find("tuning entry: matmul_tiled on pthread-skylake-avx512-AMD EPYC (driver"),
            std::string::npos)
      << exact;
}

// A PoCL CPU as it reports itself: LLVM's CPU name in the device name.
DeviceCaps pocl_cpu(const std::string& llvm_cpu, const std::string& isa_width_from = "") {
  DeviceCaps caps;
  caps.platform_name = "Portable Computing Language";
  caps.device_name = "pthread-" + llvm_cpu + "-AMD EPYC";
  caps.driver_version = "3.1+debian";
  caps.device_version = "OpenCL 3.0 PoCL";
  caps.cl_major = 3;
  caps.device_type = CL_DEVICE_TYPE_CPU;
  caps.vendor = "AuthenticAMD";
  caps.compute_units = 2;
  caps.max_clock_mhz = 2596;
  caps.local_mem_bytes = 1 << 20;
  caps.native_float_width = 16;
  caps.isa = device_isa(caps.device_name, isa_width_from);
  return caps;
}

// No entry names the device: the entries of the measured device most like
// it decide (by what each reports, not by a name pattern), and the
// explanation names that device and the figures; a device unlike every
// measured one (another ISA) gets none, and is told which came nearest.
TEST(Store, AnUnseenDeviceTakesTheMostSimilarMeasuredDevicesEntries) {
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  auto measured = [&](const DeviceCaps& caps, const std::string& first) {
    TuningEntry e = entry(m, {1024, 1024, 1024}, first, "matmul_tiled_TILE4");
    e.platform = caps.platform_name;
    e.device = caps.device_name;
    e.driver = caps.driver_version;
    e.measured_on = caps.profile();
    return e;
  };
  const DeviceCaps zen4 = pocl_cpu("skylake-avx512"), zen3 = pocl_cpu("znver3");
  Store store;
  store.put_tuning(measured(zen4, "matmul_tiled_TILE16"));
  store.put_tuning(measured(zen3, "matmul_tiled_TILE8"));
  // A Zen 1 (AVX2, a lower clock): the znver3 measurement, not the AVX-512 one.
  DeviceCaps zen1 = pocl_cpu("znver1");
  zen1.max_clock_mhz = 2000;
  ASSERT_EQ(zen1.isa, "avx2");
  TuningMatch on_zen1 = store.find_tuning(zen1, m, {1000, 1000, 1000});
  ASSERT_TRUE(on_zen1.entry) << on_zen1.to_string();
  EXPECT_EQ(on_zen1.entry->ranking.front().variant, "matmul_tiled_TILE8");
  EXPECT_GE(on_zen1.similarity, kSimilarEnough);
  EXPECT_LT(on_zen1.similarity, 1);
  const std::string why = on_zen1.to_string();
  EXPECT_NE(why.find("the most similar measured device is pthread-znver3-AMD EPYC [3.1+debian], "
                     "similarity 0.98 (same vendor, same ISA (avx2), compute units 2 here, 2 "
                     "there, MHz 2000 here, 2596 there"),
            std::string::npos)
      << why;
  // Another device that reports the znver3 one's figures exactly (PoCL built
  // for znver1 on the same machine): a neighbour, never "this device".
  const TuningMatch on_twin = store.find_tuning(pocl_cpu("znver1"), m, {1000, 1000, 1000});
  ASSERT_TRUE(on_twin.entry) << on_twin.to_string();
  EXPECT_EQ(on_twin.entry->ranking.front().variant, "matmul_tiled_TILE8");
  EXPECT_LT(on_twin.similarity, 1);
  EXPECT_NE(on_twin.to_string().find("the most similar measured device is pthread-znver3-AMD EPYC"),
            std::string::npos)
      << on_twin.to_string();
  // A Zen 5 (AVX-512): the AVX-512 measurement.
  const TuningMatch on_zen5 = store.find_tuning(pocl_cpu("znver5"), m, {1024, 1024, 1024});
  ASSERT_TRUE(on_zen5.entry);
  EXPECT_EQ(on_zen5.entry->ranking.front().variant, "matmul_tiled_TILE16");
  // An Intel Xeon with AVX-512 under the same PoCL, which compiles for
  // "skylake-avx512" there too: another maker and twice the level-2 cache
  // (PoCL's local memory), yet the AVX-512 measurement, not the AVX2 one.
  DeviceCaps xeon = pocl_cpu("skylake-avx512");
  xeon.device_name = "pthread-skylake-avx512-Intel(R) Xeon(R) Processor";
  xeon.vendor = "GenuineIntel";
  xeon.max_clock_mhz = 2300;
  xeon.local_mem_bytes = 2 << 20;
  const TuningMatch on_xeon = store.find_tuning(xeon, m, {1024, 1024, 1024});
  ASSERT_TRUE(on_xeon.entry) << on_xeon.to_string();
  EXPECT_EQ(on_xeon.entry->ranking.front().variant, "matmul_tiled_TILE16");
  EXPECT_GE(on_xeon.similarity, kSimilarEnough);
  EXPECT_NE(on_xeon.to_string().find("vendor GenuineIntel here, AuthenticAMD there, same ISA "
                                     "(avx512)"),
            std::string::npos)
      << on_xeon.to_string();
  // The measured device itself: its own entry, similarity 1, no neighbour named.
  const TuningMatch on_zen4 = store.find_tuning(zen4, m, {1024, 1024, 1024});
  EXPECT_EQ(on_zen4.similarity, 1);
  EXPECT_EQ(on_zen4.to_string().find("most similar"), std::string::npos);
  EXPECT_TRUE(measured_here(*on_zen4.entry, zen4));
  // Another CPU under the same name and driver (Intel's runtime calls every
  // EPYC "AMD EPYC"; a PoCL built for znver3 runs on a Zen 4 too): its
  // figures differ (here L2 as local memory, the vector width), so it is a
  // neighbour, not the device measured.
  DeviceCaps zen4_named_zen3 = zen3;
  zen4_named_zen3.local_mem_bytes /= 2;
  zen4_named_zen3.native_float_width = 8;
  const TuningMatch on_renamed = store.find_tuning(zen4_named_zen3, m, {1024, 1024, 1024});
  ASSERT_TRUE(on_renamed.entry) << on_renamed.to_string();
  EXPECT_EQ(on_renamed.entry->ranking.front().variant, "matmul_tiled_TILE8");
  EXPECT_LT(on_renamed.similarity, 1);
  EXPECT_FALSE(measured_here(*on_renamed.entry, zen4_named_zen3));
  EXPECT_NE(on_renamed.to_string().find("the most similar measured device is "
                                        "pthread-znver3-AMD EPYC"),
            std::string::npos)
      << on_renamed.to_string();
  // An ARM CPU under the same PoCL: no measured device is like it.
  const DeviceCaps arm = pocl_cpu("neoverse-v1");
  const TuningMatch on_arm = store.find_tuning(arm, m, {1024, 1024, 1024});
  EXPECT_FALSE(on_arm.entry);
  EXPECT_NE(on_arm.to_string().find("is below the 0.75 at which its entries carry"),
            std::string::npos)
      << on_arm.to_string();
  EXPECT_NE(on_arm.to_string().find("ISA neon here, avx"), std::string::npos) << on_arm.to_string();
  // The measured device with a new driver: like itself, but not the same.
  DeviceCaps upgraded = zen4;
  upgraded.driver_version = "4.0";
  const TuningMatch on_upgraded = store.find_tuning(upgraded, m, {1024, 1024, 1024});
  ASSERT_TRUE(on_upgraded.entry);
  EXPECT_NEAR(on_upgraded.similarity, 0.9, 1e-9);
  // Another platform or device type is never similar.
  DeviceCaps intel = zen1;
  intel.platform_name = "Intel(R) OpenCL";
  EXPECT_FALSE(store.find_tuning(intel, m, {1024, 1024, 1024}).entry);
  DeviceCaps gpu = zen4;
  gpu.device_name = "a GPU under PoCL";
  gpu.device_type = CL_DEVICE_TYPE_GPU;
  EXPECT_EQ(device_similarity(zen4.profile(), gpu.profile()), 0);
}

// A family that computes several forms of its problem (a GEMM's layouts,
// transposes, precisions) keys its entries on the form as well: an entry
// answers its own form only, and one of each form lives side by side.
TEST(Store, EntriesAnswerTheirOwnFormOnly) {
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  Store store;
  TuningEntry nt = entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE32", "matmul_tiled_TILE4");
  nt.form = "col-major NT double";
  store.put_tuning(nt);
  EXPECT_FALSE(store.find_tuning(h200(), m, {1024, 1024, 1024}).entry);
  store.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4"));
  EXPECT_EQ(store.tuning().size(), 2u);
  const TuningMatch plain = store.find_tuning(h200(), m, {1024, 1024, 1024});
  ASSERT_TRUE(plain.entry);
  EXPECT_EQ(plain.entry->ranking.front().variant, "matmul_tiled_TILE8");
  const TuningMatch other =
      store.find_tuning(h200(), m, {1024, 1024, 1024}, {}, false, "col-major NT double");
  ASSERT_TRUE(other.entry);
  EXPECT_EQ(other.entry->ranking.front().variant, "matmul_tiled_TILE32");
  EXPECT_NE(other.to_string().find("matmul_tiled (col-major NT double) on NVIDIA H200"),
            std::string::npos)
      << other.to_string();
  // Written and read back with its form.
  TempDir dir;
  {
    Store file(dir.path / "t.json");
    file.put_tuning(nt);
    file.save();
  }
  Store again(dir.path / "t.json");
  ASSERT_EQ(again.tuning().size(), 1u);
  EXPECT_EQ(again.tuning().front().form, "col-major NT double");
}

TEST(Store, DevicesNameTheirIsa) {
  EXPECT_EQ(device_isa("pthread-skylake-avx512-AMD EPYC", ""), "avx512");
  EXPECT_EQ(device_isa("pthread-znver4-AMD EPYC 9R14", ""), "avx512");
  EXPECT_EQ(device_isa("pthread-znver1-AMD EPYC 7551", ""), "avx2");
  EXPECT_EQ(device_isa("pthread-haswell-Intel(R) Xeon(R)", ""), "avx2");
  EXPECT_EQ(device_isa("pthread-skylake-Intel(R) Core(TM)", ""), "avx2");
  EXPECT_EQ(device_isa("NVIDIA H200", "cl_khr_fp64 cl_nv_device_attribute_query", 9, 0), "sm_90");
  EXPECT_EQ(device_isa("AMD EPYC", "cl_khr_fp64"), "");
  // Without an ISA in its name, a CPU's native vector width stands for it.
  DeviceCaps a = pocl_cpu("x"), b = pocl_cpu("y");
  a.isa = b.isa = "";
  b.native_float_width = 8;
  std::string why;
  EXPECT_LT(device_similarity(a.profile(), b.profile(), &why), kSimilarEnough);
  EXPECT_NE(why.find("native float vector width 8 here, 16 there"), std::string::npos) << why;
}

TEST(Store, SavedEntriesAndOutcomesReadBack) {
  TempDir dir;
  const fs::path path = dir.path / "sub" / "tuning.json";
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  {
    Store store(path);
    EXPECT_EQ(store.why_not_used(), "");
    TuningEntry e = entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4");
    DeviceCaps caps = h200();
    caps.device_type = CL_DEVICE_TYPE_GPU;
    caps.vendor = "NVIDIA Corporation";
    caps.isa = "sm_90";
    caps.compute_units = 132;
    caps.max_clock_mhz = 1980;
    caps.local_mem_bytes = 49152;
    caps.native_float_width = 1;
    e.measured_on = caps.profile();
    store.put_tuning(e);
    store.remember({"dev|1", "abc", Tier::SpirV}, {RememberedOutcome::Kind::Trial, "", ""});
    store.remember({"dev|1", "def -DTILE=8", Tier::Source},
                   {RememberedOutcome::Kind::Build, "clBuildProgram failed", ""});
    store.remember({"dev|1", "ptx sha", Tier::Ptx},
                   {RememberedOutcome::Kind::Trial, "wrong result", ""});
    store.save();
  }
  Store again(path);
  EXPECT_EQ(again.why_not_used(), "");
  ASSERT_EQ(again.tuning().size(), 1u);
  EXPECT_EQ(again.tuning()[0].ranking.front().variant, "matmul_tiled_TILE8");
  EXPECT_EQ(again.tuning()[0].origin, path.string());
  ASSERT_TRUE(again.tuning()[0].measured_on);
  const DeviceProfile p = *again.tuning()[0].measured_on;
  EXPECT_TRUE(p.gpu);
  EXPECT_EQ(p.device, "NVIDIA H200");
  EXPECT_EQ(p.isa, "sm_90");
  EXPECT_EQ(p.compute_units, 132u);
  EXPECT_EQ(p.max_clock_mhz, 1980u);
  EXPECT_EQ(p.local_mem_bytes, 49152u);
  EXPECT_EQ(p.native_float_width, 1u);
  EXPECT_EQ(p.vendor, "NVIDIA Corporation");
  ASSERT_TRUE(again.outcome({"dev|1", "abc", Tier::SpirV}));
  EXPECT_EQ(again.outcome({"dev|1", "abc", Tier::SpirV})->verdict, "");
  const auto build = again.outcome({"dev|1", "def -DTILE=8", Tier::Source});
  ASSERT_TRUE(build);
  EXPECT_EQ(build->kind, RememberedOutcome::Kind::Build);
  EXPECT_EQ(build->verdict, "clBuildProgram failed");
  EXPECT_FALSE(build->date.empty());
  EXPECT_FALSE(again.outcome({"dev|2", "abc", Tier::SpirV}));
  ASSERT_TRUE(again.outcome({"dev|1", "ptx sha", Tier::Ptx}));
  EXPECT_EQ(again.outcome({"dev|1", "ptx sha", Tier::Ptx})->verdict, "wrong result");
  EXPECT_FALSE(again.outcome({"dev|1", "ptx sha", Tier::Source}));
}

// Two stores of one file each add their own entry: both survive.
TEST(Store, ConcurrentWritersMergeUnderTheLock) {
  TempDir dir;
  const fs::path path = dir.path / "tuning.json";
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  Store a(path), b(path);
  a.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4"));
  b.put_tuning(entry(m, {4096, 4096, 4096}, "matmul_tiled_TILE16", "matmul_tiled_TILE4"));
  b.remember({"dev", "x", Tier::Source}, {RememberedOutcome::Kind::Trial, "", ""});
  a.save();
  b.save();
  Store both(path);
  EXPECT_EQ(both.tuning().size(), 2u);
  EXPECT_EQ(both.outcome_count(), 1u);
}

TEST(Store, CorruptForeignOrFutureFilesAreLeftAsFoundWithTheReason) {
  TempDir dir;
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  const struct {
    const char* text;
    const char* reason;
  } cases[] = {
      {"{\"format\": \"fatcl-store\", \"version\": 1, \"tuning\": [", "is not JSON"},
      {"[1, 2, 3]", "is not a fatcl store"},
      {"{\"format\": \"clblast-db\"}", "is not a fatcl store"},
      {"{\"format\": \"fatcl-store\", \"version\": 7}", "has format version 7; this fatcl reads 1"},
      {"{\"format\": \"fatcl-store\", \"version\": 1, \"tuning\": [{\"family\": 3}]}",
       "tuning[0]: field \"family\" is a number, not a string"},
      {"{\"format\": \"fatcl-store\", \"version\": 1, \"tuning\": [{\"family\": \"f\", "
       "\"platform\": \"p\", \"device\": \"d\", \"driver\": \"1\", \"measured\": \"t\", "
       "\"fatcl_version\": \"0\", \"problem\": [0], \"ranking\": []}]}",
       "\"problem\" holds a size of 0"},
      {"{\"format\": \"fatcl-store\", \"version\": 1, \"outcomes\": [{\"device\": \"d\", "
       "\"built\": \"b\", \"tier\": \"cubin\", \"kind\": \"trial\", \"verdict\": \"\", \"date\": "
       "\"t\"}]}",
       "tier \"cubin\" is none of spirv, ptx, source"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const fs::path path = dir.path / "tuning.json";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << c.text;
    Store store(path);
    EXPECT_NE(store.why_not_used().find(c.reason), std::string::npos) << store.why_not_used();
    EXPECT_NE(store.why_not_used().find(path.string()), std::string::npos) << store.why_not_used();
    // Lookups still answer (shipped entries, then the family's ranking) and say why.
    const TuningMatch match = store.find_tuning(h200(), m, {1024, 1024, 1024});
    EXPECT_NE(match.to_string().find("is not used"), std::string::npos) << match.to_string();
    store.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4"));
    try {
      store.save();
      ADD_FAILURE() << "saved over a file it could not read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("left as found"), std::string::npos) << e.what();
    }
    EXPECT_EQ(test::read_file(path), c.text);
  }
}

// A writer killed at any moment leaves the previous file or the new one,
// never a part: the rename is atomic.
TEST(Store, AKilledWriterLeavesAReadableFile) {
  TempDir dir;
  const fs::path path = dir.path / "tuning.json";
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  {
    Store first(path);
    first.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4"));
    first.save();
  }
  for (int round = 0; round < 20; ++round) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      Store store(path);
      for (int i = 0;; ++i) {
        // A large store, rewritten over and over until killed.
        store.remember({"dev", "module " + std::to_string(i), Tier::SpirV},
                       {RememberedOutcome::Kind::Trial, std::string(2000, 'x'), ""});
        store.save();
      }
    }
    usleep(static_cast<useconds_t>(2000 + round * 1500));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    Store after(path);
    ASSERT_EQ(after.why_not_used(), "") << "round " << round;
    ASSERT_EQ(after.tuning().size(), 1u);
  }
}

// A temporary file a killed writer left beside the store goes at the next
// save once it is an hour old; a fresh one (a writer at work) stays.
TEST(Store, ASaveRemovesTheStaleTemporariesOfKilledWriters) {
  TempDir dir;
  const fs::path path = dir.path / "tuning.json";
  const fs::path old_temp = dir.path / "tuning.json.Ab12Cd";
  const fs::path new_temp = dir.path / "tuning.json.Xy34Zw";
  const fs::path other = dir.path / "notes.json.Ab12Cd";
  for (const fs::path& p : {old_temp, new_temp, other}) std::ofstream(p) << "{\"form";
  for (const fs::path& p : {old_temp, other}) {
    fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(2));
  }
  Store store(path);
  store.remember({"dev", "module", Tier::SpirV}, {RememberedOutcome::Kind::Trial, "", ""});
  store.save();
  EXPECT_FALSE(fs::exists(old_temp));
  EXPECT_TRUE(fs::exists(new_temp));
  EXPECT_TRUE(fs::exists(other));  // not the store's
  EXPECT_EQ(Store(path).outcome_count(), 1u);
}

// A family's own entries (FamilyDescription::shipped_tuning) answer where
// the file has none, and the file's entry for the same class wins.
TEST(Store, TheFamilysShippedEntriesComeAfterTheFilesOwn) {
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  std::vector<TuningEntry> shipped = {
      entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4")};
  shipped.front().origin = "shipped with the family";
  Store store;
  EXPECT_FALSE(store.find_tuning(h200(), m, {1024, 1024, 1024}).entry);
  const TuningMatch from_family = store.find_tuning(h200(), m, {1024, 1024, 1024}, shipped);
  ASSERT_TRUE(from_family.entry);
  EXPECT_EQ(from_family.entry, &shipped.front());
  EXPECT_NE(from_family.to_string().find("(shipped with the family)"), std::string::npos)
      << from_family.to_string();
  store.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE32", "matmul_tiled_TILE4"));
  const TuningMatch own = store.find_tuning(h200(), m, {1024, 1024, 1024}, shipped);
  ASSERT_TRUE(own.entry);
  EXPECT_EQ(own.entry->ranking.front().variant, "matmul_tiled_TILE32");
}

// A family reads its entries from a store document it embeds.
TEST(Store, AFamilyParsesItsShippedEntries) {
  Store store;
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  store.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE16", "matmul_tiled_TILE4"));
  TempDir dir;
  Store file(dir.path / "tuning.json");
  file.put_tuning(store.tuning().front());
  file.save();
  std::ifstream in(dir.path / "tuning.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<TuningEntry> entries = parse_tuning_entries(text, "shipped with the family");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries.front().origin, "shipped with the family");
  EXPECT_EQ(entries.front().ranking.front().tier, Tier::Source);
  EXPECT_NE(test::error_of([] {
              parse_tuning_entries(
                  "{\"format\": \"fatcl-store\", \"version\": 1, "
                  "\"tuning\": [{\"family\": 3}]}",
                  "family x");
            })
                .find("store family x: tuning[0]: field \"family\" is a number, not a "
                      "string"),
            std::string::npos);
  // What the measured device reported is checked field by field, and names
  // one device, never a pattern.
  const std::string head =
      "{\"format\": \"fatcl-store\", \"version\": 1, \"tuning\": [{\"family\": \"f\", "
      "\"platform\": \"p\", \"driver\": \"1\", \"measured\": \"now\", \"fatcl_version\": "
      "\"0\", \"problem\": [1], \"ranking\": [], ";
  const std::string profile =
      "\"measured_on\": {\"gpu\": false, \"vendor\": \"v\", \"isa\": \"\", "
      "\"compute_units\": 2, \"max_clock_mhz\": -5, \"local_mem_bytes\": 0, "
      "\"native_float_width\": 8}}]}";
  EXPECT_NE(test::error_of([&] {
              parse_tuning_entries(head + "\"device\": \"pthread-*\", " + profile, "x");
            }).find("an entry with \"measured_on\" names its device, not a pattern"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              parse_tuning_entries(head + "\"device\": \"d\", " + profile, "x");
            }).find("tuning[0] (f on d) measured_on: field \"max_clock_mhz\" is negative (-5)"),
            std::string::npos)
      << test::error_of([&] { parse_tuning_entries(head + "\"device\": \"d\", " + profile, "x"); });
}

// A system layer (read-only, shared by a fleet) answers where the user's
// file has nothing, the user's entry wins at the same distance, and save()
// never writes the layer's entries into the user's file.
TEST(Store, SystemLayersAnswerAfterTheUsersOwn) {
  TempDir dir;
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  {
    Store system(dir.path / "system.json");
    system.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4"));
    system.save();
  }
  Store user(dir.path / "user.json");
  user.add_layer(dir.path / "system.json");
  EXPECT_TRUE(user.layer_notes().empty());
  const TuningMatch from_layer = user.find_tuning(h200(), m, {1024, 1024, 1024});
  ASSERT_TRUE(from_layer.entry);
  EXPECT_EQ(from_layer.entry->ranking.front().variant, "matmul_tiled_TILE8");
  EXPECT_EQ(from_layer.entry->origin, "system layer " + (dir.path / "system.json").string());
  user.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE32", "matmul_tiled_TILE4"));
  EXPECT_EQ(user.find_tuning(h200(), m, {1024, 1024, 1024}).entry->ranking.front().variant,
            "matmul_tiled_TILE32");
  user.save();
  Store again(dir.path / "user.json");
  ASSERT_EQ(again.tuning().size(), 1u) << "the layer's entry was written into the user's file";
  EXPECT_EQ(again.tuning().front().ranking.front().variant, "matmul_tiled_TILE32");
}

// A fleet's shared system layer: four processes read it over and over
// while a fifth replaces it (a merged database installed again and again,
// each time larger): every read finds a whole file with the entry in it.
TEST(Store, ManyReadersOfASystemLayerWhileItIsReplaced) {
  TempDir dir;
  const fs::path layer = dir.path / "system.json";
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  {
    Store first(layer);
    first.put_tuning(entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4"));
    first.save();
  }
  const pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    for (int i = 0; i < 300; ++i) {
      Store merged(layer);
      merged.put_tuning(entry(m, {std::size_t(2) << (i % 12), 64, 64}, "matmul_tiled_TILE16",
                              "matmul_tiled_TILE4"));
      // Sixteen outcomes in turn: the layer is replaced 300 times at about
      // 50 KB, not grown to a megabyte (seconds, not half a minute, a run).
      merged.remember({"dev", "module " + std::to_string(i % 16), Tier::SpirV},
                      {RememberedOutcome::Kind::Trial, std::string(3000, 'x'), ""});
      merged.save();
    }
    _exit(0);
  }
  std::vector<pid_t> readers;
  for (int r = 0; r < 4; ++r) {
    const pid_t reader = fork();
    ASSERT_GE(reader, 0);
    if (reader == 0) {
      for (int i = 0; i < 300; ++i) {
        Store user;
        user.add_layer(layer);
        const TuningMatch match = user.find_tuning(h200(), m, {1024, 1024, 1024});
        if (!user.layer_notes().empty() || !match.entry ||
            match.entry->ranking.front().variant != "matmul_tiled_TILE8") {
          _exit(1);
        }
      }
      _exit(0);
    }
    readers.push_back(reader);
  }
  for (pid_t reader : readers) {
    int status = 0;
    waitpid(reader, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a reader saw a partial layer";
  }
  int status = 0;
  waitpid(writer, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Store after(layer);
  EXPECT_EQ(after.why_not_used(), "");
  EXPECT_EQ(after.tuning().size(), 13u);  // the first entry and twelve size classes
}

TEST(Store, AMissingOrDamagedLayerIsPassedOverWithTheReason) {
  TempDir dir;
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  std::ofstream(dir.path / "broken.json") << "{\"format\": \"fatcl-store\", \"version\": 1, \"tun";
  Store store;
  store.add_layer(dir.path / "gone.json");
  store.add_layer(dir.path / "broken.json");
  const std::vector<std::string> notes = store.layer_notes();
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("gone.json is not used: it does not exist"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("broken.json is not used: store"), std::string::npos) << notes[1];
  EXPECT_NE(notes[1].find("is not JSON"), std::string::npos) << notes[1];
  const std::string said = store.find_tuning(h200(), m, {1024, 1024, 1024}).to_string();
  EXPECT_NE(said.find("gone.json is not used"), std::string::npos) << said;
}

TEST(Store, SystemPathsFollowTheEnvironment) {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "xdg" / "fatcl");
  std::ofstream(dir.path / "xdg" / "fatcl" / "tuning.json") << "{}";
  setenv("FATCL_TUNING_SYSTEM", "/a/one.json:/b/two.json", 1);
  EXPECT_EQ(Store::system_paths(),
            (std::vector<std::filesystem::path>{"/a/one.json", "/b/two.json"}));
  unsetenv("FATCL_TUNING_SYSTEM");
  setenv("XDG_CONFIG_DIRS", ("/nowhere:" + (dir.path / "xdg").string()).c_str(), 1);
  EXPECT_EQ(Store::system_paths(),
            (std::vector<std::filesystem::path>{dir.path / "xdg" / "fatcl" / "tuning.json"}));
  unsetenv("XDG_CONFIG_DIRS");
}

// Merging another node's entries: new keys are added with their
// provenance; for a key already there this fatcl version's measurement
// wins over another version's, and between the same version the newer.
TEST(Store, MergePrefersThisVersionThenTheNewerAndKeepsProvenance) {
  const Manifest m = test::tiled_manifest({4, 8, 16, 32});
  Store store;
  TuningEntry mine = entry(m, {1024, 1024, 1024}, "matmul_tiled_TILE8", "matmul_tiled_TILE4");
  mine.measured = "2026-11-30T10:00:00Z";
  store.put_tuning(mine);

  TuningEntry newer = mine;
  newer.ranking.front().variant = "matmul_tiled_TILE16";
  newer.measured = "2026-12-01T10:00:00Z";
  newer.provenance = "fatcl tune on node-7";
  TuningEntry other_class = entry(m, {64, 64, 64}, "matmul_tiled_TILE4", "matmul_tiled_TILE8");
  Store::MergeCount c = store.merge({newer, other_class});
  EXPECT_EQ(c.added, 1u);
  EXPECT_EQ(c.replaced, 1u);
  const TuningMatch match = store.find_tuning(h200(), m, {1024, 1024, 1024});
  ASSERT_TRUE(match.entry);
  EXPECT_EQ(match.entry->ranking.front().variant, "matmul_tiled_TILE16");
  EXPECT_EQ(match.entry->provenance, "fatcl tune on node-7");

  TuningEntry old_version = newer;
  old_version.fatcl_version = "0.0.1";
  old_version.measured = "2026-12-24T10:00:00Z";  // newer, but by another fatcl
  old_version.ranking.front().variant = "matmul_tiled_TILE32";
  c = store.merge({old_version});
  EXPECT_EQ(c.kept, 1u);
  EXPECT_EQ(store.find_tuning(h200(), m, {1024, 1024, 1024}).entry->ranking.front().variant,
            "matmul_tiled_TILE16");
  TuningEntry older = newer;
  older.measured = "2026-11-01T10:00:00Z";
  older.ranking.front().variant = "matmul_tiled_TILE4";
  EXPECT_EQ(store.merge({older}).kept, 1u);
}

TEST(Store, SizeClassesRoundToPowersOfTwo) {
  EXPECT_EQ(size_class({1024, 1000, 1500}), "2^10x2^10x2^11");
  EXPECT_EQ(size_class({1, 64, 8192}), "2^0x2^6x2^13");
}

}  // namespace
}  // namespace fatcl
