// fatcl's run-time loader: reads what a device can do, chooses the best
// variant of a kernel family that fits it, and loads it as SPIR-V where the
// driver takes SPIR-V, as PTX on NVIDIA's OpenCL, otherwise from the
// embedded OpenCL C source, moving down the chain until something works.
// Every decision leaves a reason. This header includes the loader's parts:
// device.hpp (capabilities, platforms, ICDs, quirks), family.hpp (a family
// and its description), explanation.hpp, tier.hpp and tuning.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatcl/device.hpp"
#include "fatcl/error.hpp"
#include "fatcl/explanation.hpp"
#include "fatcl/family.hpp"
#include "fatcl/manifest.hpp"
#include "fatcl/opencl.hpp"
#include "fatcl/text.hpp"
#include "fatcl/tier.hpp"
#include "fatcl/tuning.hpp"

namespace fatcl {

class Store;         // fatcl/store.hpp
class ProgramCache;  // fatcl/cache.hpp

struct LoadOptions {
  // Only this variant ("" for all); without a tier, in the tier a matching
  // tuning entry measured it fastest first, else in the loader's order.
  std::string variant;
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
  // The problem's form, for a family that serves several (TuningEntry::form):
  // the tuning lookup keys on it, and online learning records it.
  std::string form;
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

// The plan load() walks for these options: ranked by the store's tuning
// entry for the problem where one matches (carried to the problem by the
// family's model, carry_tuning), else by the family's model of the problem
// (Ranking::shape_score), else by its ranking. `rule`, `tuning` and `entry`
// (each may be null) get the ranking in words, the tuning paragraph of the
// explanation and the entry that ranked the plan.
Plan ranked_plan(const Family& family, const DeviceCaps& caps, const LoadOptions& options,
                 std::string* rule = nullptr, std::string* tuning = nullptr,
                 std::optional<TuningEntry>* entry = nullptr);

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
  // Why a program built now was not kept in the program cache (a full disk,
  // a folder that cannot be written); "" when kept, or not built now.
  std::string not_cached;
  // The tuning entry that ranked the chain (the store's or the family's
  // shipped one); none: the family's own ranking decided.
  std::optional<TuningEntry> tuning_entry;
  Explanation explanation;
};

// What load() throws when nothing in the chain loads: the message (the
// explanation in words), and the explanation itself, each step's outcome
// and reason, for a caller that acts on them.
class LoadFailure : public Error {
 public:
  LoadFailure(const std::string& message, Explanation explanation)
      : Error(message), explanation_(std::move(explanation)) {}
  const Explanation& explanation() const { return explanation_; }

 private:
  Explanation explanation_;
};

// Walks the plan's chain: SPIR-V -> PTX -> source -> next variant, in the order of
// a tuning entry for this device, driver and problem where the store has one
// (Store::find_tuning), else the family's ranking. Checks after each build
// CL_KERNEL_LOCAL_MEM_SIZE and CL_KERNEL_WORK_GROUP_SIZE. A shortfall in the
// latter is settled by the trial launch (options.trial, else the family's),
// without one by the known-quirk table. Trial verdicts and failed builds are
// remembered in the store per device, driver and build (module hash, or
// source hash and options) and not repeated. Throws LoadFailure (a fatcl::Error) carrying the
// whole explanation if nothing in the chain loads.
LoadedKernel load(const cl::Context& context, const cl::Device& device, const Family& family,
                  const LoadOptions& options = {});

// A tuning entry measured for other sizes than `problem`, re-ranked by the
// family's model (FamilyDescription::efficiency): each variant's measured
// time, less its launches' share (`launch_ms` each, launch_floor_ms;
// FamilyDescription::launches), scaled by the work over the efficiency here
// and there, plus its launches here; with `launch_ms` 0, its measured
// GFLOP/s times its efficiency on `problem` over its efficiency on the
// entry's sizes; the entry's rates become these predicted ones, in their
// order.
// Unchanged where the family has no model or the sizes are the entry's.
// `why` (may be null) gets the figures of the three leaders, or "" where the
// model left the order as measured. `leader_gflops` (may be null) gets the
// rate the model predicts for the first of the new order on `problem` (its
// measured rate where the family has no model): what one family's measured
// neighbour says it would reach, to weigh it against another family's.
TuningEntry carry_tuning(const TuningEntry& entry, const Family& family, const DeviceCaps& caps,
                         const std::vector<std::size_t>& problem, std::string* why,
                         double* leader_gflops = nullptr, double launch_ms = 0);

// The entries a family ships that a device of this platform can use (no
// other platform's device is ever similar): its shipped_tuning, and the
// lines of its shipped_tuning_lines that name this family and platform,
// parsed once per family and platform and kept for the process. Throws
// fatcl::Error naming the line at fault.
const std::vector<TuningEntry>& shipped_tuning_for(const Family& family, const DeviceCaps& caps);

// The device's time for one kernel launch as the family's entries show it:
// of the entries of this device (else of the most similar measured device,
// as Store::find_tuning takes it) whose problem is at most kLaunchFloorWork
// multiply-adds, so that launching is nearly all of their time, the
// fastest time over its launch_cost. 0 where there is no such entry: rates then
// carry as throughput alone.
constexpr double kLaunchFloorWork = 1 << 18;
double launch_floor_ms(const Store& store, const Family& family, const DeviceCaps& caps);

// What a product's launches cost, in launches of the floor: the first a
// whole one, each after it (enqueued back to back, such as a split K's sum)
// kLaterLaunchShare of one. Counting every launch whole made a product
// split in two look launch-bound where it was not: on the H200
// (2026-12-02) 6 x 4408 x 453, one launch of the 32 x 32 point, took 28.8
// us where the entry of 8 x 4096 x 512 (split, two launches) said 15.8;
// replayed offline against three benches of random shapes (128 in all), a quarter
// raised auto / fastest from 0.84 to 0.90 (40 shapes) and left the others
// (0.92, 0.93) and every CPU bench as they were.
constexpr double kLaterLaunchShare = 0.25;
double launch_cost(double launches);

// Whether an OpenCL status from a build or a trial launch says something
// about the code (the compiler refused it; the binary, the options or the
// kernel's arguments are not valid; the kernel cannot run in its
// work-group), which every later try with this device and driver would
// meet again: such verdicts are remembered in the store. Any other status
// (out of host or device memory or resources, a device gone, a call out
// of order) says something about the moment, and the next start tries
// again: an injected CL_OUT_OF_HOST_MEMORY in one clBuildProgram had kept
// a variant off its device until the store was cleared (2026-12-03).
bool status_says_code(int status);

// Forgets the remembered trial launches and failed builds of Store::user() (tests).
void forget_trials();

}  // namespace fatcl
