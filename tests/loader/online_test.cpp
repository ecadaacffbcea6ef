// Learning online, apart from any device: which candidate each call runs,
// when the choice is settled, and which one it is, from made-up timings.
#include "fatcl/online.hpp"

#include <gtest/gtest.h>

namespace fatcl {
namespace {

// The current choice is timed first; the others as they are built, the
// least timed first; the fastest is chosen once every one was timed its
// rounds, failed or was dropped.
TEST(OnlineTrial, TimesEachReadyCandidateItsRoundsThenRunsTheFastest) {
  OnlineTrial t(3, {3, 2, 3, 0});
  OnlineTrial::Turn turn = t.next();
  EXPECT_EQ(turn.candidate, 0u);
  EXPECT_TRUE(turn.timed);
  t.record(0, 10);
  t.record(t.next().candidate, 11);
  // Candidate 0 has its rounds; nothing else is built yet: it runs, untimed.
  turn = t.next();
  EXPECT_EQ(turn.candidate, 0u);
  EXPECT_FALSE(turn.timed);
  EXPECT_FALSE(t.settled());
  t.ready(2);
  turn = t.next();
  EXPECT_EQ(turn.candidate, 2u);
  EXPECT_TRUE(turn.timed);
  t.record(2, 4);
  t.record(2, 5);
  // The fastest so far runs while candidate 1 is being built.
  EXPECT_EQ(t.next().candidate, 2u);
  EXPECT_FALSE(t.next().timed);
  EXPECT_EQ(t.best(), 2u);
  EXPECT_DOUBLE_EQ(t.best_ms(2), 4);
  t.fail(1);
  EXPECT_TRUE(t.settled());
  EXPECT_EQ(t.best(), 2u);
  EXPECT_EQ(t.timings(1), 0u);
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
