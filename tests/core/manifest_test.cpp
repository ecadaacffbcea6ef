#include "fatcl/manifest.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"
#include "fatcl/error.hpp"
#include "fatcl/loader.hpp"
#include "test_manifests.hpp"

namespace fatcl {
namespace {

using test::error_of;

TEST(Manifest, DumpParsesBackToTheSame) {
  Manifest m = test::tiled_manifest({4, 16, 32});
  Manifest back = Manifest::parse(m.dump());
  EXPECT_EQ(back.dump(), m.dump());
  ASSERT_EQ(back.variants.size(), 3u);
  EXPECT_EQ(back.variants[1].name, "matmul_tiled_TILE16");
  EXPECT_EQ(back.variants[1].param("TILE"), 16);
  EXPECT_EQ(back.variants[1].define_options(), "-DTILE=16");
  EXPECT_EQ(back.variants[1].work_group_items(), 256u);
}

TEST(Manifest, BadInputNamesTheCause) {
  EXPECT_NE(error_of([] { Manifest::parse("{"); }).find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of([] { Manifest::parse("[]"); }).find("not a JSON object"), std::string::npos);
  std::string text = test::tiled_manifest({8}).dump();
  std::string no_kernel = text;
  no_kernel.replace(no_kernel.find("\"kernel\""), 8, "\"kernal\"");
  EXPECT_NE(error_of([&] { Manifest::parse(no_kernel); }).find("field \"kernel\" is missing"),
            std::string::npos);
  std::string bad_size = text;
  bad_size.replace(bad_size.find("\"local_mem_bytes\": 576"), 22, "\"local_mem_bytes\": \"x\"");
  std::string message = error_of([&] { Manifest::parse(bad_size); });
  EXPECT_NE(message.find("matmul_tiled_TILE8"), std::string::npos) << message;
  EXPECT_NE(message.find("local_mem_bytes"), std::string::npos) << message;
}

// A module's __local memory in all (what Oclgrind gives each kernel) is
// kept, and can be no less than the kernel's own.
TEST(Manifest, ProgramLocalMemoryIsKeptAndChecked) {
  Manifest m = test::tiled_manifest({8});
  m.variants[0].program_local_mem_bytes = 1152;
  const std::string text = m.dump();
  EXPECT_EQ(Manifest::parse(text).variants[0].program_local_mem_bytes, 1152u);
  EXPECT_EQ(Manifest::parse(test::tiled_manifest({8}).dump()).variants[0].program_local_mem_bytes,
            0u);  // not recorded
  std::string less = text;
  const std::string recorded = "\"program_local_mem_bytes\": 1152";
  less.replace(less.find(recorded), recorded.size(), "\"program_local_mem_bytes\": 100");
  const std::string message = error_of([&] { Manifest::parse(less); });
  EXPECT_NE(message.find("\"program_local_mem_bytes\" is 100, less than the kernel's own "
                         "local_mem_bytes 576"),
            std::string::npos)
      << message;
}

TEST(Manifest, UnknownVariantListsTheKnownOnes) {
  Manifest m = test::tiled_manifest({8, 16});
  std::string message = error_of([&] { m.variant("matmul_tiled_TILE64"); });
  EXPECT_NE(message.find("matmul_tiled_TILE8, matmul_tiled_TILE16"), std::string::npos) << message;
  EXPECT_NE(error_of([&] { m.variants[0].param("WPT"); }).find("no parameter WPT"),
            std::string::npos);
}

TEST(Family, ModuleOfTheWrongSizeIsRefused) {
  Manifest m = test::tiled_manifest({8});
  std::string json = m.dump();
  static const unsigned char bytes[4] = {1, 2, 3, 4};
  EmbeddedModule module{"matmul_tiled_TILE8", bytes, sizeof bytes};
  EmbeddedFamily embedded{json.c_str(), json.size(), "", 0, &module, 1};
  std::string message = error_of([&] { Family f(embedded); });
  EXPECT_NE(message.find("has 4 B, the manifest says"), std::string::npos) << message;
  EmbeddedFamily none{json.c_str(), json.size(), "", 0, nullptr, 0};
  EXPECT_NE(error_of([&] { Family f(none); }).find("no embedded module for matmul_tiled_TILE8"),
            std::string::npos);
}

// A variant's PTX record round-trips, with and without ptxas's report, and
// the embedded PTX must be there, of the recorded size, for exactly the
// variants whose records list it.
TEST(Family, PtxIsPairedWithItsRecord) {
  Manifest m = test::tiled_manifest({8, 16});
  PtxModule ptx;
  ptx.file = "matmul_tiled_TILE8.ptx";
  ptx.target = "sm_60";
  ptx.ptx_version = "5.0";
  ptx.size = 5;
  ptx.sha256 = std::string(64, '0');
  m.variants[0].ptx = ptx;
  Manifest back = Manifest::parse(m.dump());
  ASSERT_TRUE(back.variants[0].ptx);
  EXPECT_FALSE(back.variants[0].ptx->ptxas) << "no report: unvalidated";
  EXPECT_FALSE(back.variants[1].ptx);
  PtxasReport report;
  report.arch = "sm_90";
  report.registers = 168;
  report.spill_store_bytes = 4;
  m.variants[0].ptx->ptxas = report;
  back = Manifest::parse(m.dump());
  ASSERT_TRUE(back.variants[0].ptx && back.variants[0].ptx->ptxas);
  EXPECT_EQ(back.variants[0].ptx->ptxas->registers, 168u);
  EXPECT_EQ(back.dump(), m.dump());

  const std::string json = m.dump();
  std::vector<std::string> spirv;
  std::vector<EmbeddedModule> modules;
  for (const Variant& v : m.variants) spirv.emplace_back(v.spirv_size, '\0');
  for (std::size_t i = 0; i < m.variants.size(); ++i) {
    modules.push_back({m.variants[i].name.c_str(),
                       reinterpret_cast<const unsigned char*>(spirv[i].data()), spirv[i].size()});
  }
  static const char text[] = "hello";
  EmbeddedModule good{"matmul_tiled_TILE8", reinterpret_cast<const unsigned char*>(text), 5};
  EmbeddedFamily embedded{json.c_str(),   json.size(),    "",    0,
                          modules.data(), modules.size(), &good, 1};
  Family f(embedded);
  EXPECT_EQ(f.ptx("matmul_tiled_TILE8"), "hello");
  EXPECT_TRUE(f.ptx("matmul_tiled_TILE16").empty());
  EmbeddedModule short_one{"matmul_tiled_TILE8", reinterpret_cast<const unsigned char*>(text), 4};
  embedded.ptx_modules = &short_one;
  EXPECT_NE(
      error_of([&] { Family g(embedded); }).find("embedded PTX of matmul_tiled_TILE8 has 4 B"),
      std::string::npos);
  EmbeddedModule stray{"matmul_tiled_TILE16", reinterpret_cast<const unsigned char*>(text), 5};
  embedded.ptx_modules = &stray;
  EXPECT_NE(error_of([&] { Family g(embedded); }).find("lists without PTX"), std::string::npos);
  EmbeddedModule unnamed{nullptr, reinterpret_cast<const unsigned char*>(text), 5};
  embedded.ptx_modules = &unnamed;
  EXPECT_NE(error_of([&] { Family g(embedded); }).find("(null)"), std::string::npos);
  embedded.ptx_modules = nullptr;
  embedded.ptx_module_count = 0;
  EXPECT_NE(error_of([&] { Family g(embedded); }).find("no embedded PTX for matmul_tiled_TILE8"),
            std::string::npos);
}

TEST(Error, NamesOpenCLCodes) {
  EXPECT_EQ(cl_status_name(-59), "CL_INVALID_OPERATION");
  EXPECT_EQ(cl_status_name(-30), "CL_INVALID_VALUE");
  EXPECT_EQ(cl_status_name(-12345), "CL_ERROR(-12345)");
  Error e("boom", -54);
  EXPECT_EQ(e.cl_code(), -54);
}

}  // namespace
}  // namespace fatcl
