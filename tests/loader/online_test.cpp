// Learning online, apart from any device: which candidate each call runs,
// when the choice is settled, and which one it is, from made-up timings.
#include "fatcl/online.hpp"

#include <gtest/gtest.h>

namespace fatcl {
namespace {

// Nothing is timed while a candidate is still being built (a build takes
// cores from a CPU's call): the current choice runs untimed. Then each is
// timed its rounds, the least run first, and the fastest is chosen once
// every one was timed, failed or was dropped.
TEST(OnlineTrial, TimesEachCandidateItsRoundsOnceAllAreBuiltThenRunsTheFastest) {
  OnlineTrial t(3, {3, 2, 3, 0});
  OnlineTrial::Turn turn = t.next();
  EXPECT_EQ(turn.candidate, 0u);
  EXPECT_FALSE(turn.timed);
  t.ready(2);
  EXPECT_FALSE(t.next().timed);
  t.fail(1);
  turn = t.next();
  EXPECT_TRUE(turn.timed);
  EXPECT_EQ(turn.candidate, 0u);
  t.record(0, 10);
  turn = t.next();
  EXPECT_EQ(turn.candidate, 2u);
  t.record(2, 4);
  t.record(t.next().candidate, 11);
  EXPECT_FALSE(t.settled());
  t.record(t.next().candidate, 5);
  EXPECT_TRUE(t.settled());
  EXPECT_EQ(t.best(), 2u);
  EXPECT_DOUBLE_EQ(t.best_ms(2), 4);
  EXPECT_EQ(t.timings(1), 0u);
  // Settled: the fastest runs, untimed.
  EXPECT_EQ(t.next().candidate, 2u);
  EXPECT_FALSE(t.next().timed);
}

// A candidate slower than drop_factor times the fastest is timed once only,
// so no more than one call pays for it.
TEST(OnlineTrial, ASlowCandidateIsTimedOnce) {
  OnlineTrial t(3, {3, 2, 3, 0});
  t.ready(1);
  t.ready(2);
  std::vector<std::size_t> runs(3);
  double ms[] = {10, 50, 8};
  while (!t.settled()) {
    const OnlineTrial::Turn turn = t.next();
    ASSERT_TRUE(turn.timed);
    ++runs[turn.candidate];
    t.record(turn.candidate, ms[turn.candidate]);
    ASSERT_LE(runs[0] + runs[1] + runs[2], 6u);
  }
  EXPECT_EQ(runs[1], 1u);
  EXPECT_TRUE(t.dropped(1));
  EXPECT_EQ(runs[0], 2u);
  EXPECT_EQ(runs[2], 2u);
  EXPECT_EQ(t.best(), 2u);
  EXPECT_FALSE(t.next().timed);
  EXPECT_EQ(t.next().candidate, 2u);
}

// The current choice stays unless another candidate is `margin` faster:
// two timings a candidate are too few to tell a few per cent apart.
TEST(OnlineTrial, TheCurrentChoiceStaysUnlessAnotherIsClearlyFaster) {
  auto learned = [](double challenger_ms) {
    OnlineTrial t(2, {2, 2, 3, 0, 1.10});
    t.ready(1);
    while (!t.settled()) {
      const OnlineTrial::Turn turn = t.next();
      t.record(turn.candidate, turn.candidate == 0 ? 10.0 : challenger_ms);
    }
    return t.best();
  };
  EXPECT_EQ(learned(9.5), 0u);  // 5 % faster: within the margin
  EXPECT_EQ(learned(9.2), 0u);
  EXPECT_EQ(learned(8.5), 1u);  // 15 % faster
  EXPECT_EQ(learned(12), 0u);
}

TEST(OnlineTrial, OneCandidateSettlesAfterItsRounds) {
  OnlineTrial t(1, {1, 2, 3, 0});
  t.record(t.next().candidate, 1);
  EXPECT_FALSE(t.settled());
  t.record(t.next().candidate, 1);
  EXPECT_TRUE(t.settled());
  EXPECT_EQ(t.best(), 0u);
}

// A candidate's first call (a driver may build its kernel then) does not
// count: its timings start with the second.
TEST(OnlineTrial, WarmUpCallsDoNotCount) {
  OnlineTrial t(2, {2, 2, 3, 1});
  t.ready(1);
  double ms[][3] = {{40, 10, 10}, {90, 5, 5}};
  std::size_t runs[2] = {0, 0};
  while (!t.settled()) {
    const OnlineTrial::Turn turn = t.next();
    ASSERT_TRUE(turn.timed);
    t.record(turn.candidate, ms[turn.candidate][runs[turn.candidate]++]);
  }
  EXPECT_EQ(runs[0], 3u);
  EXPECT_EQ(runs[1], 3u);
  EXPECT_FALSE(t.dropped(1));
  EXPECT_EQ(t.best(), 1u);
  EXPECT_DOUBLE_EQ(t.best_ms(0), 10);
}

// A warm-up already far slower than every call so far ends the candidate:
// one slow call, not two.
TEST(OnlineTrial, ASlowWarmUpEndsTheCandidate) {
  OnlineTrial t(3, {3, 1, 3, 1});
  t.ready(1);
  t.ready(2);
  t.record(t.next().candidate, 12);  // candidate 0's warm-up
  ASSERT_EQ(t.next().candidate, 1u);
  t.record(1, 45);  // candidate 1's, against 12 so far
  EXPECT_TRUE(t.dropped(1));
  ASSERT_EQ(t.next().candidate, 2u);
  t.record(2, 11);
  EXPECT_FALSE(t.dropped(2));
  t.record(t.next().candidate, 10);
  t.record(t.next().candidate, 9);
  EXPECT_TRUE(t.settled());
  EXPECT_EQ(t.best(), 2u);
}

}  // namespace
}  // namespace fatcl
