// fatcl tune's pieces that need no device.
#include "fatcl/tune.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fatcl
