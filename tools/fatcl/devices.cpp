// fatcl devices: the OpenCL platforms and devices, with what fatcl reads off
// each (DeviceCaps); --json writes their descriptions (fatcl/offline.hpp).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "fatcl/loader.hpp"
#include "fatcl/offline.hpp"
#include "verbs.hpp"

namespace fatcl::tool {

namespace {

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
  std::vector<DeviceCaps> described;
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    const PlatformDevices& pd = platforms[p];
    if (!json) {
      std::printf("platform %zu: %s (%zu device%s)\n", p, pd.name.c_str(), pd.devices.size(),
                  pd.devices.size() == 1 ? "" : "s");
    }
    for (std::size_t d = 0; d < pd.devices.size(); ++d) {
      const DeviceCaps caps = DeviceCaps::query(pd.devices[d]);
      if (json) {
        described.push_back(caps);
      } else {
        std::printf("  device %zu: %s\n", d, caps.summary().c_str());
      }
    }
  }
  if (json) {
    const nlohmann::json extra = {{"icd_search", icds_json(search)}};
    std::fputs(device_descriptions_json(described, extra.dump()).c_str(), stdout);
  }
  if (!found) std::fprintf(stderr, "fatcl devices: no OpenCL platform found\n");
  return found ? 0 : 1;
}

}  // namespace

VerbRun add_devices(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd =
      app.add_subcommand("devices", "list OpenCL platforms and devices as fatcl sees them");
  cmd->add_flag("--json", *json,
                "print each device's description: what the loader reads off it, in the format "
                "`fatcl validate --device` reads (\"format\": \"fatcl-devices\", version 1)");
  return [json] { return list_devices(*json); };
}

}  // namespace fatcl::tool
