#include "fatcl/launch_description.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"
#include "fatcl/error.hpp"
#include "fatcl/launch.hpp"
#include "fatcl/manifest.hpp"
#include "test_manifests.hpp"

namespace fatcl {
namespace {

using test::error_of;

// A tiled product's description: M x N x K, one TILE x TILE group per tile.
const char* kTiled = R"json({
  "format": "fatcl-launch", "version": 1,
  "problem": ["M", "N", "K"],
  "edges": {"M": "TILE", "N": "TILE", "K": "TILE"},
  "sizes": [[100, 30, 7]],
  "global": ["round_up(N, TILE)", "round_up(M, TILE)"],
  "arguments": [
    {"name": "M", "scalar": "int", "value": "M"},
    {"name": "N", "scalar": "int", "value": "N"},
    {"name": "K", "scalar": "int", "value": "K"},
    {"name": "A", "buffer": "float", "count": "M * K"},
    {"name": "B", "buffer": "float", "count": "K * N"},
    {"name": "C", "buffer": "float", "count": "M * N", "access": "write"},
    {"name": "tile", "local": "float", "count": "2 * TILE * TILE"}]})json";

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LaunchExpression, EvaluatesWithNamesFunctionsAndCsOperators) {
  const Bindings names{{"n", 129}, {"WPT", 4}, {"VW", 2}};
  EXPECT_EQ(evaluate("64 * WPT * VW", names), 512);
  EXPECT_EQ(evaluate("ceil_div(n, WPT * VW)", names), 17);
  EXPECT_EQ(evaluate("round_up(n, 64)", names), 192);
  EXPECT_EQ(evaluate("min(n, 100) + max(1, VW) - (n % 8)", names), 101);
  EXPECT_EQ(evaluate("-7 / 2", names), -3);  // truncates, as in C
  EXPECT_EQ(evaluate("n > 100 && VW == 2", names), 1);
  EXPECT_EQ(evaluate("ceil_div(-3, 2)", names), -1);
  EXPECT_EQ(evaluate(" ( n ) ", names), 129);
}

TEST(LaunchExpression, ErrorsNameTheExpressionThePlaceAndTheCause) {
  const Bindings names{{"n", 10}, {"TILE", 8}};
  std::string e = error_of([&] { evaluate("n * TILES", names); });
  EXPECT_TRUE(has(e, "expression \"n * TILES\": unknown name TILES (known: n, TILE")) << e;
  e = error_of([&] { evaluate("n / (TILE - 8)", names); });
  EXPECT_TRUE(has(e, "division by zero")) << e;
  e = error_of([&] { evaluate("round_up(n, 0)", names); });
  EXPECT_TRUE(has(e, "round_up divides by 0 (it takes a divisor above 0)")) << e;
  e = error_of([&] { evaluate("ceil_div(n)", names); });
  EXPECT_TRUE(has(e, "ceil_div takes two arguments")) << e;
  e = error_of([&] { evaluate("sqrt(n, 2)", names); });
  EXPECT_TRUE(has(e, "unknown function sqrt")) << e;
  e = error_of([&] { evaluate("(n + 1", names); });
  EXPECT_TRUE(has(e, "missing ')'")) << e;
  e = error_of([&] { evaluate("n 2", names); });
  EXPECT_TRUE(has(e, "unexpected \"2\" (at character 3)")) << e;
  e = error_of([&] { evaluate("4611686018427387904 * 4", names); });
  EXPECT_TRUE(has(e, "integer overflow")) << e;
  e = error_of([&] { evaluate("99999999999999999999", names); });
  EXPECT_TRUE(has(e, "integer overflow")) << e;
}

TEST(LaunchDescription, ParsesDumpsAndGivesTheTileEdges) {
  const LaunchDescription d = LaunchDescription::parse(kTiled, "tiled.json");
  EXPECT_EQ(d.problem, (std::vector<std::string>{"M", "N", "K"}));
  ASSERT_EQ(d.arguments.size(), 7u);
  EXPECT_EQ(d.arguments[5].access, LaunchArgument::Access::Write);
  EXPECT_EQ(d.arguments[6].kind, LaunchArgument::Kind::Local);
  EXPECT_EQ(LaunchDescription::parse(d.dump(), "again").dump(), d.dump());

  const Manifest m = test::tiled_manifest({8, 16});
  d.check(m.variants);
  // 1x1x1; one below and one above each tile (the sizes made to differ);
  // then the listed problem.
  const std::vector<std::vector<long long>> edges = d.edge_problems(m.variants);
  const std::vector<std::vector<long long>> want{
      {1, 1, 1}, {7, 7, 7}, {9, 10, 11}, {15, 15, 15}, {17, 18, 19}, {100, 30, 7}};
  EXPECT_EQ(edges, want);
  EXPECT_EQ(problem_text(d, edges[2]), "M=9 N=10 K=11");
}

TEST(LaunchDescription, BadInputNamesTheOriginTheFieldAndTheCause) {
  auto error = [](std::string text) {
    return error_of([&] { LaunchDescription::parse(text, "mine.json"); });
  };
  std::string tiled = kTiled;
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = tiled;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  std::string e = error("{");
  EXPECT_TRUE(has(e, "mine.json: not JSON")) << e;
  e = error(with("\"fatcl-launch\"", "\"fatcl-manifest\""));
  EXPECT_TRUE(has(e, "mine.json: launch description: \"format\" is not \"fatcl-launch\"")) << e;
  e = error(with("\"K\": \"TILE\"", "\"Q\": \"TILE\""));
  EXPECT_TRUE(has(e, "edges: field \"K\" is missing")) << e;
  e = error(with("\"buffer\": \"float\", \"count\": \"M * K\"",
                 "\"buffer\": \"half\", \"count\": \"M * K\""));
  EXPECT_TRUE(has(e, "arguments[3] (A): type \"half\" is not one of char")) << e;
  e = error(with("\"access\": \"write\"", "\"access\": \"out\""));
  EXPECT_TRUE(
      has(e, "arguments[5] (C): field \"access\" is \"out\", not read, write or read_write"))
      << e;
  e = error(with("\"access\": \"write\"", "\"access\": \"write\", \"fill\": \"zero\""));
  EXPECT_TRUE(has(e, "a written buffer is poisoned, not filled")) << e;
  e = error(with("{\"name\": \"N\", \"scalar\": \"int\"", "{\"name\": \"M\", \"scalar\": \"int\""));
  EXPECT_TRUE(has(e, "arguments[1]: the name M is taken by arguments[0]")) << e;
  e = error(with("\"sizes\": [[100, 30, 7]]", "\"sizes\": [[100, 30]]"));
  EXPECT_TRUE(has(e, "sizes[0]: is not an array of 3 sizes")) << e;
  e = error(with("\"version\": 1", "\"version\": 1, \"colour\": 2"));
  EXPECT_TRUE(has(e, "field \"colour\" is not one a description has")) << e;
  e = error(with("\"scalar\": \"int\", \"value\": \"K\"", "\"scalar\": \"int\", \"count\": \"K\""));
  EXPECT_TRUE(has(e, "arguments[2] (K): field \"value\" is missing")) << e;
}

TEST(LaunchDescription, CheckNamesTheVariantThatDoesNotFit) {
  std::string text = kTiled;
  const std::string from = "\"count\": \"2 * TILE * TILE\"";
  text.replace(text.find(from), from.size(), "\"count\": \"2 * TILE * TILES\"");
  const LaunchDescription d = LaunchDescription::parse(text, "tiled.json");
  const Manifest m = test::tiled_manifest({8, 16});
  const std::string e = error_of([&] { d.check(m.variants); });
  EXPECT_TRUE(has(e, "variant matmul_tiled_TILE8 at M=1 N=1 K=1: argument tile count: expression "
                     "\"2 * TILE * TILES\": unknown name TILES")) << e;
  std::string zero = kTiled;
  zero.replace(zero.find("\"M\": \"TILE\""), 11, "\"M\": \"TILE - 8\"");
  const std::string e2 =
      error_of([&] { LaunchDescription::parse(zero, "z").edge_problems(m.variants); });
  EXPECT_TRUE(has(e2, "variant matmul_tiled_TILE8: edges.M \"TILE - 8\" is 0, not an extent"))
      << e2;
}

TEST(LaunchDescription, TheManifestKeepsIt) {
  Manifest m = test::tiled_manifest({8, 16});
  m.launch = LaunchDescription::parse(kTiled, "tiled.json");
  const Manifest back = Manifest::parse(m.dump());
  ASSERT_TRUE(back.launch.has_value());
  EXPECT_EQ(back.launch->dump(), m.launch->dump());
  EXPECT_EQ(back.dump(), m.dump());
  std::string broken = m.dump();
  broken.replace(broken.find("\"fatcl-launch\""), 14, "\"fatcl-lunch\"");
  const std::string e = error_of([&] { Manifest::parse(broken); });
  EXPECT_TRUE(has(e, "manifest: family matmul_tiled: launch description: \"format\"")) << e;
}

// Oclgrind's reports as it prints them, between fatcl launch's progress
// lines: grouped per variant, kind (addresses aside) and place.
TEST(SimulatorFindings, ReportsAreReadPerLaunchKindAndPlace) {
  const std::string output =
      "fatcl-launch: neighbours on Oclgrind (inputs seed 1, 2 problems)\n"
      "fatcl-launch begin: v_BUG1 [source] at n=1\n"
      "\n"
      "Invalid read of size 4 at global memory address 0x1000000000004\n"
      "\tKernel: neighbours\n"
      "\tEntity: Global(1,0,0) Local(1,0,0) Group(0,0,0)\n"
      "\t  %8 = load float, float addrspace(1)* %7\n"
      "\tAt line 17 (column 13) of input.cl:\n"
      "\t  tile[l] = x[i];\n"
      "\n"
      "\n"
      "Invalid read of size 4 at global memory address 0x1000000000008\n"
      "\tKernel: neighbours\n"
      "\tAt line 17 (column 13) of input.cl:\n"
      "\t  tile[l] = x[i];\n"
      "\n"
      "fatcl-launch end: v_BUG1 [source] at n=1\n"
      "fatcl-launch begin: v_BUG1 [source] at n=15\n"
      "\n"
      "Invalid read of size 4 at global memory address 0x100000000003c\n"
      "\tKernel: neighbours\n"
      "\tAt line 17 (column 13) of input.cl:\n"
      "\t  tile[l] = x[i];\n"
      "\n"
      "fatcl-launch end: v_BUG1 [source] at n=15\n"
      "fatcl-launch begin: v_BUG0 [source] at n=1\n"
      "fatcl-launch end: v_BUG0 [source] at n=1\n"
      "\n"
      "Work-group divergence detected (barrier)\n"
      "\tKernel:     neighbours\n"
      "\n"
      "fatcl-launch:   2 launch(es) ran and agreed, 0 problem(s)\n";
  const std::vector<SimulatorFinding> f = simulator_findings(output);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].launch, "v_BUG1 [source]");
  EXPECT_EQ(f[0].problems, (std::vector<std::string>{"n=1", "n=15"}));
  EXPECT_EQ(f[0].report, "Invalid read of size 4 at global memory address 0x1000000000004");
  EXPECT_EQ(f[0].where, "At line 17 (column 13) of input.cl: tile[l] = x[i];");
  EXPECT_EQ(f[0].count, 3u);
  EXPECT_EQ(f[1].launch, "");  // outside any launch
  EXPECT_EQ(f[1].report, "Work-group divergence detected (barrier)");
  EXPECT_TRUE(simulator_findings("fatcl-launch: all well\n").empty());
}

}  // namespace
}  // namespace fatcl
