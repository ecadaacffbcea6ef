// Running a family's own variants as its launch description says
// (fatcl/launch_description.hpp): every variant at the tile edges of every
// variant, on fresh random inputs the same for all variants of a problem,
// outputs poisoned before each launch and compared between variants. What
// `fatcl launch` prints, and what `fatcl validate --oclgrind` runs under
// Oclgrind, whose reports of data races, divergent barriers, uninitialised
// values and accesses out of bounds it reads back per launch.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatcl/family.hpp"
#include "fatcl/opencl.hpp"
#include "fatcl/tier.hpp"

namespace fatcl {

struct LaunchCheckOptions {
  // The problems to run; empty: the description's edge problems.
  std::vector<std::vector<long long>> problems;
  std::string variant;       // only this variant; "" for all
  std::optional<Tier> tier;  // only this tier; none: the loader's first that loads
  unsigned seed = 0;         // of the inputs; 0: drawn at random (the report names it)
  // Called with a line naming the launch just before it is enqueued and
  // once it finished (kLaunchBegin / kLaunchEnd, then "VARIANT [tier] at
  // PROBLEM"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct LaunchOutcome {
  enum class Result {
    Ok,       // ran, and agreed with the variants before it
    Refused,  // the loader left the variant out here (it does not fit the device)
    Failed,   // did not build or launch; the reason says which call and status
    Differs,  // ran, and its outputs differ from an earlier variant's
  };
  std::string variant;
  std::string tier;     // "" where it did not load
  std::string problem;  // "n=129"; "" for a variant that did not load
  Result result = Result::Ok;
  std::string reason;
  double ms = 0;  // the launch, host clock
};
const char* to_string(LaunchOutcome::Result result);

struct LaunchCheckReport {
  std::string family;
  std::string device;
  unsigned seed = 0;
  std::size_t problems = 0;
  std::vector<LaunchOutcome> outcomes;
  bool ok() const;  // nothing failed or differs
  std::string to_text() const;
  std::string to_json() const;
};

// Runs the family's variants (options.variant, else each in manifest
// order) at each problem. Throws fatcl::Error if the family has no launch
// description or a problem does not fit it; a variant that does not load,
// launch or agree is an outcome, not an exception.
LaunchCheckReport check_launches(const cl::Context& context, const cl::Device& device,
                                 const Family& family, const LaunchCheckOptions& options = {});

// The progress lines' first words.
constexpr const char* kLaunchBegin = "fatcl-launch begin:";
constexpr const char* kLaunchEnd = "fatcl-launch end:";

// What Oclgrind reported in the output of a run of check_launches under it
// (its reports and the progress lines in one stream), one finding per
// launched variant, kind of report and place in the source: the variant
// ("VARIANT [tier]"; "" outside any launch), the problems it came up at,
// the first report's first line, where in the source ("At line 8 (column
// 22) of input.cl: z[j] = ...") and how many reports of the kind (alike
// but for their addresses) it made there.
struct SimulatorFinding {
  std::string launch;
  std::vector<std::string> problems;
  std::string report;
  std::string where;
  std::size_t count = 0;
};
std::vector<SimulatorFinding> simulator_findings(std::string_view output);

}  // namespace fatcl
