// The known-quirk table (loader/src/quirks.cpp) on synthetic devices.
#include <gtest/gtest.h>

#include <algorithm>

#include "error_of.hpp"
#include "fatcl/loader.hpp"
#include "synthetic_device.hpp"

namespace fatcl {
namespace {

using test::device;

// The known-quirk table: rows by platform, device and driver version, none
// for an unknown driver.
std::vector<std::string> quirk_ids(const DeviceCaps& caps) {
  std::vector<std::string> ids;
  for (const DriverQuirk& q : driver_quirks(caps)) ids.push_back(q.id);
  return ids;
}
bool has_id(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(Quirks, RowsApplyByPlatformDeviceAndDriverVersion) {
  DeviceCaps caps = device(64, 1024, 3, 0, "");
  EXPECT_TRUE(driver_quirks(caps).empty());

  caps.platform_name = "rusticl";
  caps.device_name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  caps.driver_version = "22.3.6";
  std::vector<std::string> ids = quirk_ids(caps);
  EXPECT_TRUE(has_id(ids, "loop-limit-65536"));
  EXPECT_TRUE(has_id(ids, "misreported-kernel-work-group-size"));
  EXPECT_TRUE(has_id(ids, "zero-profiling-timestamps"));
  EXPECT_TRUE(has_id(ids, "concurrent-calls-race"));
  for (const DriverQuirk& q : driver_quirks(caps)) {
    if (q.id == "misreported-kernel-work-group-size") {
      EXPECT_EQ(q.versions, "22.3 and later, measured on Mesa 22.3.6");
    }
  }
  // A rusticl older than the first one measured: only llvmpipe's loop
  // limit, which every Mesa release has.
  caps.driver_version = "22.2.0";
  EXPECT_EQ(quirk_ids(caps), std::vector<std::string>{"loop-limit-65536"});
  // Later releases keep the rows until one is known to be fixed.
  caps.driver_version = "24.0.1";
  EXPECT_TRUE(has_id(quirk_ids(caps), "misreported-kernel-work-group-size"));
  // An unreadable version is taken to be affected, and the row says so.
  caps.driver_version = "git-main";
  bool said = false;
  for (const DriverQuirk& q : driver_quirks(caps)) {
    if (q.id == "misreported-kernel-work-group-size") {
      said = q.versions.find("\"git-main\" not readable, so taken to be affected") !=
             std::string::npos;
    }
  }
  EXPECT_TRUE(said);
  EXPECT_TRUE(has_driver_quirk(caps, "misreported-kernel-work-group-size"));

  // The loop limit is llvmpipe's, under Clover too; rusticl on another
  // device does not have it.
  caps.platform_name = "Clover";
  caps.driver_version = "22.3.6";
  EXPECT_EQ(quirk_ids(caps), std::vector<std::string>{"loop-limit-65536"});
  caps.platform_name = "rusticl";
  caps.device_name = "AMD Radeon RX 6800 (navi21, LLVM 15.0.6, DRM 3.49)";
  ids = quirk_ids(caps);
  EXPECT_FALSE(has_id(ids, "loop-limit-65536"));
  EXPECT_TRUE(has_id(ids, "misreported-kernel-work-group-size"));

  caps.platform_name = "NVIDIA CUDA";
  caps.device_name = "NVIDIA H200";
  caps.driver_version = "580.159.04";
  EXPECT_TRUE(has_driver_quirk(caps, "misreported-kernel-work-group-size"));
  caps.driver_version = "575.57.08";  // before the first driver measured
  EXPECT_FALSE(has_driver_quirk(caps, "misreported-kernel-work-group-size"));
  EXPECT_TRUE(has_driver_quirk(caps, "no-spirv-intake"));  // every version
}

TEST(Quirks, DriverVersionRangesCompareNumberByNumber) {
  EXPECT_EQ(driver_version_in("22.3.6", "22.3", ""), true);
  EXPECT_EQ(driver_version_in("22.3", "22.3.0", ""), true);  // missing parts read as 0
  EXPECT_EQ(driver_version_in("22.10", "22.9", ""), true);   // numbers, not text
  EXPECT_EQ(driver_version_in("3.1+debian", "3.0", "3.2"), true);
  EXPECT_EQ(driver_version_in("3.2", "3.0", "3.2"), false);  // fixed_in is excluded
  EXPECT_EQ(driver_version_in("Oclgrind 21.10", "", "21.10.1"), true);
  EXPECT_EQ(driver_version_in("580.159.04", "580", "590"), true);
  EXPECT_EQ(driver_version_in("590.1", "580", "590"), false);
  EXPECT_EQ(driver_version_in("anything", "", ""), true);  // no bound, nothing to read
  EXPECT_EQ(driver_version_in("", "1.0", ""), std::nullopt);
  EXPECT_EQ(driver_version_in("1234567890.1", "1.0", ""), std::nullopt);
  EXPECT_NE(test::error_of([] {
              driver_version_in("1.0", "new", "");
            }).find("quirk table: \"new\" is not a version"),
            std::string::npos);
}

}  // namespace
}  // namespace fatcl
