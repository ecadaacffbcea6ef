// Barriers only some work-items of a group may reach, found in the module
// (divergent_barriers): the classic bugs are named, uniform control flow
// around a barrier is not, and every bundled module is clean.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "error_of.hpp"
#include "fatcl/compiler.hpp"
#include "temp_dir.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;

namespace fatcl {
namespace {

// The kernel `k` with `body`, compiled without the check; what it finds.
std::vector<std::string> findings(const std::string& body, const std::string& helpers = "") {
  test::TempDir dir;
  std::ofstream(dir.path / "k.cl")
      << helpers << "__kernel void k(__global float* a, __local float* t, const int n) {\n"
      << "  const int lid = get_local_id(0);\n  const int gid = get_global_id(0);\n"
      << body << "\n}\n";
  VariantRequest r;
  r.family = "k";
  r.kernel = "k";
  r.source = dir.path / "k.cl";
  r.barrier_check = BarrierCheck::Off;
  return divergent_barriers(compile_variant(Toolchain{}, r).spirv);
}

TEST(Uniformity, BarriersSomeWorkItemsSkipAreNamed) {
  REQUIRE_TOOLCHAIN();
  const struct {
    const char* what;
    const char* body;
  } cases[] = {
      {"under a branch on the local id", "if (lid < 8) barrier(CLK_LOCAL_MEM_FENCE);"},
      {"after an early return of the work-items past the end",
       "if (gid >= n) return;\n  t[lid] = a[gid];\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
       "  a[gid] = t[0];"},
      {"in a loop whose count depends on the work-item",
       "for (int i = 0; i < lid; ++i) { t[lid] += 1; barrier(CLK_LOCAL_MEM_FENCE); }"},
      {"under a value chosen by a varying branch",
       "int x = 0;\n  if (lid < 8) x = 1;\n  if (x) barrier(CLK_LOCAL_MEM_FENCE);"},
      {"under a count a varying loop left",
       "int c = 0;\n  while (c < lid) ++c;\n  if (c > 3) barrier(CLK_LOCAL_MEM_FENCE);"},
      {"under a value read back from memory a work-item wrote",
       "t[lid] = lid;\n  if (t[lid] > 2) barrier(CLK_LOCAL_MEM_FENCE);"},
  };
  for (const auto& c : cases) {
    const std::vector<std::string> found = findings(c.body);
    ASSERT_EQ(found.size(), 1u) << c.what;
    EXPECT_NE(found[0].find("a barrier in k is reached only under control flow that depends on "
                            "the work-item"),
              std::string::npos)
        << c.what << ": " << found[0];
  }
  // A helper that reaches a barrier, called by some work-items only.
  const std::vector<std::string> called =
      findings("if (gid < n) sync_tile(t);",
               "static void sync_tile(__local float* t) { barrier(CLK_LOCAL_MEM_FENCE); }\n");
  ASSERT_FALSE(called.empty());
  EXPECT_NE(called.back().find("calls sync_tile, which reaches a barrier"), std::string::npos)
      << called.back();
}

TEST(Uniformity, UniformControlFlowAroundABarrierIsNotNamed) {
  REQUIRE_TOOLCHAIN();
  const char* bodies[] = {
      // A loop over K by tiles, loads guarded per work-item inside it.
      "float acc = 0;\n  for (int k0 = 0; k0 < n; k0 += 8) {\n"
      "    t[lid] = lid + k0 < n ? a[lid + k0] : 0.0f;\n    barrier(CLK_LOCAL_MEM_FENCE);\n"
      "    for (int j = 0; j < 8; ++j) acc += t[j];\n    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n"
      "  if (gid < n) a[gid] = acc;",
      // Branches on what the whole group shares.
      "if (get_group_id(0) == 0) barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  if (n > 4 && get_local_size(0) == 64) barrier(CLK_GLOBAL_MEM_FENCE);",
      // A varying loop before, a uniform one with the barrier after.
      "int c = 0;\n  while (c < lid) ++c;\n  a[gid] = c;\n"
      "  for (int i = 0; i < n; ++i) barrier(CLK_LOCAL_MEM_FENCE);",
  };
  for (const char* body : bodies) {
    EXPECT_TRUE(findings(body).empty()) << body << "\n" << findings(body).front();
  }
}

TEST(Uniformity, TheCheckRefusesWarnsOrIsOff) {
  REQUIRE_TOOLCHAIN();
  test::TempDir dir;
  std::ofstream(dir.path / "k.cl") << "__kernel void k(__global float* a) {\n"
                                      "  if (get_local_id(0) < 8) barrier(CLK_LOCAL_MEM_FENCE);\n"
                                      "  a[get_global_id(0)] = 1;\n}\n";
  VariantRequest r;
  r.family = "k";
  r.kernel = "k";
  r.source = dir.path / "k.cl";
  const std::string refused = test::error_of([&] { compile_variant(Toolchain{}, r); });
  EXPECT_NE(refused.find("a barrier in k is reached only under control flow that depends on the "
                         "work-item"),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.find("--barrier-check warn"), std::string::npos) << refused;
  r.barrier_check = BarrierCheck::Warn;
  const CompiledVariant warned = compile_variant(Toolchain{}, r);
  ASSERT_EQ(warned.warnings.size(), 1u);
  r.barrier_check = BarrierCheck::Off;
  EXPECT_TRUE(compile_variant(Toolchain{}, r).warnings.empty());
  EXPECT_EQ(test::error_of([] { parse_barrier_check("maybe"); }),
            "unknown barrier check \"maybe\" (refuse, warn or off)");
}

// Every module fatcl ships passes: no false alarm on its own kernels.
TEST(Uniformity, EveryBundledModuleIsClean) {
  std::size_t modules = 0;
  for (const auto& family : fs::directory_iterator(fs::path(FATCL_SOURCE_DIR) / "generated")) {
    for (const auto& file : fs::directory_iterator(family.path())) {
      if (file.path().extension() != ".spv") continue;
      ++modules;
      const std::vector<std::string> found = divergent_barriers(read_spirv(file.path()));
      EXPECT_TRUE(found.empty()) << file.path() << ": " << found.front();
    }
  }
  EXPECT_GT(modules, 50u);
}

}  // namespace
}  // namespace fatcl
