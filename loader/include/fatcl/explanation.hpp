// Why the loader chose what it chose: a step per (variant, tier), and the
// text a person reads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fatcl/tier.hpp"

namespace fatcl {

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
  std::string device;  // DeviceCaps::summary()
  // Why this family, where its user chose among several for the problem
  // ("" where none was chosen by shape).
  std::string family;
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

}  // namespace fatcl
