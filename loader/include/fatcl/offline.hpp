// The loader's choice without the device: devices described in a file
// (what fatcl reads off each, written by `fatcl devices --json`), the choice
// load() would make on one of them computed from its description alone, and
// the check a product's CI runs with it (`fatcl validate --device`).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatcl/loader.hpp"

namespace fatcl {

// A device description file: {"format": "fatcl-devices", "version": 1,
// "devices": [...]}, each device every field of DeviceCaps the loader reads
// (platform, name, vendor, versions, IL intake, type, ISA, limits, FP
// config). Written with two fields for people that a reader recomputes
// instead of trusting: "spirv" (what the device takes, or why nothing) and
// "quirks" (the known driver quirks that applied when it was written; the
// reading fatcl applies its own table, which may know more).
constexpr int kDeviceDescriptionVersion = 1;

struct DeviceDescription {
  DeviceCaps caps;
  std::string origin;  // "FILE, device N"
};

// The document describing `devices`, two-space indented; `extra` (a JSON
// object's text, may be "") adds its members at the top (e.g. where the ICD
// loader looked).
std::string device_descriptions_json(const std::vector<DeviceCaps>& devices,
                                     const std::string& extra = "");
// The devices a document describes. Throws fatcl::Error naming `origin`, the
// device's index and name and the field at fault: not JSON, another format,
// a newer version, a field missing or of the wrong type, a number out of
// range, a version string the loader cannot read.
std::vector<DeviceDescription> parse_device_descriptions(std::string_view text,
                                                         const std::string& origin);
// The same from a file (its path is the origin).
std::vector<DeviceDescription> read_device_descriptions(const std::string& path);

// What load() would choose for a family on a device, computed from the
// device's description without an OpenCL call: the plan ranked as load()
// ranks it (ranked_plan: the store's and the family's shipped tuning, the
// family's model and ranking, the fit checks, the tiers the device takes,
// damaged code refused), then the first candidate of the chain that the
// store does not remember as failed to build on that device and driver.
// What only a driver can tell (that the build succeeds, the kernel's
// CL_KERNEL_WORK_GROUP_SIZE, a trial launch) is taken to go well, and the
// explanation says so.
struct OfflineChoice {
  std::string family;
  std::string variant;       // "" where nothing would load
  std::optional<Tier> tier;  // the chosen variant's tier
  // The variants that fit, in the order load() tries them, each with the
  // tiers the device would load it in.
  std::vector<std::pair<std::string, std::vector<Tier>>> fitting;
  // Per tier, why the device would load no variant in it ("" where some
  // variant loads in it): e.g. SPIR-V "CL_DEVICE_IL_VERSION is empty".
  std::map<Tier, std::string> tier_refused;
  // Steps as load() leaves them: chosen, remembered failures, not needed,
  // rejected; its notes say the choice was made offline.
  Explanation explanation;
  bool precompiled() const { return tier && *tier != Tier::Source; }
};
OfflineChoice predict_load(const Family& family, const DeviceCaps& caps,
                           const LoadOptions& options = {});

// The check of a product's families against target devices: per device and
// family, the offline choice, and a problem where nothing would load, or
// where no variant would load in a precompiled tier (SPIR-V, PTX), only
// from the source, unless the source is accepted there. A device that takes
// a precompiled tier but whose measurements put the source build first
// (Intel's CPU runtime, some shapes) is no problem.
struct DeviceCheckOptions {
  // Problem sizes, form and the store (its tuning entries and remembered
  // build failures); a null store: an empty one in memory, so that only the
  // families' shipped entries rank, as on a fresh installation.
  LoadOptions load;
  // Where a source build is acceptable: each a substring of the device's
  // "PLATFORM / NAME", or "*" for every device.
  std::vector<std::string> source_ok;
};
struct DeviceCheck {
  std::string device;  // "NAME [PLATFORM, driver VERSION]"
  std::string origin;  // DeviceDescription::origin
  OfflineChoice choice;
  // What is wrong ("" when nothing is): the check's device, origin and family
  // name where.
  std::string problem;
};
struct DeviceCheckReport {
  std::vector<DeviceCheck> checks;  // per device, per family
  bool ok() const;
  // One line per device and family (the choice, how many variants fit and
  // in which tiers), the problems; with `explain`, each choice's explanation.
  std::string to_text(bool explain = false) const;
  // {"ok", "checks": [{"device", "origin", "family", "chosen": {"variant",
  // "tier"} or null, "precompiled", "fitting", "tier_refused", "problem",
  // "explanation"}]}
  std::string to_json() const;
};
DeviceCheckReport check_devices(const std::vector<const Family*>& families,
                                const std::vector<DeviceDescription>& devices,
                                const DeviceCheckOptions& options = {});

}  // namespace fatcl
