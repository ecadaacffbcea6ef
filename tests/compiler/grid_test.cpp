// Parameter grids: the product of PARAMs filtered by constraints, chosen
// points, and errors that name the constraint or point at fault.
#include <gtest/gtest.h>

#include "error_of.hpp"
#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"

namespace fatcl {
namespace {

using test::error_of;

TEST(Grid, ProductFilteredByConstraints) {
  ParamGrid g;
  g.params = {{"MWG", {32, 64, 128}}, {"MDIMC", {8, 16, 48}}};
  g.constraints = {"MWG % MDIMC == 0", "MWG / MDIMC <= 8"};
  std::size_t dropped = 0;
  const std::vector<ParamPoint> points = expand_grid(g, &dropped);
  // 32/8, 64/8, 64/16, 128/16 remain; 48 divides none; 128/8 = 16 > 8; 32/16 ok.
  std::vector<std::string> names;
  for (const ParamPoint& p : points) names.push_back(variant_name("f", p));
  EXPECT_EQ(names, (std::vector<std::string>{"f_MWG32_MDIMC8", "f_MWG32_MDIMC16",
                                             "f_MWG64_MDIMC8", "f_MWG64_MDIMC16",
                                             "f_MWG128_MDIMC16"}));
  EXPECT_EQ(dropped, 4u);
}

TEST(Grid, ChosenPointsAreAddedAndChecked) {
  ParamGrid g;
  g.constraints = {"A * B <= 64"};
  g.points = {parse_point("A=4,B=8"), parse_point("A=8 B=8")};
  EXPECT_EQ(expand_grid(g).size(), 2u);
  g.points.push_back(parse_point("A=16,B=8"));
  EXPECT_NE(error_of([&] { expand_grid(g); })
                .find("point \"A=16 B=8\" breaks the constraint \"A * B <= 64\""),
            std::string::npos);
  g.points.back() = parse_point("B=8,A=2");
  EXPECT_NE(error_of([&] { expand_grid(g); }).find("must name the parameters A B, in that order"),
            std::string::npos);
  g.points.back() = parse_point("A=4,B=8");
  EXPECT_NE(error_of([&] { expand_grid(g); }).find("is listed twice"), std::string::npos);
}

TEST(Grid, ConstraintExpressions) {
  const ParamPoint p = {{"X", 12}, {"Y", 5}};
  EXPECT_EQ(evaluate_constraint("X % Y", p), 2);
  EXPECT_EQ(evaluate_constraint("-X + 2 * (Y - 1)", p), -4);
  EXPECT_EQ(evaluate_constraint("X >= 12 && Y < 5 || !(X != 12)", p), 1);
  EXPECT_EQ(evaluate_constraint("X <= 11 || Y > 5", p), 0);
  EXPECT_NE(error_of([&] { evaluate_constraint("X % (Y - 5)", p); }).find("division by zero"),
            std::string::npos);
  EXPECT_NE(error_of([&] { evaluate_constraint("X * Z", p); }).find("unknown name Z (known: X, Y"),
            std::string::npos);
  EXPECT_NE(error_of([&] { evaluate_constraint("(X + 1", p); }).find("missing ')'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { evaluate_constraint("X +", p); }).find("ends too early"),
            std::string::npos);
  EXPECT_NE(error_of([&] { evaluate_constraint("X $ 2", p); }).find("unexpected \"$ 2\""),
            std::string::npos);
  EXPECT_NE(error_of([&] { evaluate_constraint("99999999999 * 99999999999", p); })
                .find("integer overflow"),
            std::string::npos);
}

TEST(Grid, MalformedPointsAndParams) {
  EXPECT_NE(error_of([] { parse_point("A=1,B"); }).find("\"B\" is not NAME=INTEGER"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_point("A=1,A=2"); }).find("A is given twice"), std::string::npos);
  EXPECT_NE(error_of([] { parse_point("9A=1"); }).find("is not NAME=INTEGER"), std::string::npos);
  ParamGrid g;
  g.params = {{"A", {}}};
  EXPECT_NE(error_of([&] { expand_grid(g); }).find("parameter A has no values"),
            std::string::npos);
}

}  // namespace
}  // namespace fatcl
