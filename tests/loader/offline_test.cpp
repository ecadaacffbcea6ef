// Device descriptions written and read back, refused with their cause, and
// the loader's choice computed from one (fatcl/offline.hpp), on synthetic
// devices and on the descriptions fatcl ships; no OpenCL runtime needed.
#include "fatcl/offline.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fatcl/matmul.hpp"
#include "fatcl/store.hpp"
#include "synthetic_device.hpp"
#include "test_manifests.hpp"

namespace fatcl {
namespace {

namespace fs = std::filesystem;

DeviceCaps nvidia_like() {
  DeviceCaps c = test::device(48, 1024, 3, 0, "");
  c.platform_name = "NVIDIA CUDA";
  c.device_name = "NVIDIA H200";
  c.device_version = "OpenCL 3.0 CUDA";
  c.driver_version = "580.159.04";
  c.device_type = CL_DEVICE_TYPE_GPU;
  c.vendor = "NVIDIA Corporation";
  c.isa = "sm_90";
  c.compute_units = 132;
  c.max_clock_mhz = 1980;
  c.native_float_width = 1;
  c.global_mem_bytes = 150ull << 30;
  c.max_mem_alloc_bytes = 37ull << 30;
  c.max_work_item_sizes = {1024, 1024, 64};
  c.fused_multiply_add = true;
  return c;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A family read off the committed bundle of matmul_tiled as a product
// would ship it: with its source and PTX, or sealed (NO_SOURCE) and
// without PTX.
std::shared_ptr<const FamilyBytes> tiled_bytes(bool sealed) {
  const fs::path dir = fs::path(FATCL_SOURCE_DIR) / "generated" / "matmul_tiled";
  Manifest m = Manifest::parse(slurp(dir / "manifest.json"));
  auto bytes = std::make_shared<FamilyBytes>();
  const std::string embed = slurp(dir / "matmul_tiled.embed.cpp");
  const std::string open = "kSource[] = R\"fatcl(";
  const std::size_t at = embed.find(open) + open.size();
  if (sealed) {
    m.source_embedded = false;
    for (Variant& v : m.variants) v.ptx.reset();
  } else {
    bytes->source = embed.substr(at, embed.find(")fatcl\"", at) - at);
  }
  for (const Variant& v : m.variants) {
    bytes->spirv.push_back({v.name, slurp(dir / v.spirv_file)});
    if (v.ptx) bytes->ptx.push_back({v.name, slurp(dir / v.ptx->file)});
  }
  bytes->manifest_json = m.dump();
  return bytes;
}

TEST(DeviceDescription, WrittenAndReadBackIsTheSameDevice) {
  DeviceCaps c = nvidia_like();
  DeviceCaps cpu = test::device(32, 256, 1, 2, "");
  cpu.device_type = CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT;
  const std::vector<DeviceDescription> back =
      parse_device_descriptions(device_descriptions_json({c, cpu}), "doc");
  ASSERT_EQ(back.size(), 2u);
  const DeviceCaps& r = back[0].caps;
  EXPECT_EQ(back[0].origin, "doc, device 0");
  EXPECT_EQ(r.summary(), c.summary());
  EXPECT_EQ(r.key(), c.key());
  EXPECT_EQ(r.cl_major, 3);
  EXPECT_EQ(r.device_type, c.device_type);
  EXPECT_EQ(r.global_mem_bytes, c.global_mem_bytes);
  EXPECT_EQ(r.max_mem_alloc_bytes, c.max_mem_alloc_bytes);
  EXPECT_EQ(r.max_work_item_sizes, c.max_work_item_sizes);
  EXPECT_EQ(r.isa, "sm_90");
  EXPECT_TRUE(same_hardware(r.profile(), c.profile()));
  EXPECT_EQ(device_similarity(r.profile(), c.profile()), 1.0);
  EXPECT_EQ(back[1].caps.cl_minor, 2);
  EXPECT_EQ(back[1].caps.device_type, cpu.device_type);
}

TEST(DeviceDescription, BadDocumentsAreRefusedNamingTheField) {
  const nlohmann::json good =
      nlohmann::json::parse(device_descriptions_json({nvidia_like()}));
  auto refused = [](const std::string& text) {
    try {
      parse_device_descriptions(text, "d.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto with = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    return refused(j.dump());
  };
  EXPECT_NE(refused("{").find("d.json: not JSON"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["format"] = "fatcl-store"; }).find("not a fatcl device"),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["version"] = 2; }).find("format version 2"), std::string::npos);
  EXPECT_NE(with([](auto& j) { j["devices"] = nlohmann::json::array(); }).find("no device"),
            std::string::npos);
  const std::string missing = with([](auto& j) { j["devices"][0].erase("local_mem_bytes"); });
  EXPECT_NE(missing.find("d.json, device 0 (NVIDIA H200): field \"local_mem_bytes\" is missing"),
            std::string::npos)
      << missing;
  EXPECT_NE(with([](auto& j) { j["devices"][0]["compute_units"] = -1; })
                .find("\"compute_units\" is number, not a whole number"),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["devices"][0]["compute_units"] = 1ull << 40; })
                .find("above 4294967295"),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["devices"][0]["type"] = {"fpga"}; }).find("type \"fpga\""),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["devices"][0]["device_version"] = "3.0"; })
                .find("is not \"OpenCL <major>.<minor>"),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["devices"][0]["max_work_item_sizes"] = {1, 2}; })
                .find("has 2 numbers, not 3"),
            std::string::npos);
  EXPECT_NE(with([](auto& j) { j["devices"][0]["cl_khr_il_program"] = "yes"; })
                .find("\"cl_khr_il_program\" is string, not boolean"),
            std::string::npos);
  EXPECT_EQ(with([](auto& j) { j["devices"][0]["later_field"] = 1; }), "accepted");
}

// The choice on a described NVIDIA device: PTX first (no SPIR-V intake),
// the same steps as the plan, and no OpenCL call.
TEST(OfflineChoice, FollowsTheTiersTheDeviceTakes) {
  const Family family(tiled_bytes(false));
  LoadOptions o;
  o.store = std::make_shared<Store>();
  const OfflineChoice nv = predict_load(family, nvidia_like(), o);
  ASSERT_TRUE(nv.tier);
  EXPECT_EQ(*nv.tier, Tier::Ptx);
  EXPECT_EQ(nv.variant, "matmul_tiled_TILE4");  // the manifest's order: no description given
  EXPECT_NE(nv.tier_refused.at(Tier::SpirV).find("CL_DEVICE_IL_VERSION is empty"),
            std::string::npos);
  EXPECT_EQ(nv.fitting.size(), 4u);
  const std::string text = nv.explanation.to_string();
  EXPECT_NE(text.find("predicted offline"), std::string::npos) << text;
  EXPECT_NE(text.find("through clCreateProgramWithBinary"), std::string::npos) << text;
  EXPECT_NE(text.find("misreported-kernel-work-group-size"), std::string::npos) << text;

  // SPIR-V 1.0 intake through the extension on OpenCL 1.2, 256 work-items:
  // the 32x32 tile does not fit and the rest load as SPIR-V.
  const DeviceCaps small_device = test::device(16, 256, 1, 2, "SPIR-V_1.0", true);
  const OfflineChoice small = predict_load(family, small_device, o);
  EXPECT_EQ(small.variant, "matmul_tiled_TILE4");
  EXPECT_EQ(small.fitting.size(), 3u);
  EXPECT_NE(small.explanation.to_string().find("needs 1024 work-items per group"),
            std::string::npos);
  EXPECT_EQ(*small.tier, Tier::SpirV);
  EXPECT_NE(small.explanation.to_string().find("clCreateProgramWithILKHR"), std::string::npos);

  // A build the store remembers as failed is passed over, as load() does.
  o.store->remember(
      {small_device.key(), family.manifest().variant("matmul_tiled_TILE4").sha256, Tier::SpirV},
      {RememberedOutcome::Kind::Build, "clBuildProgram failed: test", ""});
  const OfflineChoice next = predict_load(family, small_device, o);
  EXPECT_EQ(next.variant, "matmul_tiled_TILE4");
  EXPECT_EQ(*next.tier, Tier::Source);
  EXPECT_NE(next.explanation.to_string().find("not tried again"), std::string::npos);
}

TEST(OfflineChoice, ADeviceWithoutAPrecompiledTierFailsTheCheckNamingDeviceAndFamily) {
  const Family full(tiled_bytes(false));
  const Family sealed(tiled_bytes(true));
  DeviceCaps old = test::device(32, 1024, 1, 2, "");
  old.device_name = "Old GPU";
  const std::vector<DeviceDescription> devices{{nvidia_like(), "h200.json, device 0"},
                                               {old, "old.json, device 0"}};
  const DeviceCheckReport report = check_devices({&full, &sealed}, devices);
  ASSERT_EQ(report.checks.size(), 4u);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.checks[0].problem, "");  // the H200 takes the PTX
  // The sealed family without PTX: nothing on the H200.
  EXPECT_NE(report.checks[1].problem.find("nothing would load"), std::string::npos);
  EXPECT_NE(report.checks[1].problem.find("NO_SOURCE"), std::string::npos);
  // OpenCL 1.2 without IL: only the source, a problem until accepted.
  EXPECT_NE(report.checks[2].problem.find("only the OpenCL C source"), std::string::npos);
  EXPECT_NE(report.checks[2].problem.find("--source-ok \"Old GPU\""), std::string::npos);
  EXPECT_NE(report.checks[3].problem.find("nothing would load"), std::string::npos);
  const std::string text = report.to_text();
  EXPECT_NE(text.find("problem: Old GPU [synthetic, driver 1] (old.json, device 0): family "
                      "matmul_tiled: no precompiled tier would load"),
            std::string::npos)
      << text;
  DeviceCheckOptions accept;
  accept.source_ok = {"Old GPU"};
  const DeviceCheckReport accepted = check_devices({&full}, devices, accept);
  EXPECT_TRUE(accepted.ok()) << accepted.to_text();
  const nlohmann::json j = nlohmann::json::parse(report.to_json());
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["checks"][0]["chosen"]["tier"], "ptx");
  EXPECT_EQ(j["checks"][1]["chosen"], nullptr);
}

// Oclgrind gives each kernel its whole program's __local memory: a variant
// whose module declares more in all than the device has is refused before
// it is built (so that the offline choice can know it), elsewhere not.
TEST(OfflineChoice, OclgrindRefusesAProgramWithMoreLocalMemoryThanTheDevice) {
  Manifest m = test::tiled_manifest({8, 16});
  m.variants[1].program_local_mem_bytes = 40000;  // its own: 2 KiB
  DeviceCaps oclgrind = test::device(32, 1024, 1, 2, "");
  oclgrind.platform_name = "Oclgrind";
  oclgrind.driver_version = "Oclgrind 21.10";
  const Plan p = plan(m, oclgrind);
  ASSERT_EQ(p.variants().size(), 1u);
  EXPECT_EQ(p.variants()[0]->name, "matmul_tiled_TILE8");
  bool named = false;
  for (const Step& s : p.rejected) {
    named |= s.variant == "matmul_tiled_TILE16" &&
             s.reason.find("its program declares 40000 B of local memory in all, which this "
                           "driver gives each of its kernels (kernel-local-mem-counts-the-"
                           "program)") != std::string::npos;
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(plan(m, test::device(32, 1024, 1, 2, "")).variants().size(), 2u);
}

// Every description fatcl ships reads, and each of fatcl's own families
// gets a precompiled tier on each device that takes one.
TEST(OfflineChoice, ShippedDescriptionsReadAndChoose) {
  std::size_t files = 0;
  for (const auto& f : fs::directory_iterator(fs::path(FATCL_SOURCE_DIR) / "devices")) {
    if (f.path().extension() != ".json") continue;
    ++files;
    for (const DeviceDescription& d : read_device_descriptions(f.path().string())) {
      for (MatmulKernel k : matmul_kernels()) {
        LoadOptions o;
        o.store = std::make_shared<Store>();
        const OfflineChoice c = predict_load(matmul_family(k), d.caps, o);
        EXPECT_FALSE(c.variant.empty()) << d.origin << "\n" << c.explanation.to_string();
        const bool takes_precompiled = d.caps.accepts_spirv("1.0") || d.caps.is_nvidia();
        EXPECT_EQ(c.tier_refused.count(Tier::SpirV) + c.tier_refused.count(Tier::Ptx) < 2,
                  takes_precompiled)
            << d.origin;
      }
    }
  }
  EXPECT_GE(files, 5u);
}

}  // namespace
}  // namespace fatcl
