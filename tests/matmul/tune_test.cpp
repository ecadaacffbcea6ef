// fatcl tune's pieces that need no device.
#include "fatcl/tune.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace fatcl {
namespace {

TEST(Tune, BudgetsParseOrNameTheFault) {
  EXPECT_EQ(parse_budget("30s"), 30);
  EXPECT_EQ(parse_budget("2m"), 120);
  EXPECT_EQ(parse_budget("90"), 90);
  for (const char* bad : {"", "0", "-5s", "fast", "3h", "1e9"}) {
    SCOPED_TRACE(bad);
    try {
      parse_budget(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a duration"), std::string::npos) << e.what();
    }
  }
}

// A simulated device: variants over two parameters A and B (1 to 32), its
// speed a hill whose top is far from where the ranking starts.
struct SimulatedFamily {
  std::vector<Variant> variants;
  std::vector<TuneCandidate> ranked;
  SimulatedFamily() {
    for (long long a = 1; a <= 32; a *= 2) {
      for (long long b = 1; b <= 32; b *= 2) {
        Variant v;
        v.name = "sim_A" + std::to_string(a) + "_B" + std::to_string(b);
        v.params = {{"A", a}, {"B", b}};
        variants.push_back(v);
      }
    }
    // The ranking's guess: the lowest A and the highest B first.
    std::vector<const Variant*> order;
    for (const Variant& v : variants) order.push_back(&v);
    std::stable_sort(order.begin(), order.end(), [](const Variant* x, const Variant* y) {
      return x->param("A") - x->param("B") < y->param("A") - y->param("B");
    });
    for (const Variant* v : order) ranked.push_back({v, Tier::Source});
  }
  // Made-up GFLOP/s: 100 at A = 16, B = 2, falling with the log distance.
  static double gflops(const TuneCandidate& c) {
    const double da = std::log2(double(c.variant->param("A"))) - 4;
    const double db = std::log2(double(c.variant->param("B"))) - 1;
    return 100 / (1 + da * da + db * db);
  }
};

TEST(TuneSearch, MeasuresEachCandidateOnceAndEveryThirdPickFollowsTheRanking) {
  SimulatedFamily sim;
  TuneSearch search(sim.ranked);
  std::set<std::string> seen;
  std::vector<std::string> ranking_left;
  for (const TuneCandidate& c : sim.ranked) ranking_left.push_back(c.key());
  std::size_t pick = 0;
  while (const TuneCandidate* c = search.next()) {
    EXPECT_TRUE(seen.insert(c->key()).second) << c->key() << " measured twice";
    if (pick == 0 || pick % 3 == 2) {
      EXPECT_EQ(c->key(), ranking_left.front()) << "pick " << pick;
    }
    ranking_left.erase(std::find(ranking_left.begin(), ranking_left.end(), c->key()));
    search.record(*c, SimulatedFamily::gflops(*c));
    ++pick;
  }
  EXPECT_EQ(seen.size(), sim.ranked.size());
  EXPECT_EQ(search.picked(), sim.ranked.size());
  ASSERT_TRUE(search.best());
  EXPECT_EQ(search.best()->variant->name, "sim_A16_B2");
}

// Refining around the best climbs to the top well before every candidate
// is measured, though the ranking starts at the far corner.
TEST(TuneSearch, ClimbsToTheFastestWithinHalfTheCandidates) {
  SimulatedFamily sim;
  TuneSearch search(sim.ranked);
  for (std::size_t i = 0; i < sim.ranked.size() / 2; ++i) {
    const TuneCandidate* c = search.next();
    ASSERT_TRUE(c);
    search.record(*c, SimulatedFamily::gflops(*c));
  }
  ASSERT_TRUE(search.best());
  EXPECT_EQ(search.best()->variant->name, "sim_A16_B2") << search.best_gflops();
  EXPECT_DOUBLE_EQ(search.best_gflops(), 100);
}

// While nothing has run (every build failing), the ranking is followed.
TEST(TuneSearch, FollowsTheRankingUntilSomethingRuns) {
  SimulatedFamily sim;
  TuneSearch search(sim.ranked);
  for (std::size_t i = 0; i < 5; ++i) {
    const TuneCandidate* c = search.next();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->key(), sim.ranked[i].key());
    search.record(*c, 0);  // failed
  }
  EXPECT_EQ(search.best(), nullptr);
}

}  // namespace
}  // namespace fatcl
