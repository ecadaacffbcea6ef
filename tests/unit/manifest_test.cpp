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
  EXPECT_NE(error_of([&] { Manifest::parse(no_kernel); }).find("no field \"kernel\""),
            std::string::npos);
  std::string bad_size = text;
  bad_size.replace(bad_size.find("\"local_mem_bytes\": 576"), 22, "\"local_mem_bytes\": \"x\"");
  std::string message = error_of([&] { Manifest::parse(bad_size); });
  EXPECT_NE(message.find("matmul_tiled_TILE8"), std::string::npos) << message;
  EXPECT_NE(message.find("local_mem_bytes"), std::string::npos) << message;
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

TEST(Error, NamesOpenCLCodes) {
  EXPECT_EQ(cl_status_name(-59), "CL_INVALID_OPERATION");
  EXPECT_EQ(cl_status_name(-30), "CL_INVALID_VALUE");
  EXPECT_EQ(cl_status_name(-12345), "CL_ERROR(-12345)");
  Error e("boom", -54);
  EXPECT_EQ(e.cl_code(), -54);
}

}  // namespace
}  // namespace fatcl
