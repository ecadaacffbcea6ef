// fatcl bench's reports from a report made by hand: the table, the JSON
// document and the chart say what the results hold (no device needed).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fatcl/bench.hpp"

namespace fatcl {
namespace {

BenchResult result(const std::string& kernel, const std::string& variant, std::optional<Tier> tier,
                   double gflops, bool ok = true) {
  BenchResult r;
  r.kernel = kernel;
  r.variant = variant;
  r.tier = tier;
  r.gflops = gflops;
  r.ms = 2.0 * 64 * 64 * 64 / (gflops * 1e6);
  r.relative_error = 1e-7;
  r.ok = ok;
  r.rounds = 5;
  return r;
}

// One size: naive, two blocked variants (one in both tiers), CLBlast, and
// a kernel timed once.
BenchReport report() {
  BenchReport report;
  report.device = "synthetic device";
  report.date = "2026-12-01T00:00:00Z";
  BenchSize s;
  s.shape = {64, 64, 64};
  s.results.push_back(result("naive", "matmul_naive", Tier::Source, 2));
  BenchResult slow = result("tiled", "matmul_tiled_TILE4", Tier::Source, 1);
  slow.rounds = 1;
  slow.note = "timed once: 0.010x the fastest at 32";
  s.results.push_back(slow);
  s.results.push_back(result("blocked", "matmul_blocked_A", Tier::SpirV, 100));
  s.results.push_back(result("blocked", "matmul_blocked_A", Tier::Source, 80));
  s.results.push_back(result("blocked", "matmul_blocked_B", Tier::Source, 50));
  s.results.push_back(result("CLBlast", "", std::nullopt, 25));
  s.auto_variant = "matmul_blocked_A";
  s.auto_tier = Tier::SpirV;
  s.auto_gflops = 100;
  s.auto_tuning = "tuning entry: synthetic";
  s.heuristic_variant = "matmul_blocked_B";
  s.heuristic_tier = Tier::Source;
  s.heuristic_gflops = 50;
  s.tuned = true;
  report.sizes.push_back(s);
  // A second size no entry of its class decided, where the automatic
  // choice ran at 0.6 of the fastest.
  BenchSize u = s;
  u.shape = {64, 1, 64};
  u.tuned = false;
  u.auto_gflops = 60;
  report.sizes.push_back(u);
  return report;
}

TEST(BenchReport, TextRanksBySpeedAndMarksTheChoices) {
  const std::string text = report().to_text();
  const std::size_t a = text.find("matmul_blocked_A"), naive = text.find("matmul_naive");
  ASSERT_NE(a, std::string::npos) << text;
  EXPECT_LT(a, naive) << "fastest first\n" << text;
  EXPECT_NE(text.find("50.00x    4.00x           ok 1.0e-07  <- automatic choice"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<- choice without tuning"), std::string::npos) << text;
  EXPECT_NE(text.find("(timed once: 0.010x the fastest at 32)"), std::string::npos) << text;
  EXPECT_NE(text.find("best fatcl: matmul_blocked_A 100.0 GFLOP/s, 4.00x CLBlast; tuned size: "
                      "automatic choice matmul_blocked_A at 1.00x the best, without tuning "
                      "matmul_blocked_B at 0.50x"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("SPIR-V / source over 1 variants (each pair timed in turn): geometric mean "
                      "1.25x"),
            std::string::npos)
      << text;
}

// Each size says whether an entry of its own class decided, and the
// choice is summed up apart for the two groups.
TEST(BenchReport, TunedAndUntunedSizesAreReportedApart) {
  const std::string text = report().to_text();
  EXPECT_NE(text.find("untuned size: automatic choice matmul_blocked_A at 0.60x"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("automatic / fastest over the tuned sizes (1): geometric mean 1.00, lowest "
                      "1.00"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("automatic / fastest over the untuned sizes (1): geometric mean 0.60, "
                      "lowest 0.60"),
            std::string::npos)
      << text;
  const nlohmann::json j = nlohmann::json::parse(report().to_json());
  EXPECT_EQ(j.at("sizes").at(0).at("tuned"), true);
  EXPECT_EQ(j.at("sizes").at(1).at("tuned"), false);
  EXPECT_EQ(j.at("auto_vs_best_tuned").at("sizes"), 1);
  EXPECT_DOUBLE_EQ(j.at("auto_vs_best_untuned").at("geomean").get<double>(), 0.6);
}

TEST(BenchReport, JsonCarriesTheRatiosAndEachResult) {
  const nlohmann::json j = nlohmann::json::parse(report().to_json());
  const nlohmann::json& s = j.at("sizes").at(0);
  EXPECT_EQ(s.at("best_fatcl_variant"), "matmul_blocked_A");
  EXPECT_DOUBLE_EQ(s.at("best_fatcl_vs_clblast").get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(s.at("auto_vs_best").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(s.at("heuristic_vs_best").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(s.at("best_fatcl_vs_naive").get<double>(), 50.0);
  EXPECT_EQ(s.at("auto_tier"), "spirv");
  EXPECT_EQ(s.at("heuristic_tier"), "source");
  EXPECT_DOUBLE_EQ(s.at("spirv_vs_source").at("geomean").get<double>(), 1.25);
  ASSERT_EQ(s.at("results").size(), 6u);
  EXPECT_EQ(s.at("results").at(1).at("rounds"), 1);
  EXPECT_EQ(s.at("results").at(1).at("note"), "timed once: 0.010x the fastest at 32");
  EXPECT_EQ(s.at("results").at(5).at("tier"), "");  // CLBlast has none
}

// The vendor's BLAS timed beside: its own column and ratio, its row named
// by the library, the JSON's best_fatcl_vs_vendor, a line on the chart;
// without it the report says why.
TEST(BenchReport, TheVendorLibraryIsTheBar) {
  BenchReport r = report();
  EXPECT_EQ(nlohmann::json::parse(r.to_json()).at("sizes").at(0).at("best_fatcl_vs_vendor"),
            nullptr);
  r.vendor = "cuBLAS 13.0.0 (cublasSgemm, CUDA device 0)";
  BenchResult v = result(r.vendor, "", std::nullopt, 125);
  v.vendor = true;
  r.sizes[0].results.push_back(v);
  const std::string text = r.to_text();
  EXPECT_NE(text.find("vendor BLAS: cuBLAS 13.0.0 (cublasSgemm, CUDA device 0)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  vendor   cuBLAS 13.0.0 (cublasSgemm, CUDA device 0)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("   4.00x    0.80x  ok 1.0e-07  <- automatic choice"), std::string::npos)
      << text;
  EXPECT_NE(text.find("100.0 GFLOP/s, 4.00x CLBlast, 0.80x cuBLAS; tuned size"),
            std::string::npos)
      << text;
  const nlohmann::json j = nlohmann::json::parse(r.to_json());
  EXPECT_EQ(j.at("vendor"), r.vendor);
  const nlohmann::json& s = j.at("sizes").at(0);
  EXPECT_DOUBLE_EQ(s.at("best_fatcl_vs_vendor").get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(s.at("best_fatcl_vs_clblast").get<double>(), 4.0);  // not the vendor's
  EXPECT_EQ(s.at("results").at(6).at("vendor"), true);
  EXPECT_NE(r.to_svg().find(">cuBLAS 13.0.0 (cublasSgemm, CUDA device 0)<"), std::string::npos);
}

// A size called as a product learning online: after which call it chose,
// the choice over the fastest, and the slowest call over the median call
// after the choice (with and without the first); the first use's builds.
TEST(BenchReport, OnlineCallsSayWhenTheChoiceWasMadeAndWhatTheyCost) {
  BenchReport r = report();
  BenchOnline o;
  o.first_use_ms = 1234.4;
  o.call_ms = {9, 2, 6, 2, 1, 1, 1.2, 0.8, 1};
  o.learned = true;
  o.settled_at = 5;
  o.choice = "matmul_blocked_A";
  o.choice_tier = Tier::SpirV;
  o.choice_gflops = 90;
  o.report = "online: 3 candidates for 64x64x64, 9 timed calls: ...";
  r.sizes[0].online = o;
  const nlohmann::json j = nlohmann::json::parse(r.to_json());
  const nlohmann::json& online = j["sizes"][0]["online"];
  EXPECT_EQ(online["settled_at"], 5);
  EXPECT_DOUBLE_EQ(online["first_use_ms"].get<double>(), 1234.4);
  EXPECT_DOUBLE_EQ(online["choice_vs_best"].get<double>(), 0.9);
  // After call 5: 1, 1.2, 0.8, 1 -> median 1 (the upper middle).
  EXPECT_DOUBLE_EQ(online["slowest_vs_choice"].get<double>(), 9);
  EXPECT_DOUBLE_EQ(online["slowest_after_first_vs_choice"].get<double>(), 6);
  EXPECT_FALSE(j["sizes"][1].contains("online"));
  const std::string text = r.to_text();
  EXPECT_NE(
      text.find("online, first use 1234 ms, 9 calls (every result right): chose after call 5, runs "
                "matmul_blocked_A [spirv] 90.0 GFLOP/s = 0.90x the best; slowest call "
                "9.00x the choice's, after the first 6.00x"),
      std::string::npos)
      << text;
  // Not settled within the calls: no call ran the choice.
  r.sizes[0].online->settled_at = 0;
  EXPECT_NE(r.to_text().find("no choice made within 30 s of calls"), std::string::npos);
  EXPECT_NE(r.to_text().find("no call of the 9 ran the choice"), std::string::npos);
}

TEST(BenchReport, ChartDrawsALinePerSeriesWithItsLegend) {
  const std::string svg = report().to_svg();
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  std::size_t lines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 6u);  // naive, tiled, blocked, automatic, without tuning, CLBlast
  for (const char* legend :
       {">naive<", ">tiled (best TILE)<", ">blocked (best variant)<", ">fatcl automatic choice<",
        ">automatic, without tuning<", ">CLBlast<"}) {
    EXPECT_NE(svg.find(legend), std::string::npos) << legend;
  }
  EXPECT_NE(svg.find("stroke-dasharray=\"6,4"), std::string::npos);  // the automatic choice
  EXPECT_NE(svg.find("synthetic device, 2026-12-01T00:00:00Z"), std::string::npos);
}

}  // namespace
}  // namespace fatcl
