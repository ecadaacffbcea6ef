// fatcl's run-time loader: reads what a device can do, chooses the best
// variant of a kernel family that fits it, and loads it as SPIR-V where the
// driver takes SPIR-V, otherwise from the embedded OpenCL C source, moving
// down the chain until something works. Every decision leaves a reason.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatcl/embedded.hpp"
#include "fatcl/error.hpp"
#include "fatcl/manifest.hpp"
#include "fatcl/opencl.hpp"
#include "fatcl/text.hpp"
#include "fatcl/tier.hpp"
#include "fatcl/tuning.hpp"

namespace fatcl {

// What the loader needs to know about a device. query() reads it from the
// driver; tests fill it by hand to describe synthetic devices.
struct DeviceCaps {
  std::string platform_name;
  std::string device_name;
  std::string driver_version;  // CL_DRIVER_VERSION
  std::string device_version;  // CL_DEVICE_VERSION, e.g. "OpenCL 3.0 CUDA"
  int cl_major = 1;            // parsed from device_version
  int cl_minor = 2;
  std::string il_version;         // CL_DEVICE_IL_VERSION as reported; may be ""
  bool khr_il_program = false;    // cl_khr_il_program among the extensions
  std::uint64_t device_type = 0;  // CL_DEVICE_TYPE bits
  std::uint64_t local_mem_bytes = 0;
  std::size_t max_work_group_size = 0;
  std::array<std::size_t, 3> max_work_item_sizes{0, 0, 0};
  // CL_FP_FMA in CL_DEVICE_SINGLE_FP_CONFIG: fma() on floats is one
  // instruction, not an emulation.
  bool fused_multiply_add = false;
  std::uint64_t max_mem_alloc_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::uint64_t global_mem_bytes = 0;     // CL_DEVICE_GLOBAL_MEM_SIZE

  // CL_DEVICE_TYPE_GPU or CL_DEVICE_TYPE_ACCELERATOR: wide parallel hardware
  // with fast __local memory, where staged, register-blocked shapes pay.
  bool is_gpu() const {
    return (device_type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) != 0;
  }

  // NVIDIA's OpenCL, which takes PTX as a program binary.
  bool is_nvidia() const { return platform_name.find("NVIDIA") != std::string::npos; }

  // OpenCL 2.1 or later: clCreateProgramWithIL and CL_DEVICE_IL_VERSION are
  // core (before that they come with cl_khr_il_program).
  bool il_is_core() const { return cl_major * 100 + cl_minor >= 201; }

  // Reads the device. Throws fatcl::Error if a query fails.
  static DeviceCaps query(const cl::Device& device);

  // Whether programs can be created from a SPIR-V module of `version`
  // ("1.0"): the device must be OpenCL 2.1+ or have cl_khr_il_program, and
  // list a SPIR-V version at least as high in its IL version. If not, `why`
  // gets the reason.
  bool accepts_spirv(const std::string& version, std::string* why = nullptr) const;

  // Identifies device and driver; trial launches are remembered under it.
  std::string key() const;
  // One line: name, platform, version, driver, limits, SPIR-V intake.
  std::string summary() const;
};

// The OpenCL platforms the ICD loader lists, each with its devices.
struct PlatformDevices {
  cl::Platform platform;
  std::string name;                 // CL_PLATFORM_NAME
  std::vector<cl::Device> devices;  // empty when the platform has none
};
// Throws fatcl::Error if there is no platform (naming every ICD the loader
// would try and why each gave none, find_icds()) or a query fails.
std::vector<PlatformDevices> list_platforms();

// One installable client driver the ICD loader would try, and whether its
// library opens: a driver whose library does not load (a dependency
// missing, a wrong path) gives no platform, and the ICD loader says nothing.
struct Icd {
  std::string icd_file;  // the .icd file that names the library; "" where OCL_ICD_VENDORS does
  std::string library;   // the name the loader hands to dlopen
  bool opens = false;    // dlopen takes the library (it may still be no ICD)
  std::string problem;   // "" where it opens and is an ICD; else why not (dlerror's words)
  int platforms = 0;     // what its clIcdGetPlatformIDsKHR counts, where it opens
};
// Where the ICD loader looks and what it finds there, by ocl-icd's rules (the
// loader Debian ships): OCL_ICD_VENDORS names a folder of .icd files, one
// .icd file (a bare name is looked for in the vendors folder first) or one
// library; unset or empty, the folder OPENCL_VENDOR_PATH names, else
// /etc/OpenCL/vendors. Each .icd file's first line is a library.
struct IcdSearch {
  std::string where;    // e.g. "OCL_ICD_VENDORS=/x/intel-cpu.icd (an .icd file)"
  std::string problem;  // "" unless the place itself is missing, unreadable or empty
  std::vector<Icd> icds;
  // "ICDs (<where>): <file> -> <library>: opens, 1 platform; ..." on one
  // line per ICD, each prefixed by `indent`.
  std::string to_string(const std::string& indent = "  ") const;
};
// Opens each library as the ICD loader does (dlopen, RTLD_LAZY | RTLD_LOCAL)
// and closes it again; never throws.
IcdSearch find_icds();
// Device `index` of the first platform whose name contains `platform` ("":
// any) and that has a device. Throws fatcl::Error naming the platforms seen
// when there is none, or the number of devices when `index` is out of range.
cl::Device pick_device(const std::string& platform = "", std::size_t index = 0);
// A context of the one device, and an in-order queue on it: how fatcl's
// tools and tests make theirs. Throw fatcl::Error with the OpenCL code.
cl::Context context_for(const cl::Device& device);
cl::CommandQueue queue_for(const cl::Context& context, const cl::Device& device,
                           cl_command_queue_properties properties = 0);
// What load() and Matmul check before anything else: throws fatcl::Error,
// starting with `who`, if the context or the device is null or the device
// is not one of the context's devices.
void check_context_and_device(const cl::Context& context, const cl::Device& device,
                              const std::string& who);

// One line of an explanation: what happened to one variant in one tier.
struct Step {
  enum class Outcome {
    Chosen,    // loaded and ready
    Failed,    // tried, and failed (the reason says where)
    Rejected,  // not tried: it does not fit this device or tier
    Unneeded,  // fits, but ranked below the chosen one
  };
  std::string variant;
  std::optional<Tier> tier;  // none: the whole variant
  Outcome outcome;
  std::string reason;
};
const char* to_string(Step::Outcome outcome);

struct Explanation {
  std::string device;               // DeviceCaps::summary()
  std::string ranking;              // the ranking rule, in words
  std::string tuning;               // the tuning entry that decided, or why none did
  std::vector<std::string> notes;   // what the stores reported: entries discarded, writes failed
  std::vector<std::string> quirks;  // known driver quirks that apply, and what fatcl does
  std::vector<Step> steps;
  // How much of the steps the text shows: Grouped lists the chosen and the
  // failed steps one by one and gives the others (not needed, rejected) one
  // line per tier, outcome and reason with the number of variants ("36
  // variants [ptx]  rejected: PTX is taken only by NVIDIA's OpenCL; ...");
  // EveryStep lists each step on its own line.
  enum class Detail { Grouped, EveryStep };
  // Multi-line text: the device, the choice, then the steps with their reasons.
  std::string to_string(Detail detail = Detail::Grouped) const;
};

// A trial launch settles a variant whose driver reports a smaller
// CL_KERNEL_WORK_GROUP_SIZE than the variant requires (rusticl reads 32 and
// NVIDIA 256 for kernels that do run 32x32 groups). It runs the kernel once
// on a small problem and returns "" if the launch succeeded and the result
// was right, otherwise the reason.
using TrialLaunch = std::function<std::string(const cl::Context&, const cl::Device&,
                                              const cl::Kernel&, const Variant&)>;

// How a family orders the variants that fit a device: a score (higher is
// tried first; ties keep the manifest's order) and the rule in words for the
// explanation. Without a score, the manifest's order.
struct Ranking {
  std::function<double(const Variant&, const DeviceCaps&)> score;
  std::string rule = "the order the family's manifest lists its variants";
  // The tier to try a variant in first, where one was measured fastest
  // (a tuning entry's); none: the loader's order, SPIR-V, PTX, source.
  std::function<std::optional<Tier>(const Variant&)> tier_first;

  // Work-items per work-group, most first, then less local memory: where a
  // work-group shares its loads through local memory, a larger group reads
  // each input element fewer times.
  static Ranking by_work_group_items();
};

// What a family says about itself to the loader (the rest of a family's
// description, launch geometry and arguments, belongs to its user, e.g.
// fatcl::Matmul): how to rank its variants, a trial launch that settles a
// CL_KERNEL_WORK_GROUP_SIZE below the variant's work-group, and the tuning
// entries its makers measured. A family without a trial is settled by the
// known-quirk table (driver_quirks) or refused.
struct FamilyDescription {
  Ranking ranking;
  TrialLaunch trial;
  // Consulted after the store's own entries (Store::find_tuning); a family
  // reads them from a store document it embeds (parse_tuning_entries).
  std::vector<TuningEntry> shipped_tuning;
};

// A driver behaviour fatcl knows of and works around.
struct DriverQuirk {
  std::string id;                    // e.g. "misreported-kernel-work-group-size"
  std::string breaks;                // what the driver gets wrong
  std::string fatcl_does;            // what fatcl does about it
  std::string source_build_options;  // added when building from source, "" for none
  std::string versions;              // the driver versions it applies to, in words
};
// The known quirks that apply to a device (by platform, device name and
// driver version; loader/src/quirks.cpp).
std::vector<DriverQuirk> driver_quirks(const DeviceCaps& caps);
// Whether the quirk of that id applies to the device.
bool has_driver_quirk(const DeviceCaps& caps, std::string_view id);
// Whether a driver version (CL_DRIVER_VERSION: its first run of numbers, as
// in "22.3.6", "3.1+debian" or "Oclgrind 21.10") lies in [from, fixed_in),
// comparing number by number; an empty bound is open. None when the version
// has no number to compare (the quirk table then takes the driver to be
// affected). Throws fatcl::Error if a bound is not a version.
std::optional<bool> driver_version_in(std::string_view version, std::string_view from,
                                      std::string_view fixed_in);

class Store;         // fatcl/store.hpp
class ProgramCache;  // fatcl/cache.hpp

struct LoadOptions {
  std::string variant;       // only this variant; "" for all
  std::optional<Tier> tier;  // only this tier; none for every tier
  TrialLaunch trial;         // replaces the family's trial launch
  // Where trial launches, failed builds and tuning entries are kept; null:
  // Store::user(), the user's file.
  std::shared_ptr<Store> store;
  // Where built programs are kept between runs; null: ProgramCache::user().
  std::shared_ptr<ProgramCache> cache;
  bool use_tuning = true;  // rank by a matching tuning entry before the family's ranking
  // Opt-in self-check (also FATCL_SELF_CHECK=1): after a build, run the
  // family's trial problem against its CPU reference; a variant that computes
  // wrong is marked bad for this device and driver (in the store) and the
  // chain moves on, saying so. Drivers do miscompile.
  bool self_check = false;
  // The problem's sizes (e.g. M, N, K) for the tuning lookup; empty: the
  // entry of the largest problem tuned.
  std::vector<std::size_t> problem;
};

// A kernel family as embedded by fatcl_add_kernel_variants().
class Family {
 public:
  // Parses the manifest and pairs each variant with its module. Throws
  // fatcl::Error if the manifest is malformed or a module is missing or has
  // another size than the manifest says.
  explicit Family(const EmbeddedFamily& embedded, FamilyDescription description = {});

  const Manifest& manifest() const { return manifest_; }
  const FamilyDescription& description() const { return description_; }
  std::string_view source() const { return source_; }
  // The SPIR-V module of a variant (bytes).
  std::string_view spirv(const std::string& variant) const;
  // The PTX of a variant; empty when the bundle has none for it.
  std::string_view ptx(const std::string& variant) const;

 private:
  std::size_t index_of(const std::string& variant) const;

  Manifest manifest_;
  FamilyDescription description_;
  std::string_view source_;
  std::vector<std::string_view> modules_;  // in manifest order
  std::vector<std::string_view> ptx_;      // in manifest order; empty: none
};

// The loader's plan for one device: the chain of (variant, tier) attempts in
// order, and the (variant, tier) pairs left out with their reasons. A
// Candidate points into the Manifest given to plan(), which must outlive it.
struct Candidate {
  const Variant* variant;
  Tier tier;
};
struct Plan {
  std::vector<Candidate> chain;
  std::vector<Step> rejected;
  // The variants of the chain, each once, in its order (what bench, tune and
  // cache warm run).
  std::vector<const Variant*> variants() const;
};

// The plan: variants that fit the device (work-group size within
// CL_DEVICE_MAX_WORK_GROUP_SIZE and CL_DEVICE_MAX_WORK_ITEM_SIZES, local
// memory within CL_DEVICE_LOCAL_MEM_SIZE) in the family's ranking, each tried
// as SPIR-V first (no OpenCL C compile at start-up) where the device takes its
// SPIR-V version, then as PTX on NVIDIA's OpenCL, then from source.
Plan plan(const Manifest& manifest, const DeviceCaps& caps, const LoadOptions& options = {},
          const Ranking& ranking = {});

// A loaded, ready kernel with the reasons it was chosen.
// Where a loaded program came from: the driver built it now from the tier's
// input, fatcl's program cache on disk held its binary, or this process had
// built the same program into the same context before (shared).
enum class ProgramOrigin { Built, ProgramCache, Process };
const char* to_string(ProgramOrigin origin);  // "built" / "program cache" / "process"

struct LoadedKernel {
  cl::Program program;
  cl::Kernel kernel;
  Variant variant;
  Tier tier = Tier::Source;
  ProgramOrigin origin = ProgramOrigin::Built;
  std::size_t kernel_work_group_size = 0;  // CL_KERNEL_WORK_GROUP_SIZE as reported
  std::size_t kernel_local_mem_bytes = 0;  // CL_KERNEL_LOCAL_MEM_SIZE
  bool settled_by_trial = false;           // the reported work-group size was too small
  Explanation explanation;
};

// Walks the plan's chain: SPIR-V -> PTX -> source -> next variant, in the order of
// a tuning entry for this device, driver and problem where the store has one
// (Store::find_tuning), else the family's ranking. Checks after each build
// CL_KERNEL_LOCAL_MEM_SIZE and CL_KERNEL_WORK_GROUP_SIZE. A shortfall in the
// latter is settled by the trial launch (options.trial, else the family's),
// without one by the known-quirk table. Trial verdicts and failed builds are
// remembered in the store per device, driver and build (module hash, or
// source hash and options) and not repeated. Throws fatcl::Error carrying the
// whole explanation if nothing in the chain loads.
LoadedKernel load(const cl::Context& context, const cl::Device& device, const Family& family,
                  const LoadOptions& options = {});

// Forgets the remembered trial launches and failed builds of Store::user() (tests).
void forget_trials();

}  // namespace fatcl
