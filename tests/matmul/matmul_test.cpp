// Every variant, in the tier a ctest entry names, against a double-precision
// CPU reference on one OpenCL runtime. The runtime is chosen by the entry's
// environment (OCL_ICD_VENDORS, RUSTICL_ENABLE, or running under oclgrind):
//   FATCL_TEST_PLATFORM   substring of the platform name to use (required)
//   FATCL_TEST_NEEDS      a file the runtime needs (e.g. the built PoCL's .icd)
//   FATCL_TEST_VARIANT    variant to test, with FATCL_TEST_TIER (spirv|ptx|source)
//   FATCL_TEST_SIZES      "small" for slow runtimes; "edges": 1x1x1 and one below and
//                         above the variant's tile in each dimension (Oclgrind)
//   FATCL_TEST_EXPECT_TIER  for the automatic choice: the tier it must pick
//   FATCL_REQUIRE_RUNTIMES  set: a missing runtime fails instead of skipping
#include "fatcl/matmul.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <thread>

#include "fatcl/bench.hpp"
#include "fatcl/cache.hpp"
#include "fatcl/offline.hpp"
#include "fatcl/store.hpp"
#include "matmul_tiled.hpp"
#include "test_runtime.hpp"

namespace fatcl {
namespace {

using test::env;

struct Runtime {
  std::string missing;  // why the runtime is not there; "" if it is
  cl::Device device;
  cl::Context context;
  cl::CommandQueue queue;
  // The variant FATCL_TEST_VARIANT names, built once (see requested_matmul).
  std::unique_ptr<Matmul> requested;
  std::string requested_error;
};

Runtime open_runtime() {
  test::OpenedRuntime o = test::open_runtime_from_env();
  Runtime r;
  r.missing = o.missing;
  r.device = o.device;
  r.context = o.context;
  r.queue = o.queue;
  return r;
}

Runtime& runtime() {
  static Runtime r = open_runtime();
  return r;
}

// Releases the OpenCL objects before main returns: released during static
// destruction they can outlive the runtime library (Oclgrind aborts then).
class ReleaseRuntime : public testing::Environment {
 public:
  void TearDown() override { runtime() = Runtime{}; }
};
testing::Environment* const release_runtime = testing::AddGlobalTestEnvironment(new ReleaseRuntime);

#define REQUIRE_RUNTIME() FATCL_REQUIRE_RUNTIME(runtime().missing)

struct Size {
  std::size_t m, n, k;
};

std::string size_name(const testing::TestParamInfo<Size>& info) {
  return std::to_string(info.param.m) + "x" + std::to_string(info.param.n) + "x" +
         std::to_string(info.param.k);
}

// C = A*B on the device with fresh random inputs and C poisoned with NaN
// (run_checked); returns the relative-norm error of every row against the
// double-precision reference, NaN if it did not run.
double run_and_compare(const Matmul& matmul, Size s) {
  Runtime& rt = runtime();
  std::mt19937 rng(std::random_device{}());
  const MatmulProblem p =
      make_matmul_problem(rt.context, s.m, s.n, s.k, MatmulInputs::Random, &rng, SIZE_MAX);
  const CheckedRun r = run_checked(rt.queue, p, [&] {
    matmul.enqueue(rt.queue, p.a, p.b, p.c, s.m, s.n, s.k);
    return std::string();
  });
  EXPECT_TRUE(r.ran) << r.failure;
  return r.relative_error;
}

MatmulOptions requested() {
  MatmulOptions o;
  o.variant = env("FATCL_TEST_VARIANT");
  o.tier = parse_tier(env("FATCL_TEST_TIER"));
  return o;
}

class VariantTest : public testing::TestWithParam<Size> {};

// The requested variant, built once per process: each size reuses it (a
// blocked variant takes seconds to build on PoCL with its cache off).
Matmul* requested_matmul(std::string* failure) {
  Runtime& rt = runtime();
  if (!rt.requested && rt.requested_error.empty()) {
    try {
      rt.requested = std::make_unique<Matmul>(rt.context, rt.device, requested());
    } catch (const Error& e) {
      rt.requested_error = e.what();
    }
  }
  *failure = rt.requested_error;
  return rt.requested.get();
}

TEST_P(VariantTest, MatchesReference) {
  REQUIRE_RUNTIME();
  if (env("FATCL_TEST_VARIANT").empty()) GTEST_SKIP() << "FATCL_TEST_VARIANT not set";
  const MatmulOptions options = requested();
  // A variant that does not fit this device (32 KiB of local memory on
  // rusticl and Oclgrind; on Oclgrind, whose kernels get the __local memory
  // of their whole program, the blocked points whose two kernels' tiles add
  // up to more) must be refused with that reason, not run.
  const Family& family = matmul_family(matmul_kernel_of(options.variant));
  const DeviceCaps caps = DeviceCaps::query(runtime().device);
  const Plan p = plan(family.manifest(), caps, {options.variant, options.tier, {}},
                      family.description().ranking);
  if (p.chain.empty()) {
    std::string why;
    for (const Step& s : p.rejected) {
      if (s.variant == options.variant) why = s.reason;
    }
    ASSERT_TRUE(why.find("needs ") != std::string::npos ||
                why.find("its program declares") != std::string::npos)
        << why;
    std::string failure;
    EXPECT_EQ(requested_matmul(&failure), nullptr);
    EXPECT_NE(failure.find(why), std::string::npos) << failure;
    std::cout << "refused as it should be: " << why << "\n";
    return;
  }
  std::string failure;
  Matmul* matmul = requested_matmul(&failure);
  if (!matmul) FAIL() << "the requested variant does not load: " << failure;
  ASSERT_EQ(matmul->loaded().variant.name, options.variant);
  ASSERT_EQ(matmul->loaded().tier, *options.tier);
  const double error = run_and_compare(*matmul, GetParam());
  EXPECT_LE(error, kMatmulTolerance)
      << matmul->explanation().to_string(Explanation::Detail::EveryStep);
}

// Odd sizes, one-row and one-column products, exact tiles, K past 65,536
// (split into launches: llvmpipe stops loops there), and rows of B 4 KiB
// apart with K past 1024 (a CPU point that reads B in place gets B copied
// with longer rows, and K in launches of 1024).
std::vector<Size> sizes() {
  std::vector<Size> all = {{1, 1, 1},       {17, 33, 65},  {33, 17, 40},    {1000, 1, 999},
                           {1, 1000, 7},    {64, 64, 64},  {257, 129, 511}, {512, 384, 320},
                           {256, 256, 256}, {7, 9, 65600}, {33, 1024, 1100}};
  if (env("FATCL_TEST_SIZES") == "small") all.resize(3);
  if (env("FATCL_TEST_SIZES") == "edges" && !env("FATCL_TEST_VARIANT").empty()) {
    // The variant's own tile edges: 1x1x1, and one below and one above a
    // tile multiple in each dimension, M != N != K (Oclgrind checks every
    // access of the ragged tiles). A blocked variant's second shape has
    // two whole tiles across N instead: its fast path with aligned rows and
    // its last row of tiles moved up to end at M; the first moves its last
    // column of tiles left to end at N (unaligned: vloadN) and has fewer
    // rows than a tile (guarded).
    try {
      const std::string name = env("FATCL_TEST_VARIANT");
      const Variant& v = matmul_family(matmul_kernel_of(name)).manifest().variant(name);
      auto param = [&](const char* key, std::size_t fallback) {
        for (const auto& [k, value] : v.params) {
          if (k == key) return static_cast<std::size_t>(value);
        }
        return fallback;
      };
      // A skinny variant's tile: MS rows and WGN * VW columns read K in
      // steps of 4 * WGK (few-rows); RG rows and NS columns read K in steps
      // of WG * VW (few-columns).
      const std::size_t tile = param("TILE", 16);
      std::size_t mt = param("MWG", tile), nt = param("NWG", tile), kt = param("KWG", tile);
      if (param("WGN", 0)) {
        mt = param("MS", 0), nt = param("WGN", 0) * param("VW", 0), kt = 4 * param("WGK", 0);
      } else if (param("WG", 0)) {
        mt = param("RG", 0) + 2, nt = param("NS", 0), kt = param("WG", 0) * param("VW", 0);
      }
      auto below = [](std::size_t t) { return t > 2 ? t - 1 : std::size_t(2); };
      const std::size_t second_n = param("MWG", 0) ? 2 * nt : below(nt);
      all = {{1, 1, 1}, {below(mt), nt + 1, kt + 1}, {mt + 1, second_n, below(kt)}};
    } catch (const Error&) {
      // An unknown variant: the test itself reports it.
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Sizes, VariantTest, testing::ValuesIn(sizes()), size_name);

// The loader's own order of tiers, without measurements: a tuning entry may
// put a tier first that it measured faster (Intel's merged entries take the
// source build at 1024^3, 2026-12-02).
TEST(Auto, ChoosesTheExpectedTierAndExplainsEveryVariant) {
  REQUIRE_RUNTIME();
  MatmulOptions untuned;
  untuned.use_tuning = false;
  Matmul matmul(runtime().context, runtime().device, untuned);
  const std::string text = matmul.explanation().to_string(Explanation::Detail::EveryStep);
  EXPECT_EQ(to_string(matmul.loaded().tier), env("FATCL_TEST_EXPECT_TIER")) << text;
  EXPECT_NE(text.find("chosen: " + matmul.loaded().variant.name), std::string::npos) << text;
  EXPECT_EQ(matmul.kernel(), MatmulKernel::Blocked) << text;
  // Every variant has a line: per tier where it fits, else one for the variant.
  for (const fatcl::Variant& v : matmul_family(matmul.kernel()).manifest().variants) {
    const bool both_tiers = text.find(v.name + " [spirv]") != std::string::npos &&
                            text.find(v.name + " [source]") != std::string::npos;
    const bool whole = text.find("  " + v.name + " ") != std::string::npos;
    EXPECT_TRUE(both_tiers || whole) << v.name << "\n" << text;
  }
  EXPECT_LE(run_and_compare(matmul, {67, 45, 89}), kMatmulTolerance) << text;
}

// The PTX tier: on NVIDIA's OpenCL every variant loads from its PTX (the
// VariantTest entries check each against the reference), and the
// explanation says so; elsewhere asking for it is refused with the reason.
TEST(Auto, PtxTierLoadsOnNvidiaOnly) {
  REQUIRE_RUNTIME();
  Runtime& rt = runtime();
  const DeviceCaps caps = DeviceCaps::query(rt.device);
  MatmulOptions o;
  o.tier = Tier::Ptx;
  o.variant = "matmul_tiled_TILE16";
  if (caps.is_nvidia()) {
    Matmul matmul(rt.context, rt.device, o);
    const std::string text = matmul.explanation().to_string(Explanation::Detail::EveryStep);
    EXPECT_EQ(matmul.loaded().tier, Tier::Ptx) << text;
    EXPECT_NE(text.find("chosen: matmul_tiled_TILE16 (ptx tier)"), std::string::npos) << text;
    EXPECT_NE(text.find("through clCreateProgramWithBinary"), std::string::npos) << text;
    EXPECT_LE(run_and_compare(matmul, {67, 45, 89}), kMatmulTolerance) << text;
    return;
  }
  try {
    Matmul matmul(rt.context, rt.device, o);
    FAIL() << "the PTX tier loaded on " << caps.platform_name;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("PTX is taken only by NVIDIA's OpenCL"), std::string::npos)
        << e.what();
  }
}

// The opt-in self-check: a build whose trial problem computes wrong (here a
// trial launch that says so for the first variant, as a miscompiling driver
// would) is marked bad for this device and driver and the chain moves on;
// the verdict is remembered, and one that passes is said too.
TEST(Auto, SelfCheckMovesPastAVariantThatComputesWrong) {
  REQUIRE_RUNTIME();
  const Family& tiled = matmul_family(MatmulKernel::Tiled);
  const DeviceCaps caps = DeviceCaps::query(runtime().device);
  const std::vector<const Variant*> order =
      plan(tiled.manifest(), caps, {}, tiled.description().ranking).variants();
  ASSERT_GE(order.size(), 2u);
  const std::string bad = order[0]->name;
  auto store = std::make_shared<Store>();
  LoadOptions o;
  o.store = store;
  o.use_tuning = false;
  o.self_check = true;
  o.trial = [&](const cl::Context& c, const cl::Device& d, const cl::Kernel& k,
                const Variant& v) -> std::string {
    if (v.name == bad) return "C[0][0] is 3.5, the reference says 4 (injected)";
    return matmul_trial_launch(MatmulKernel::Tiled, c, d, k, v);
  };
  const LoadedKernel k = load(runtime().context, runtime().device, tiled, o);
  const std::string text = k.explanation.to_string(Explanation::Detail::EveryStep);
  EXPECT_NE(k.variant.name, bad) << text;
  // Where the driver misreports CL_KERNEL_WORK_GROUP_SIZE (rusticl, NVIDIA)
  // the same trial problem already runs to settle that, and says so.
  EXPECT_NE(text.find(bad + " [" + to_string(k.tier) + "]"), std::string::npos) << text;
  EXPECT_NE(text.find("C[0][0] is 3.5, the reference says 4 (injected)"), std::string::npos)
      << text;
  // The bad build fails by the self-check, or, where the driver misreports
  // its work-group size for that variant, by the same trial run to settle it.
  EXPECT_TRUE(text.find("self-check failed, so this build is marked bad for this device and "
                        "driver: C[0][0] is 3.5") != std::string::npos ||
              text.find("the trial launch failed: C[0][0] is 3.5") != std::string::npos)
      << text;
  EXPECT_NE(
      text.find(k.settled_by_trial ? "(that trial launch is the self-check)"
                                   : "self-check: the trial problem matched the CPU reference"),
      std::string::npos)
      << text;
  const LoadedKernel again = load(runtime().context, runtime().device, tiled, o);
  EXPECT_NE(again.explanation.to_string(Explanation::Detail::EveryStep)
                .find("remembered for this device and driver since"),
            std::string::npos)
      << again.explanation.to_string(Explanation::Detail::EveryStep);
}

TEST(Auto, BadInputsAreRefusedWithTheirCause) {
  REQUIRE_RUNTIME();
  Runtime& rt = runtime();
  Matmul matmul(rt.context, rt.device);
  cl_int err = CL_SUCCESS;
  cl::Buffer small(rt.context, CL_MEM_READ_WRITE, 16 * 4, nullptr, &err);
  cl::Buffer big(rt.context, CL_MEM_READ_WRITE, 64 * 4, nullptr, &err);
  auto message = [&](std::size_t m, std::size_t n, std::size_t k, const cl::Buffer& a) {
    try {
      matmul.enqueue(rt.queue, a, big, big, m, n, k);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(0, 8, 8, big).find("M = 0 is outside"), std::string::npos);
  EXPECT_NE(message(8, 8, 8, small).find("buffer A has 64 B"), std::string::npos);
  EXPECT_THROW(Matmul(rt.context, rt.device, MatmulOptions{MatmulKernel::Tiled, "nope", {}}),
               Error);
}

// A product whose K is split over work-groups (the skinny families and
// blocked): right for every split (including more splits than a part has
// steps), the same bits run after run (the parts are added in a fixed
// order), and C += where K is also split into launches. Auto routes skinny
// shapes to the skinny families and says why.
// Auto weighs the families by the entries measured on this device
// (choose_matmul_family): where they say the tiled family is the fastest
// near a shape, it runs there, the explanation gives the figures, and the
// product is right.
TEST(Auto, MeasuredNeighboursChooseTheFamily) {
  REQUIRE_RUNTIME();
  Runtime& rt = runtime();
  const DeviceCaps caps = DeviceCaps::query(rt.device);
  auto store = std::make_shared<Store>();
  const std::vector<std::size_t> measured{20, 30, 40};
  for (MatmulKernel k : {MatmulKernel::Blocked, MatmulKernel::Tiled, MatmulKernel::Naive}) {
    const Family& family = matmul_family(k);
    const Plan p = plan(family.manifest(), caps, {}, family.description().ranking);
    ASSERT_FALSE(p.chain.empty()) << to_string(k);
    const Candidate& first = p.chain.front();
    TuningEntry e = measured_entry(caps, family.manifest().family, "", measured, "a test");
    e.ranking.push_back({first.variant->name,
                         tier_sha256(family.manifest(), *first.variant, first.tier), first.tier,
                         k == MatmulKernel::Tiled ? 100.0 : 1.0});
    store->put_tuning(e);
  }
  MatmulOptions o;
  o.store = store;
  Matmul matmul(rt.context, rt.device, o);
  const LoadedKernel& chosen = matmul.loaded_for(21, 29, 41);
  EXPECT_EQ(matmul_kernel_of(chosen.variant.name), MatmulKernel::Tiled)
      << chosen.explanation.to_string();
  EXPECT_NE(chosen.explanation.family.find(
                "tiled runs it: its measured neighbour predicts the highest rate"),
            std::string::npos)
      << chosen.explanation.family;
  EXPECT_NE(chosen.explanation.family.find("from the entry matmul_blocked on "), std::string::npos)
      << chosen.explanation.family;
  EXPECT_LE(run_and_compare(matmul, {21, 29, 41}), kMatmulTolerance);
}

TEST(Auto, SkinnyProductsSplitKDeterministically) {
  REQUIRE_RUNTIME();
  Runtime& rt = runtime();
  const std::size_t k_long = matmul_k_per_launch(DeviceCaps::query(rt.device)) + 37;
  std::vector<std::pair<MatmulKernel, Size>> cases{
      {MatmulKernel::FewRows, {5, 300, 1001}},  {MatmulKernel::FewCols, {300, 5, 1001}},
      {MatmulKernel::FewRows, {3, 70, k_long}}, {MatmulKernel::FewCols, {70, 3, k_long}},
      {MatmulKernel::Blocked, {37, 150, 1001}}, {MatmulKernel::Blocked, {20, 70, k_long}}};
  std::vector<std::size_t> split_counts{1, 3, 7};
  // Oclgrind checks every access of the split path, on small products (a
  // second or more a launch there). Not yet the blocked family's: its
  // --uninitialized checker flags the sum of a split blocked product
  // (2026-12-01), whose results are right there without that checker and on
  // every other runtime; not yet explained, and left out here until it is
  // (the stop's notes say so).
  const bool interpreted = env("FATCL_TEST_SIZES") == "edges";
  if (interpreted) {
    cases = {{MatmulKernel::FewRows, {5, 40, 101}}, {MatmulKernel::FewCols, {40, 5, 101}}};
    split_counts = {3};
  }
  for (const auto& [family, size] : cases) {
    for (std::size_t splits : split_counts) {
      MatmulOptions o;
      o.kernel = family;
      o.k_splits = splits;
      Matmul matmul(rt.context, rt.device, o);
      SCOPED_TRACE(std::string(to_string(family)) + " " + std::to_string(size.m) + "x" +
                   std::to_string(size.n) + "x" + std::to_string(size.k) + " in " +
                   std::to_string(splits) + " parts: " + matmul.loaded().variant.name);
      ASSERT_EQ(matmul.kernel(), family);
      EXPECT_LE(run_and_compare(matmul, size), kMatmulTolerance);
      if (interpreted) continue;
      // Twice on the same inputs: the same bits.
      std::mt19937 rng(std::random_device{}());
      const MatmulProblem p =
          make_matmul_problem(rt.context, size.m, size.n, size.k, MatmulInputs::Random, &rng);
      std::vector<float> first(size.m * size.n), second(size.m * size.n);
      for (std::vector<float>* out : {&first, &second}) {
        matmul.enqueue(rt.queue, p.a, p.b, p.c, size.m, size.n, size.k);
        ASSERT_EQ(
            rt.queue.enqueueReadBuffer(p.c, CL_TRUE, 0, out->size() * sizeof(float), out->data()),
            CL_SUCCESS);
      }
      EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
    }
  }
  if (interpreted) return;
  // The rule alone (no tuning entries to weigh the families by: on a device
  // with entries near these shapes, choose_matmul_family may pick another).
  MatmulOptions by_rule;
  by_rule.use_tuning = false;
  Matmul automatic(rt.context, rt.device, by_rule);
  const LoadedKernel& rows = automatic.loaded_for(1, 500, 300);
  const LoadedKernel& cols = automatic.loaded_for(500, 4, 300);
  const LoadedKernel& general = automatic.loaded_for(17, 500, 300);
  EXPECT_EQ(matmul_kernel_of(rows.variant.name), MatmulKernel::FewRows);
  EXPECT_EQ(matmul_kernel_of(cols.variant.name), MatmulKernel::FewCols);
  EXPECT_EQ(matmul_kernel_of(general.variant.name), automatic.kernel());
  EXPECT_NE(rows.explanation.to_string().find("family: M = 1 <= 16 and M <= N: the few-rows "
                                              "family serves 1x500x300"),
            std::string::npos)
      << rows.explanation.to_string();
  EXPECT_NE(cols.explanation.family.find("N = 4 <= "), std::string::npos)
      << cols.explanation.family;
  EXPECT_NE(cols.explanation.family.find(": the few-columns family serves 500x4x300"),
            std::string::npos)
      << cols.explanation.family;
  EXPECT_EQ(general.explanation.family, "");
  EXPECT_LE(run_and_compare(automatic, {1, 500, 300}), kMatmulTolerance);
  EXPECT_LE(run_and_compare(automatic, {500, 4, 300}), kMatmulTolerance);
  EXPECT_THROW(Matmul(rt.context, rt.device,
                      [] {
                        MatmulOptions o;
                        o.k_splits = kMatmulMaxKSplits + 1;
                        return o;
                      }()),
               Error);
}

// Learning online: the first calls of a shape with no entry measured here
// time the candidates on the real calls (every result checked), the
// fastest is kept in the store, and the next Matmul reads it at once.
TEST(Auto, OnlineLearningTimesRealCallsAndTheNextRunReadsIt) {
  REQUIRE_RUNTIME();
  Runtime& rt = runtime();
  auto store = std::make_shared<Store>();
  MatmulOptions o;
  o.online = true;
  o.store = store;
  o.online_options.candidates = 3;
  // The blocked family, whose variants give learning a choice (Auto may
  // give this shape to the naive family, one variant: the H200 does).
  o.kernel = MatmulKernel::Blocked;
  const Size shape{130, 70, 90};
  Matmul matmul(rt.context, rt.device, o);
  const std::string before = matmul.online_report(shape.m, shape.n, shape.k);
  EXPECT_NE(before.find("online: 3 candidates for 130x70x90, 0 timed calls"), std::string::npos)
      << before;
  // The candidates were built as the class was met (OnlineOptions::
  // build_first), so the timing starts at the first call: each candidate a
  // warm-up call and two timed ones, one that ran three times slower than
  // the fastest fewer. Every call computes the whole product.
  {
    std::size_t settled = 0;  // candidates built or failed
    std::string rest = before.substr(before.find("timed calls:") + 12);
    for (std::size_t at = 0; at != std::string::npos;) {
      const std::size_t end = rest.find("; ", at);
      const std::string one = rest.substr(at, end == std::string::npos ? end : end - at);
      if (one.find(" [") != std::string::npos || one.find("did not load") != std::string::npos)
        ++settled;
      at = end == std::string::npos ? end : end + 2;
    }
    EXPECT_EQ(settled, 3u) << before;
  }
  std::size_t calls = 0;
  std::string report;
  do {
    ASSERT_LE(run_and_compare(matmul, shape), kMatmulTolerance) << "call " << calls;
    ++calls;
    report = matmul.online_report(shape.m, shape.n, shape.k);
  } while (report.find("(chosen)") == std::string::npos && calls < 9);
  ASSERT_NE(report.find("(chosen)"), std::string::npos) << report;
  std::cout << "after " << calls << " calls: " << report << "\n";
  EXPECT_NE(report.find("kept in the store"), std::string::npos) << report;
  // At most three candidates of a warm-up call and two timings each.
  const std::size_t timed = std::stoul(report.substr(report.find(", ") + 2));
  EXPECT_GE(timed, 3u) << report;
  EXPECT_LE(timed, 9u) << report;
  const LoadedKernel& learned = matmul.loaded_for(shape.m, shape.n, shape.k);
  EXPECT_NE(report.find(learned.variant.name + " [" + to_string(learned.tier) + "]"),
            std::string::npos)
      << report;
  EXPECT_LE(run_and_compare(matmul, shape), kMatmulTolerance);
  ASSERT_EQ(store->tuning().size(), 1u);
  const TuningEntry e = store->tuning().front();
  EXPECT_EQ(e.problem, (std::vector<std::size_t>{130, 70, 90}));
  EXPECT_EQ(e.provenance.rfind("fatcl online on ", 0), 0u) << e.provenance;
  ASSERT_TRUE(e.measured_on);
  EXPECT_EQ(e.ranking.front().variant, learned.variant.name);
  EXPECT_GT(e.ranking.front().gflops, 0);
  // The next run: the entry decides at once, nothing is learned again.
  Matmul next(rt.context, rt.device, o);
  const LoadedKernel& again = next.loaded_for(shape.m, shape.n, shape.k);
  EXPECT_EQ(again.variant.name, learned.variant.name);
  ASSERT_TRUE(again.tuning_entry);
  EXPECT_EQ(again.tuning_entry->provenance, e.provenance);
  EXPECT_EQ(next.online_report(shape.m, shape.n, shape.k), "");
  EXPECT_LE(run_and_compare(next, shape), kMatmulTolerance);
}

// Every family chooses for itself; the explicit families load their own.
TEST(Auto, EachFamilyLoadsAndComputes) {
  REQUIRE_RUNTIME();
  for (MatmulKernel k : matmul_kernels()) {
    MatmulOptions o;
    o.kernel = k;
    Matmul matmul(runtime().context, runtime().device, o);
    EXPECT_EQ(matmul.kernel(), k);
    // The skinny families on the shapes they serve (any shape is right, but
    // Oclgrind takes minutes over a square one).
    const Size size = k == MatmulKernel::FewRows   ? Size{5, 67, 33}
                      : k == MatmulKernel::FewCols ? Size{45, 3, 33}
                                                   : Size{45, 67, 33};
    EXPECT_LE(run_and_compare(matmul, size), kMatmulTolerance)
        << matmul.explanation().to_string(Explanation::Detail::EveryStep);
  }
}

// A CPU point that reads B in place gets B packed into panels NWG columns
// wide and a launch per panel where B's rows lie a page apart, K is long and
// every unit has rows of tiles (matmul_b_panel_width): two such points, 64
// and 128 columns wide, on a product with a whole number of panels and on
// one whose last panel and the columns after it read B in place, K in two
// launches or more (the later ones add to C), and with C a sub-buffer of a
// larger buffer (C's panels are then cut from its parent) whose guard
// values around it must stay. On a GPU enqueue reads B in place and says so
// by its launch count. Not run on rusticl and Oclgrind, whose builds of
// these points take minutes: the logic is the host's.
TEST(Auto, CpuPointsReadBPackedIntoPanels) {
  REQUIRE_RUNTIME();
  Runtime& rt = runtime();
  const DeviceCaps caps = DeviceCaps::query(rt.device);
  cl_uint align_bits = 0;
  ASSERT_EQ(clGetDeviceInfo(rt.device(), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                            &align_bits, nullptr),
            CL_SUCCESS);
  const std::size_t align = align_bits / 8;
  const std::size_t units = std::max<cl_uint>(1, caps.compute_units);
  std::mt19937 rng(std::random_device{}());
  const Manifest& manifest = matmul_family(MatmulKernel::Blocked).manifest();
  for (const char* name :
       {"matmul_blocked_MWG32_NWG64_KWG8_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI8_PF0_FMA0_DB0_VWA1",
        "matmul_blocked_MWG32_NWG128_KWG4_MDIMC4_NDIMC4_VWM1_VWN16_SA0_SB0_KWI4_PF0_FMA1_DB0_"
        "VWA1"}) {
    const Variant& v = manifest.variant(name);
    const std::size_t width = std::size_t(v.param("NWG"));
    MatmulOptions o;
    o.variant = v.name;
    Matmul matmul(rt.context, rt.device, o);
    const std::size_t m = kMatmulPanelTilesPerUnit * units * std::size_t(v.param("MWG")) + 3;
    const std::size_t k = kMatmulCpuKPerLaunch + 76;
    const bool packs = caps.device_type & CL_DEVICE_TYPE_CPU;
    const bool fits = packs && (width * sizeof(float)) % align == 0;
    const std::size_t step = matmul_k_per_launch(caps, MatmulKernel::Blocked, v);
    for (const std::size_t n : {std::size_t(1024), 1024 + width / 2 + 3}) {
      SCOPED_TRACE(v.name + " on " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                   std::to_string(k));
      const std::size_t chunks = (k + step - 1) / step;
      EXPECT_EQ(matmul.launches(m, n, k), fits ? matmul_panel_launches(n, k, width, step)
                                               : (packs && n == 1024 ? 1 : 0) + chunks);
      if (m > 2048) continue;  // many units: a product too large for a test
      EXPECT_LE(run_and_compare(matmul, {m, n, k}), kMatmulTolerance);
    }
    if (!fits || m > 2048) continue;
    // C as a sub-buffer `align` bytes into a buffer with guards around it.
    const std::size_t n = 1024 + width / 2 + 3, pad = align / sizeof(float);
    const MatmulProblem p = make_matmul_problem(rt.context, m, n, k, MatmulInputs::Random, &rng);
    const float guard = 12345.0f;
    std::vector<float> host(m * n + 2 * pad, guard);
    std::fill(host.begin() + pad, host.end() - pad, std::numeric_limits<float>::quiet_NaN());
    cl::Buffer parent(rt.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                      host.size() * sizeof(float), host.data());
    const cl_buffer_region region{pad * sizeof(float), m * n * sizeof(float)};
    cl_int err = CL_SUCCESS;
    const cl::Buffer c(clCreateSubBuffer(parent(), 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err),
                       false);
    ASSERT_EQ(err, CL_SUCCESS);
    matmul.enqueue(rt.queue, p.a, p.b, c, m, n, k).wait();
    ASSERT_EQ(
        rt.queue.enqueueReadBuffer(parent, CL_TRUE, 0, host.size() * sizeof(float), host.data()),
        CL_SUCCESS);
    for (std::size_t i = 0; i < pad; ++i) {
      ASSERT_EQ(host[i], guard) << "before C, " << i;
      ASSERT_EQ(host[pad + m * n + i], guard) << "after C, " << i;
    }
    std::vector<float> rows;
    for (std::size_t r : p.rows) {
      rows.insert(rows.end(), host.begin() + pad + r * n, host.begin() + pad + (r + 1) * n);
    }
    EXPECT_LE(relative_error(rows, p.reference), kMatmulTolerance) << v.name << ", C a sub-buffer";
  }
}

}  // namespace
}  // namespace fatcl

namespace fatcl {
namespace {

// A trial launch that fails moves the loader down the chain: whatever it
// chooses then needed no trial, and every variant that did is recorded as
// failed with the trial's reason. On rusticl (CL_KERNEL_WORK_GROUP_SIZE reads
// 32) this walks past TILE32, TILE16 and TILE8.
TEST(Auto, FailedTrialLaunchMovesDownTheChain) {
  REQUIRE_RUNTIME();
  forget_trials();
  int calls = 0;
  LoadOptions options;
  options.trial = [&](const cl::Context&, const cl::Device&, const cl::Kernel&,
                      const fatcl::Variant&) {
    ++calls;
    return std::string("refused by the test");
  };
  LoadedKernel k =
      load(runtime().context, runtime().device, matmul_family(MatmulKernel::Tiled), options);
  forget_trials();
  EXPECT_FALSE(k.settled_by_trial);
  EXPECT_LE(k.variant.work_group_items(), k.kernel_work_group_size);
  int failed = 0;
  for (const Step& s : k.explanation.steps) {
    if (s.outcome != Step::Outcome::Failed) continue;
    ++failed;
    EXPECT_NE(s.reason.find("the trial launch failed: refused by the test"), std::string::npos)
        << s.reason;
  }
  EXPECT_EQ(failed, calls) << k.explanation.to_string(Explanation::Detail::EveryStep);
  if (env("FATCL_TEST_MISREPORTS") == "1") {
    EXPECT_GT(calls, 0) << "this driver was expected to under-report CL_KERNEL_WORK_GROUP_SIZE";
  }
}

// A family without a trial launch (as a consumer's own) still loads its
// 1024-item variant where the driver misreports CL_KERNEL_WORK_GROUP_SIZE:
// the known-quirk table settles it, and the result is right.
TEST(Auto, FamilyWithoutTrialLoadsThroughTheQuirkTable) {
  REQUIRE_RUNTIME();
  const Family plain(kernels::matmul_tiled());  // no description: no trial
  LoadOptions options;
  options.variant = "matmul_tiled_TILE32";
  LoadedKernel k = load(runtime().context, runtime().device, plain, options);
  const std::string text = k.explanation.to_string(Explanation::Detail::EveryStep);
  if (env("FATCL_TEST_MISREPORTS") == "1") {
    EXPECT_NE(text.find("a known quirk of this driver, so the device limit is used"),
              std::string::npos)
        << text;
  }
  EXPECT_FALSE(k.settled_by_trial);
  // And it computes: two tiles and a ragged edge, compared exactly.
  EXPECT_EQ(matmul_trial_launch(MatmulKernel::Tiled, runtime().context, runtime().device, k.kernel,
                                k.variant),
            "");
}

// fatcl bench on this runtime: every kernel checked, the automatic choice
// found, the JSON and the chart carry what the issue asks of them.
TEST(Auto, BenchReportsEveryKernel) {
  REQUIRE_RUNTIME();
  BenchOptions options;
  // A kernel found slow at the first size (10x or more below the fastest)
  // is still timed in turn at the second, where a run takes microseconds:
  // timed once, with its check, it would lose to the check's own cost.
  options.shapes = parse_shapes("96x104x112,37x41x29");
  options.top = 2;
  options.repetitions = 1;
  const BenchReport report = run_bench(runtime().context, runtime().device, options);
  ASSERT_EQ(report.sizes.size(), 2u);
  const BenchSize& size = report.sizes[1];
  for (const BenchResult& r : size.results) {
    EXPECT_EQ(r.note.find("timed once"), std::string::npos) << r.variant << ": " << r.note;
  }
  int blocked = 0, tiled = 0, naive = 0;
  for (const BenchResult& r : size.results) {
    EXPECT_TRUE(r.failure.empty() && r.ok) << r.variant << ": " << r.failure;
    blocked += r.kernel == "blocked";
    tiled += r.kernel == "tiled";
    naive += r.kernel == "naive";
  }
  // The top 2, plus the choices with and without tuning where they are others.
  EXPECT_GE(blocked, 2);
  EXPECT_LE(blocked, 4);
  EXPECT_EQ(tiled, 4);
  EXPECT_EQ(naive, 1);
  EXPECT_FALSE(size.auto_variant.empty());
  EXPECT_GT(size.auto_gflops, 0);
  EXPECT_FALSE(size.heuristic_variant.empty());
  EXPECT_GT(size.heuristic_gflops, 0);
  // Both choices were timed in the same turns as the rest, not apart.
  EXPECT_TRUE(size.find("blocked", size.heuristic_variant) ||
              size.find("tiled", size.heuristic_variant))
      << size.heuristic_variant;
  const std::string json = report.to_json();
  EXPECT_NE(json.find("\"auto_vs_best\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"heuristic_vs_best\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"best_fatcl_vs_clblast\": null"), std::string::npos) << json;
  EXPECT_NE(report.to_svg().find("<polyline"), std::string::npos);
}

TEST(Auto, BenchShapesParseAndRefuseNonsense) {
  const std::vector<BenchShape> s = parse_shapes("1024,4096x4096x256");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].label(), "1024");
  EXPECT_EQ(s[1].label(), "4096x4096x256");
  for (const char* bad : {"0", "-5", "12x", "1x2x3x4", "99999999", "abc", ""}) {
    EXPECT_THROW(parse_shapes(bad), Error) << bad;
  }
}

// A module the driver cannot use (here the naive kernel's module standing in
// for every tiled variant, so the kernel is missing) falls back to the same
// variant's source, with the IL failure recorded.
// Precompiled code the driver refuses falls to the same variant's source:
// SPIR-V of another kernel (where the device takes SPIR-V) and garbage PTX
// (on NVIDIA), each step failed with the driver's reason; elsewhere those
// tiers are rejected by the plan.
TEST(Auto, UnusablePrecompiledTiersFallBackToTheSameVariantsSource) {
  REQUIRE_RUNTIME();
  const Family& tiled = matmul_family(MatmulKernel::Tiled);
  const Family& naive = matmul_family(MatmulKernel::Naive);
  const std::string_view wrong = naive.spirv(naive.manifest().variants.front().name);
  static const char garbage[] =
      ".version 5.0\n.target sm_60\n.address_size 64\n.entry matmul_tiled( { bad ptx";
  Manifest m = tiled.manifest();
  std::vector<EmbeddedModule> modules, ptx;
  // The records match the bytes, so the driver itself must refuse them.
  for (fatcl::Variant& v : m.variants) {
    v.spirv_size = wrong.size();
    v.sha256 = sha256_hex(wrong.data(), wrong.size());
    if (v.ptx) v.ptx->size = sizeof garbage - 1;
    if (v.ptx) v.ptx->sha256 = sha256_hex(garbage, sizeof garbage - 1);
    modules.push_back(
        {v.name.c_str(), reinterpret_cast<const unsigned char*>(wrong.data()), wrong.size()});
    if (v.ptx) {
      ptx.push_back(
          {v.name.c_str(), reinterpret_cast<const unsigned char*>(garbage), sizeof garbage - 1});
    }
  }
  const std::string json = m.dump();
  const EmbeddedFamily embedded{json.c_str(),
                                json.size(),
                                tiled.source().data(),
                                tiled.source().size(),
                                modules.data(),
                                modules.size(),
                                ptx.empty() ? nullptr : ptx.data(),
                                ptx.size()};
  const Family broken(embedded);
  LoadOptions options;
  options.variant = "matmul_tiled_TILE16";
  options.trial = matmul_family(MatmulKernel::Tiled).description().trial;
  LoadedKernel k = load(runtime().context, runtime().device, broken, options);
  const std::string text = k.explanation.to_string(Explanation::Detail::EveryStep);
  EXPECT_EQ(k.variant.name, "matmul_tiled_TILE16") << text;
  EXPECT_EQ(k.tier, Tier::Source) << text;
  const Step* spirv = nullptr;
  const Step* ptx_step = nullptr;
  for (const Step& s : k.explanation.steps) {
    if (s.variant == "matmul_tiled_TILE16" && s.tier == Tier::SpirV) spirv = &s;
    if (s.variant == "matmul_tiled_TILE16" && s.tier == Tier::Ptx) ptx_step = &s;
  }
  ASSERT_NE(spirv, nullptr) << text;
  ASSERT_NE(ptx_step, nullptr) << text;
  if (env("FATCL_TEST_EXPECT_TIER") == "spirv") {
    EXPECT_EQ(spirv->outcome, Step::Outcome::Failed) << text;
    EXPECT_NE(spirv->reason.find("matmul_tiled"), std::string::npos) << text;
  } else {
    EXPECT_EQ(spirv->outcome, Step::Outcome::Rejected) << text;
  }
  if (DeviceCaps::query(runtime().device).is_nvidia() && !ptx.empty()) {
    EXPECT_EQ(ptx_step->outcome, Step::Outcome::Failed) << text;
    EXPECT_NE(ptx_step->reason.find("CL_"), std::string::npos) << "names the driver's status\n"
                                                               << text;
  } else {
    EXPECT_EQ(ptx_step->outcome, Step::Outcome::Rejected) << text;
  }
}

}  // namespace
}  // namespace fatcl

#include "fatcl/store.hpp"
#include "fatcl/tune.hpp"

namespace fatcl {
namespace {

// Variants of the blocked family that fit this device, in its ranking.
std::vector<const Variant*> fitting_blocked() {
  const Family& f = matmul_family(MatmulKernel::Blocked);
  const DeviceCaps caps = DeviceCaps::query(runtime().device);
  return plan(f.manifest(), caps, {}, f.description().ranking).variants();
}

TuningEntry entry_for_this_device(std::vector<std::size_t> problem,
                                  const std::vector<const Variant*>& ranking) {
  const DeviceCaps caps = DeviceCaps::query(runtime().device);
  TuningEntry e;
  e.family = "matmul_blocked";
  e.platform = caps.platform_name;
  e.device = caps.device_name;
  e.driver = caps.driver_version;
  e.problem = std::move(problem);
  e.measured = "2026-11-30T00:00:00Z";
  e.fatcl_version = fatcl_version();
  const Manifest& m = matmul_family(MatmulKernel::Blocked).manifest();
  // The first far ahead of the others: the family's model, which carries
  // an entry to nearby sizes by their tiles' padding, keeps the order.
  for (const Variant* v : ranking) {
    const double gflops = e.ranking.empty() ? 100 : 1;
    e.ranking.push_back({v->name, tier_sha256(m, *v, Tier::Source), Tier::Source, gflops});
  }
  return e;
}

// A tuning entry ranks first; Matmul chooses per shape, each choice naming
// its entry, and computes right with each.
TEST(Auto, TuningEntriesChoosePerShape) {
  REQUIRE_RUNTIME();
  const std::vector<const Variant*> fit = fitting_blocked();
  ASSERT_GE(fit.size(), 3u);
  auto store = std::make_shared<Store>();
  store->put_tuning(entry_for_this_device({64, 64, 64}, {fit[1], fit[0]}));
  store->put_tuning(entry_for_this_device({8, 512, 64}, {fit[2], fit[0]}));
  MatmulOptions o;
  o.kernel = MatmulKernel::Blocked;
  o.store = store;
  Matmul matmul(runtime().context, runtime().device, o);
  const Size square{60, 70, 50}, skinny{9, 500, 60};
  const LoadedKernel& a = matmul.loaded_for(square.m, square.n, square.k);
  const LoadedKernel& b = matmul.loaded_for(skinny.m, skinny.n, skinny.k);
  for (const auto& [k, want, shape] :
       {std::tuple{&a, fit[1], "64x64x64"}, std::tuple{&b, fit[2], "8x512x64"}}) {
    const std::string text = k->explanation.to_string(Explanation::Detail::EveryStep);
    EXPECT_NE(
        text.find("tuning entry: matmul_blocked on " + runtime().device.getInfo<CL_DEVICE_NAME>()),
        std::string::npos)
        << text;
    EXPECT_NE(text.find(std::string("for ") + shape + ", measured 2026-11-30T00:00:00Z"),
              std::string::npos)
        << text;
    // The entry's fastest is chosen unless it failed on this driver (said so).
    if (k->variant.name != want->name) {
      EXPECT_NE(text.find(want->name + " ["), std::string::npos) << text;
      EXPECT_NE(text.find("failed"), std::string::npos) << text;
    }
  }
  EXPECT_LE(run_and_compare(matmul, square), kMatmulTolerance);
  EXPECT_LE(run_and_compare(matmul, skinny), kMatmulTolerance);
  // Without tuning: the family's ranking, and the explanation says nothing of entries.
  o.use_tuning = false;
  Matmul plain(runtime().context, runtime().device, o);
  EXPECT_EQ(plain.loaded_for(square.m, square.n, square.k).variant.name,
            plain.loaded().variant.name);
  EXPECT_EQ(plain.loaded().explanation.tuning, "");
}

// A variant forced without a tier runs in the tier its tuning entry measured
// it fastest in, as the automatic choice would run it, not in the loader's
// order (on NVIDIA a point can lead from source and trail as PTX). The entry
// here names the last tier the device takes the variant in, at a size above
// every shipped entry's (a forced variant takes the entry of the largest
// problem tuned on the device; on a CPU the shipped entries were measured on,
// one at 2048^3 named the first tier).
TEST(Auto, AForcedVariantRunsInTheTierItsEntryMeasured) {
  REQUIRE_RUNTIME();
  const std::vector<const Variant*> fit = fitting_blocked();
  ASSERT_FALSE(fit.empty());
  const Variant& v = *fit.front();
  const Manifest& m = matmul_family(MatmulKernel::Blocked).manifest();
  const DeviceCaps caps = DeviceCaps::query(runtime().device);
  std::vector<Tier> tiers;
  for (const Candidate& c : plan(m, caps, {v.name, std::nullopt, {}}).chain) {
    tiers.push_back(c.tier);
  }
  ASSERT_FALSE(tiers.empty());
  TuningEntry e = entry_for_this_device({16384, 16384, 16384}, {&v});
  e.ranking.front().tier = tiers.back();
  e.ranking.front().sha256 = tier_sha256(m, v, tiers.back());
  auto store = std::make_shared<Store>();
  store->put_tuning(e);
  MatmulOptions o;
  o.variant = v.name;
  o.store = store;
  Matmul forced(runtime().context, runtime().device, o);
  const std::string text = forced.explanation().to_string(Explanation::Detail::EveryStep);
  EXPECT_EQ(forced.loaded().variant.name, v.name) << text;
  EXPECT_EQ(forced.loaded().tier, tiers.back()) << text;
  EXPECT_LE(run_and_compare(forced, {60, 70, 50}), kMatmulTolerance) << text;
  // Without the entry: the loader's order.
  o.use_tuning = false;
  Matmul plain(runtime().context, runtime().device, o);
  EXPECT_EQ(plain.loaded().tier, tiers.front())
      << plain.explanation().to_string(Explanation::Detail::EveryStep);
}

// A build that failed before on this device and driver is not tried again:
// the store remembers it (here by hand) and the loader moves on, saying why.
TEST(Auto, RememberedBuildFailureIsNotRetried) {
  REQUIRE_RUNTIME();
  const Family& f = matmul_family(MatmulKernel::Blocked);
  const DeviceCaps caps = DeviceCaps::query(runtime().device);
  const std::vector<const Variant*> fit = fitting_blocked();
  ASSERT_GE(fit.size(), 2u);
  auto store = std::make_shared<Store>();
  std::string options = "-cl-std=" + f.manifest().language + " " + fit[0]->define_options();
  for (const DriverQuirk& q : driver_quirks(caps)) {
    if (!q.source_build_options.empty()) options += " " + q.source_build_options;
  }
  store->remember({caps.key(), fit[0]->sha256, Tier::SpirV},
                  {RememberedOutcome::Kind::Build, "remembered failure", ""});
  store->remember({caps.key(), f.manifest().source_sha256 + " " + options, Tier::Source},
                  {RememberedOutcome::Kind::Build, "remembered failure", ""});
  if (fit[0]->ptx) {
    store->remember({caps.key(), fit[0]->ptx->sha256, Tier::Ptx},
                    {RememberedOutcome::Kind::Build, "remembered failure", ""});
  }
  MatmulOptions o;
  o.kernel = MatmulKernel::Blocked;
  o.store = store;
  o.use_tuning = false;
  Matmul matmul(runtime().context, runtime().device, o);
  EXPECT_NE(matmul.loaded().variant.name, fit[0]->name);
  const std::string text = matmul.explanation().to_string(Explanation::Detail::EveryStep);
  EXPECT_NE(text.find("failed to build on this device and driver before (remembered since"),
            std::string::npos)
      << text;
  EXPECT_LE(run_and_compare(matmul, {33, 44, 55}), kMatmulTolerance);
}

// Trial verdicts go to the store's file and are read back by the next
// process (here: the next Store of the same file).
TEST(Auto, TrialVerdictsAreKeptOnDisk) {
  REQUIRE_RUNTIME();
  char dir_template[] = "/tmp/fatcl-trials-XXXXXX";
  const std::filesystem::path dir = mkdtemp(dir_template);
  const std::filesystem::path file = dir / "tuning.json";
  MatmulOptions o;
  o.kernel = MatmulKernel::Tiled;
  o.use_tuning = false;
  o.store = std::make_shared<Store>(file);
  Matmul first(runtime().context, runtime().device, o);
  o.store = std::make_shared<Store>(file);
  if (first.loaded().settled_by_trial) {
    EXPECT_GE(o.store->outcome_count(), 1u);
    Matmul second(runtime().context, runtime().device, o);
    EXPECT_NE(second.explanation()
                  .to_string(Explanation::Detail::EveryStep)
                  .find("remembered for this device and driver since"),
              std::string::npos)
        << second.explanation().to_string(Explanation::Detail::EveryStep);
  } else {
    EXPECT_EQ(o.store->outcome_count(), 0u) << "no trial ran, so nothing to remember";
  }
  std::filesystem::remove_all(dir);
}

// fatcl tune on a small problem within a small budget: every measurement
// checked, the entry ranked fastest first, and the loader follows it.
TEST(Auto, TuneRanksCheckedMeasurementsAndTheLoaderFollows) {
  REQUIRE_RUNTIME();
  TuneOptions o;
  o.shapes = {{48, 80, 40}};
  o.budget_seconds = 3;
  std::vector<std::string> lines;
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  const TuneReport report = run_tune(runtime().context, runtime().device, o);
  ASSERT_EQ(report.shapes.size(), 1u);
  const TuneShapeResult& s = report.shapes[0];
  ASSERT_FALSE(s.measured.empty());
  ASSERT_TRUE(s.entry) << report.to_text();
  for (std::size_t i = 1; i < s.entry->ranking.size(); ++i) {
    EXPECT_GE(s.entry->ranking[i - 1].gflops, s.entry->ranking[i].gflops);
  }
  for (const TuneMeasurement& m : s.measured) {
    if (m.failure.empty()) EXPECT_TRUE(m.ok) << m.variant;
  }
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("[1/"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("best"), std::string::npos) << lines[0];
  auto store = std::make_shared<Store>();
  store->put_tuning(*s.entry);
  MatmulOptions mo;
  mo.store = store;
  Matmul tuned(runtime().context, runtime().device, mo);
  EXPECT_EQ(tuned.loaded_for(48, 80, 40).variant.name, s.entry->ranking.front().variant)
      << tuned.loaded_for(48, 80, 40).explanation.to_string(Explanation::Detail::EveryStep);
  EXPECT_EQ(tuned.loaded_for(48, 80, 40).tier, s.entry->ranking.front().tier)
      << "the tier measured fastest\n"
      << report.to_text() << "\n"
      << tuned.loaded_for(48, 80, 40).explanation.to_string(Explanation::Detail::EveryStep);
  EXPECT_LE(run_and_compare(tuned, {48, 80, 40}), kMatmulTolerance);
}

}  // namespace
}  // namespace fatcl

#include "fatcl/cache.hpp"

namespace fatcl {
namespace {

// The program cache: the second load of a variant comes from the cache (the
// explanation says so) and computes right; entries filled with garbage,
// truncated or swapped are discarded with the reason and rebuilt.
TEST(Auto, ProgramCacheServesTheNextLoadAndSurvivesDamage) {
  REQUIRE_RUNTIME();
  char dir_template[] = "/tmp/fatcl-programs-XXXXXX";
  const std::filesystem::path dir = mkdtemp(dir_template);
  auto cache = std::make_shared<ProgramCache>(dir, 1ull << 30);
  MatmulOptions o;
  o.variant = "matmul_tiled_TILE8";
  o.use_tuning = false;
  o.cache = cache;
  auto chosen_note = [](const Matmul& m) {
    for (const Step& s : m.explanation().steps) {
      if (s.outcome == Step::Outcome::Chosen) return s.reason;
    }
    return std::string();
  };
  {
    Matmul first(runtime().context, runtime().device, o);
    EXPECT_EQ(chosen_note(first).find("fatcl cache"), std::string::npos) << chosen_note(first);
    EXPECT_EQ(first.loaded().origin, ProgramOrigin::Built);
    EXPECT_LE(run_and_compare(first, {40, 30, 20}), kMatmulTolerance);
  }
  const std::size_t entries = cache->stats().entries;
  if (entries == 0) {
    // A driver that hands back no binary: nothing to serve, and it says nothing.
    std::cout << "this driver gives no program binary\n";
    std::filesystem::remove_all(dir);
    return;
  }
  // A new cache object stands for the next process: memory empty, folder full.
  o.cache = cache = std::make_shared<ProgramCache>(dir, 1ull << 30);
  {
    Matmul second(runtime().context, runtime().device, o);
    EXPECT_NE(chosen_note(second).find("loaded from the fatcl cache"), std::string::npos)
        << second.explanation().to_string(Explanation::Detail::EveryStep);
    EXPECT_EQ(second.loaded().origin, ProgramOrigin::ProgramCache);
    EXPECT_LE(run_and_compare(second, {41, 33, 17}), kMatmulTolerance);
  }
  // A driver setting that changes the code it generates is part of the key:
  // what was built without it is not served with it (Intel's CPU runtime's
  // CL_CONFIG_CPU_TARGET_ARCH=core-avx2 had been served AVX-512 binaries).
  setenv("CL_CONFIG_CPU_TARGET_ARCH", "core-avx2", 1);
  o.cache = std::make_shared<ProgramCache>(dir, 1ull << 30);
  {
    Matmul other_code(runtime().context, runtime().device, o);
    EXPECT_EQ(other_code.loaded().origin, ProgramOrigin::Built)
        << other_code.explanation().to_string(Explanation::Detail::EveryStep);
    EXPECT_LE(run_and_compare(other_code, {39, 31, 19}), kMatmulTolerance);
  }
  unsetenv("CL_CONFIG_CPU_TARGET_ARCH");
  // Damage every entry three ways in turn; each load still computes right.
  const char* damages[] = {"garbage", "truncate", "foreign"};
  for (const char* damage : damages) {
    SCOPED_TRACE(damage);
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      std::string bytes;
      {
        std::ifstream in(e.path(), std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
      }
      if (std::string(damage) == "garbage") bytes = std::string(bytes.size(), '\x5a');
      if (std::string(damage) == "truncate") bytes.resize(bytes.size() / 2);
      if (std::string(damage) == "foreign") bytes[20] ^= 0x20;  // a byte of the key
      std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << bytes;
    }
    o.cache = std::make_shared<ProgramCache>(dir, 1ull << 30);
    Matmul again(runtime().context, runtime().device, o);
    EXPECT_NE(again.explanation().to_string(Explanation::Detail::EveryStep).find("discarded"),
              std::string::npos)
        << again.explanation().to_string(Explanation::Detail::EveryStep);
    EXPECT_LE(run_and_compare(again, {37, 29, 23}), kMatmulTolerance);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fatcl

namespace fatcl {
namespace {

// Threads of one process share the programs built in it: after one load,
// four threads loading the same variant reuse its program and compute right.
TEST(Auto, ThreadsShareTheProgramsBuiltInTheProcess) {
  REQUIRE_RUNTIME();
  auto cache = std::make_shared<ProgramCache>();  // no folder: memory only
  MatmulOptions o;
  o.variant = "matmul_tiled_TILE4";
  o.use_tuning = false;
  o.cache = cache;
  Matmul first(runtime().context, runtime().device, o);
  std::vector<std::string> notes(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < notes.size(); ++i) {
    threads.emplace_back([&, i] {
      Matmul m(runtime().context, runtime().device, o);
      for (const Step& s : m.explanation().steps) {
        if (s.outcome == Step::Outcome::Chosen) notes[i] = s.reason;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& n : notes) {
    EXPECT_NE(n.find("reused the program built earlier in this process"), std::string::npos) << n;
  }
  Matmul last(runtime().context, runtime().device, o);
  EXPECT_EQ(last.loaded().origin, ProgramOrigin::Process);
  EXPECT_LE(run_and_compare(last, {21, 34, 55}), kMatmulTolerance);
}

}  // namespace
}  // namespace fatcl

namespace fatcl {
namespace {

// The rejected steps of an explanation, as "variant [tier]: reason" lines.
std::vector<std::string> rejected_steps(const Explanation& e) {
  std::vector<std::string> out;
  for (const Step& s : e.steps) {
    if (s.outcome != Step::Outcome::Rejected) continue;
    out.push_back(s.variant + " [" + (s.tier ? to_string(*s.tier) : "all") + "]: " + s.reason);
  }
  return out;
}

// The offline choice (fatcl validate --device) for this runtime's device,
// from its description written and read back, and from a description fatcl
// ships of the same device and driver where there is one, equals what
// load() chooses here: variant, tier, ranking, tuning, quirks and every
// rejection with its reason.
TEST(Auto, OfflineChoiceFromTheDescriptionEqualsLoad) {
  REQUIRE_RUNTIME();
  const DeviceCaps caps = DeviceCaps::query(runtime().device);
  std::vector<DeviceDescription> descriptions =
      parse_device_descriptions(device_descriptions_json({caps}), "written here");
  ASSERT_EQ(descriptions.size(), 1u);
  EXPECT_EQ(descriptions[0].caps.summary(), caps.summary());
  EXPECT_EQ(descriptions[0].caps.key(), caps.key());
  EXPECT_TRUE(same_hardware(descriptions[0].caps.profile(), caps.profile()));
  // FATCL_TEST_DEVICES: another folder of descriptions (where the tests run
  // away from the source tree).
  const std::string folder = env("FATCL_TEST_DEVICES").empty()
                                 ? std::string(FATCL_SOURCE_DIR) + "/devices"
                                 : env("FATCL_TEST_DEVICES");
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(folder, ec)) {
    for (DeviceDescription& d : read_device_descriptions(file.path().string())) {
      if (d.caps.key() == caps.key()) descriptions.push_back(std::move(d));
    }
  }
  std::cout << "compared with " << descriptions.size() - 1
            << " shipped description(s) of this device and driver\n";
  for (MatmulKernel k : matmul_kernels()) {
    const Family& family = matmul_family(k);
    LoadOptions o;
    o.store = std::make_shared<Store>();
    o.cache = std::make_shared<ProgramCache>();
    const LoadedKernel loaded = load(runtime().context, runtime().device, family, o);
    const std::string on_device = loaded.explanation.to_string(Explanation::Detail::EveryStep);
    for (const DeviceDescription& d : descriptions) {
      const OfflineChoice predicted = predict_load(family, d.caps, o);
      const std::string offline = predicted.explanation.to_string(Explanation::Detail::EveryStep);
      const std::string both = d.origin + "\noffline:\n" + offline + "on the device:\n" + on_device;
      EXPECT_EQ(predicted.variant, loaded.variant.name) << both;
      EXPECT_EQ(predicted.tier, std::optional<Tier>(loaded.tier)) << both;
      EXPECT_EQ(predicted.explanation.ranking, loaded.explanation.ranking) << both;
      EXPECT_EQ(predicted.explanation.tuning, loaded.explanation.tuning) << both;
      EXPECT_EQ(predicted.explanation.quirks, loaded.explanation.quirks) << both;
      EXPECT_EQ(rejected_steps(predicted.explanation), rejected_steps(loaded.explanation)) << both;
    }
  }
}

}  // namespace
}  // namespace fatcl
