// A kernel family as fatcl_add_kernel_variants() embeds it, and what the
// family says about itself to the loader: its ranking, its trial launch,
// its shipped tuning entries.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatcl/device.hpp"
#include "fatcl/embedded.hpp"
#include "fatcl/manifest.hpp"
#include "fatcl/opencl.hpp"
#include "fatcl/tier.hpp"
#include "fatcl/tuning.hpp"

namespace fatcl {

// A trial launch settles a variant whose driver reports a smaller
// CL_KERNEL_WORK_GROUP_SIZE than the variant requires (rusticl reads 32 and
// NVIDIA 256 for kernels that do run 32x32 groups). It runs the kernel once
// on a small problem and returns "" if the launch succeeded and the result
// was right, otherwise the reason; a failed OpenCL call whose status does
// not say something about the code (status_says_code) it throws instead,
// as a fatcl::Error with the status, and the verdict is not remembered.
using TrialLaunch = std::function<std::string(const cl::Context&, const cl::Device&,
                                              const cl::Kernel&, const Variant&)>;

// One problem set up for timing a family's variants: `run` enqueues one
// launch of a variant's kernel on it (arguments set, geometry from the
// variant's parameters) and returns "" or why it could not; `work` is the
// operations of one run (a tuning entry's rate is work / ms / 1e6, GFLOP/s
// for a flop count).
struct TimedProblem {
  double work = 0;
  std::function<std::string(const cl::CommandQueue&, const cl::Kernel&, const Variant&)> run;
};
// A family's timing launch: allocates the inputs of `problem` (the sizes a
// tuning entry keys on) in `context`. Throws fatcl::Error if it cannot.
using TimingLaunch = std::function<TimedProblem(const cl::Context&, const cl::Device&,
                                                const std::vector<std::size_t>& problem)>;

// How a family orders the variants that fit a device: a score (higher is
// tried first; ties keep the manifest's order) and the rule in words for the
// explanation. Without a score, the manifest's order.
struct Ranking {
  std::function<double(const Variant&, const DeviceCaps&)> score;
  std::string rule = "the order the family's manifest lists its variants";
  // The tier to try a variant in first, where one was measured fastest
  // (a tuning entry's); none: the loader's order, SPIR-V, PTX, source.
  std::function<std::optional<Tier>(const Variant&)> tier_first;
  // For one problem (LoadOptions::problem), where no tuning entry decides:
  // the family's model of how well a variant fits those sizes, ranked before
  // `score` (which orders the ties); none: one ranking for every problem.
  // `shape_rule` says it in words.
  std::function<double(const Variant&, const DeviceCaps&, const std::vector<std::size_t>&)>
      shape_score;
  std::string shape_rule;

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
  // Or, where there are many: a store document written one entry a line
  // (tools/ship-tuning.py), of which a device reads only the lines of its
  // platform and of this family, parsed at their first use and kept
  // (shipped_tuning_for): fatcl's 1689 shipped entries took 100 ms to parse
  // whole at a family's first use. The text is indexed by platform once
  // for every family that shares it, so it must live as long as the
  // process (an embedded array, as fatcl's are).
  std::string_view shipped_tuning_lines;
  // The family's model of a problem: the share of a variant's measured rate
  // that carries to these sizes (the work not spent on a tile's padding, how
  // well its work-groups fill the device), in (0, 1]. An entry measured for
  // other sizes is re-ranked by it (carry_tuning); none: its order stands.
  std::function<double(const Variant&, const DeviceCaps&, const std::vector<std::size_t>&)>
      efficiency;
  // How many kernel launches a variant makes for a problem (a product split
  // over K: the parts, then their sum); none: one each. With the device's
  // time per launch (launch_floor_ms), carry_tuning tells a measurement's
  // launching from its computing: on the H200 a launch costs about 9 us,
  // all of a 64^3 product's time.
  std::function<double(const Variant&, const DeviceCaps&, const std::vector<std::size_t>&)>
      launches;
  // How to time a variant on a problem: with it, tune_family() measures the
  // family and its entries choose as the SGEMM's do (fatcl/online.hpp).
  TimingLaunch timing;
};

// A kernel family as embedded by fatcl_add_kernel_variants().
class Family {
 public:
  // Parses the manifest and pairs each variant with its module. Throws
  // fatcl::Error if the manifest is malformed or a module is missing or has
  // another size than the manifest says.
  explicit Family(const EmbeddedFamily& embedded, FamilyDescription description = {});
  // The same from bytes read off disk (a bundle folder, a product binary),
  // which the family keeps alive.
  explicit Family(std::shared_ptr<const FamilyBytes> bytes, FamilyDescription description = {});

  const Manifest& manifest() const { return manifest_; }
  const FamilyDescription& description() const { return description_; }
  std::string_view source() const { return source_; }
  // The SPIR-V module of a variant (bytes).
  std::string_view spirv(const std::string& variant) const;
  // The PTX of a variant; empty when the bundle has none for it.
  std::string_view ptx(const std::string& variant) const;

  // What is wrong with the embedded code of `variant` in `tier` against its
  // manifest record, or "": the SPIR-V module's header and SHA-256, the
  // PTX's SHA-256, the source's against `source_sha256`. Every module of
  // every tier is checked once, at the family's first use, whatever tier a
  // device then takes (damaged() lists them all); damaged code never
  // reaches a driver.
  const std::string& damage(const Variant& variant, Tier tier) const;
  // Every damaged (variant, tier) of the bundle, "VARIANT [tier]: why"
  // (the source once, as "source"); empty if none.
  const std::vector<std::string>& damaged() const;
  // The SHA-256 of the embedded source's bytes (what a source build keys
  // its verdict on); "" when the bundle carries no source.
  const std::string& source_sha256() const;

 private:
  struct Integrity;
  std::size_t index_of(const std::string& variant) const;
  const Integrity& integrity() const;

  Manifest manifest_;
  FamilyDescription description_;
  std::string_view source_;
  std::vector<std::string_view> modules_;  // in manifest order
  std::vector<std::string_view> ptx_;      // in manifest order; empty: none
  std::shared_ptr<Integrity> integrity_;   // checked at first use, shared by copies
  std::shared_ptr<const FamilyBytes> owned_;  // the bytes read from disk, if any
};

}  // namespace fatcl
