// Numbers and versions read from text (core/src/text.cpp).
#include "fatcl/text.hpp"

#include <gtest/gtest.h>

namespace fatcl {
namespace {

// Counts and sizes given as text (options, environment variables).
TEST(Text, WholeNumbersAreDigitsWithinTheirRange) {
  EXPECT_EQ(parse_whole_number("512", 1, 1048575), 512u);
  EXPECT_EQ(parse_whole_number("0", 0, 10), 0u);
  EXPECT_EQ(parse_whole_number("18446744073709551615", 0, ~0ull), std::nullopt);  // 20 digits
  EXPECT_EQ(parse_whole_number("9999999999999999999", 0, ~0ull), 9999999999999999999ull);
  for (const char* bad : {"", "-1", "+5", " 5", "1e3", "0x10", "5 ", "abc"}) {
    EXPECT_EQ(parse_whole_number(bad, 0, 100), std::nullopt) << bad;
  }
  EXPECT_EQ(parse_whole_number("0", 1, 10), std::nullopt);
  EXPECT_EQ(parse_whole_number("11", 1, 10), std::nullopt);
}

TEST(Text, VersionsAreTwoSmallNumbers) {
  int major = 0, minor = 0;
  EXPECT_TRUE(parse_version("1.2", &major, &minor));
  EXPECT_EQ(major * 100 + minor, 102);
  EXPECT_TRUE(parse_opencl_version("OpenCL 3.0 CUDA", &major, &minor));
  EXPECT_EQ(major * 100 + minor, 300);
  for (const char* bad : {"", "1", "1.", ".2", "12345.1", "1.12345", "a.b"}) {
    EXPECT_FALSE(parse_version(bad, &major, &minor)) << bad;
  }
  EXPECT_FALSE(parse_opencl_version("OpenCL3.0", &major, &minor));
  EXPECT_FALSE(parse_opencl_version("3.0", &major, &minor));
}

}  // namespace
}  // namespace fatcl
