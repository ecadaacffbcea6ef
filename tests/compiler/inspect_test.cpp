// fatcl inspect's reading: a bundle folder, a binary that embeds families
// (each module found by its SHA-256), and what it says when one is damaged.
#include <gtest/gtest.h>

#include "fatcl/compiler.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace fatcl {
namespace {

const fs::path kInspectedBundle = fs::path(FATCL_SOURCE_DIR) / "generated" / "matmul_tiled";

TEST(InspectBundles, ABundleListsEveryVariantAndTierWithItsSize) {
  const InspectReport r = inspect_paths({kInspectedBundle});
  ASSERT_TRUE(r.ok()) << r.to_text();
  ASSERT_EQ(r.families.size(), 1u);
  const InspectedFamily& f = r.families[0];
  EXPECT_EQ(f.manifest.family, "matmul_tiled");
  ASSERT_EQ(f.variants.size(), f.manifest.variants.size());
  std::size_t spirv = 0, ptx = 0;
  for (const Variant& v : f.manifest.variants) {
    spirv += fs::file_size(kInspectedBundle / v.spirv_file);
    if (v.ptx) ptx += fs::file_size(kInspectedBundle / v.ptx->file);
  }
  EXPECT_EQ(f.tier_bytes.at("spirv"), spirv);
  if (ptx) EXPECT_EQ(f.tier_bytes.at("ptx"), ptx);
  EXPECT_GT(f.source_bytes, 0u);
  const std::string text = r.to_text();
  EXPECT_NE(text.find("matmul_tiled_TILE16: TILE=16; work-group 16x16x1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("registers"), std::string::npos) << text;
  EXPECT_NE(r.to_json().find("\"spill_store_bytes\""), std::string::npos);
}

// A binary as the linker leaves it: the manifest, modules, PTX and source
// among other bytes, each NUL-terminated text where the embedding makes one.
TEST(InspectBundles, ABinaryIsReadForItsFamiliesAndADamagedModuleIsNamed) {
  const Manifest m = Manifest::parse(test::read_file(kInspectedBundle / "manifest.json"));
  std::string blob(1000, '\x5a');
  blob += test::read_file(kInspectedBundle / "manifest.json") + '\0';
  for (const Variant& v : m.variants) {
    blob.resize((blob.size() + 3) / 4 * 4 + 8, '\0');
    blob += test::read_file(kInspectedBundle / v.spirv_file);
    if (v.ptx) {
      blob += std::string(1, '\0') + test::read_file(kInspectedBundle / v.ptx->file) + '\0';
    }
  }
  const std::string embed = test::read_file(kInspectedBundle / "matmul_tiled.embed.cpp");
  const std::size_t at = embed.find("kSource[] = R\"fatcl(") + 20;
  blob += std::string(1, '\0') + embed.substr(at, embed.find(")fatcl\"", at) - at) + '\0';
  blob += std::string(500, '\x11');
  test::TempDir dir;
  const fs::path binary = dir.path / "product";
  test::write_file(binary, blob);
  InspectReport r = inspect_paths({binary});
  ASSERT_TRUE(r.ok()) << r.to_text();
  ASSERT_EQ(r.families.size(), 1u);
  EXPECT_EQ(r.families[0].tier_bytes, inspect_paths({kInspectedBundle}).families[0].tier_bytes);

  // One module damaged: that variant's SPIR-V is not found, and said so.
  const std::string module = test::read_file(kInspectedBundle / m.variants[2].spirv_file);
  blob[blob.find(module) + module.size() / 2] ^= 1;
  test::write_file(binary, blob);
  r = inspect_paths({binary});
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.families.size(), 1u);
  ASSERT_EQ(r.families[0].problems.size(), 1u);
  EXPECT_EQ(r.families[0].problems[0], m.variants[2].name + " [spirv]: not found");

  // Nothing embedded, nothing there: each named.
  test::write_file(dir.path / "plain", std::string(100, 'x'));
  r = inspect_paths({dir.path / "plain", dir.path / "missing"});
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_NE(r.problems[0].find("embeds no fatcl family"), std::string::npos);
  EXPECT_NE(r.problems[1].find("does not exist"), std::string::npos);
}

// This test program links the bundled families: each is found whole in it.
TEST(InspectBundles, TheBundledFamiliesAreFoundInThisProgram) {
  const InspectReport r = inspect_paths({"/proc/self/exe"});
  EXPECT_TRUE(r.ok()) << r.to_text();
  EXPECT_GE(r.families.size(), 5u);
}

}  // namespace
}  // namespace fatcl
