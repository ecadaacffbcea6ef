// fatcl devices: the OpenCL platforms and devices, with what fatcl reads off
// each (DeviceCaps).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "fatcl/loader.hpp"
#include "verbs.hpp"

namespace fatcl::tool {

namespace {

nlohmann::json caps_json(const DeviceCaps& c) {
  std::string why;
  const bool spirv = c.accepts_spirv("1.0", &why);
  return {{"name", c.device_name},
          {"device_version", c.device_version},
          {"driver_version", c.driver_version},
          {"il_version", c.il_version},
          {"cl_khr_il_program", c.khr_il_program},
          {"vendor", c.vendor},
          {"type", c.is_gpu() ? "gpu" : "cpu"},
          {"isa", c.isa},
          {"compute_units", c.compute_units},
          {"max_clock_mhz", c.max_clock_mhz},
          {"native_float_width", c.native_float_width},
          {"local_mem_bytes", c.local_mem_bytes},
          {"max_work_group_size", c.max_work_group_size},
          {"max_work_item_sizes", c.max_work_item_sizes},
          {"takes_spirv_1_0", spirv},
          {"spirv_reason", why}};
}

nlohmann::json icds_json(const IcdSearch& search) {
  nlohmann::json icds = nlohmann::json::array();
  for (const Icd& icd : search.icds) {
    icds.push_back({{"icd_file", icd.icd_file},
                    {"library", icd.library},
                    {"opens", icd.opens},
                    {"platforms", icd.platforms},
                    {"problem", icd.problem}});
  }
  return {{"where", search.where}, {"problem", search.problem}, {"icds", icds}};
}

// The ICDs first: a driver whose library does not open gives no platform,
// and the ICD loader does not say so.
int list_devices(bool json) {
  const IcdSearch search = find_icds();
  if (!json) std::printf("%s\n", search.to_string().c_str());
  std::vector<PlatformDevices> platforms;
  bool found = true;
  try {
    platforms = list_platforms();
  } catch (const Error& e) {
    if (e.cl_code() != CL_PLATFORM_NOT_FOUND_KHR) throw;
    found = false;
  }
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    const PlatformDevices& pd = platforms[p];
    nlohmann::json devices = nlohmann::json::array();
    if (!json) {
      std::printf("platform %zu: %s (%zu device%s)\n", p, pd.name.c_str(), pd.devices.size(),
                  pd.devices.size() == 1 ? "" : "s");
    }
    for (std::size_t d = 0; d < pd.devices.size(); ++d) {
      const DeviceCaps caps = DeviceCaps::query(pd.devices[d]);
      if (json) {
        devices.push_back(caps_json(caps));
      } else {
        std::printf("  device %zu: %s\n", d, caps.summary().c_str());
      }
    }
    out.push_back({{"platform", pd.name}, {"devices", devices}});
  }
  if (json) {
    const nlohmann::json doc = {{"icd_search", icds_json(search)}, {"platforms", out}};
    std::printf("%s\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  if (!found) std::fprintf(stderr, "fatcl devices: no OpenCL platform found\n");
  return found ? 0 : 1;
}

}  // namespace

VerbRun add_devices(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd =
      app.add_subcommand("devices", "list OpenCL platforms and devices as fatcl sees them");
  cmd->add_flag("--json", *json, "print them as JSON");
  return [json] { return list_devices(*json); };
}

}  // namespace fatcl::tool
