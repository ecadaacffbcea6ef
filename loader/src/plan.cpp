// Choosing: which variants fit a device, in what order they are tried, and
// the explanation that records it.
#include <algorithm>

#include "fatcl/loader.hpp"
#include "tiers.hpp"

namespace fatcl {

Ranking Ranking::by_work_group_items() {
  Ranking r;
  r.score = [](const Variant& v, const DeviceCaps&) {
    // Work-items dominate; less local memory breaks ties.
    return double(v.work_group_items()) - double(v.local_mem_bytes) * 1e-9;
  };
  r.rule =
      "work-items per work-group, most first (a larger group that shares its loads through "
      "local memory reads each input fewer times), then less local memory";
  return r;
}

const char* to_string(Step::Outcome outcome) {
  switch (outcome) {
    case Step::Outcome::Chosen:
      return "chosen";
    case Step::Outcome::Failed:
      return "failed";
    case Step::Outcome::Rejected:
      return "rejected";
    case Step::Outcome::Unneeded:
      return "not needed";
  }
  return "?";
}

namespace {

// Why a variant cannot run on the device at all, or "".
std::string misfit(const Variant& v, const DeviceCaps& caps) {
  const auto& wg = v.reqd_work_group_size;
  if (v.work_group_items() > caps.max_work_group_size) {
    return "needs " + std::to_string(v.work_group_items()) + " work-items per group (" +
           std::to_string(wg[0]) + "x" + std::to_string(wg[1]) + "x" + std::to_string(wg[2]) +
           "), CL_DEVICE_MAX_WORK_GROUP_SIZE is " + std::to_string(caps.max_work_group_size);
  }
  for (int d = 0; d < 3; ++d) {
    if (wg[d] > caps.max_work_item_sizes[d]) {
      return "needs " + std::to_string(wg[d]) + " work-items in dimension " + std::to_string(d) +
             ", CL_DEVICE_MAX_WORK_ITEM_SIZES allows " +
             std::to_string(caps.max_work_item_sizes[d]);
    }
  }
  if (v.local_mem_bytes > caps.local_mem_bytes) {
    return "needs " + std::to_string(v.local_mem_bytes) + " B of local memory, the device has " +
           std::to_string(caps.local_mem_bytes) + " B (CL_DEVICE_LOCAL_MEM_SIZE)";
  }
  if (v.program_local_mem_bytes > caps.local_mem_bytes &&
      has_driver_quirk(caps, "kernel-local-mem-counts-the-program")) {
    return "its program declares " + std::to_string(v.program_local_mem_bytes) +
           " B of local memory in all, which this driver gives each of its kernels "
           "(kernel-local-mem-counts-the-program); the device has " +
           std::to_string(caps.local_mem_bytes) + " B";
  }
  return "";
}

}  // namespace

Plan plan(const Manifest& manifest, const DeviceCaps& caps, const LoadOptions& options,
          const Ranking& ranking) {
  Plan out;
  if (!options.variant.empty()) manifest.variant(options.variant);  // throws if unknown
  std::vector<const Variant*> fitting;
  for (const Variant& v : manifest.variants) {
    if (!options.variant.empty() && v.name != options.variant) {
      out.rejected.push_back({v.name, std::nullopt, Step::Outcome::Rejected,
                              "excluded: the caller asked for " + options.variant});
      continue;
    }
    std::string why = misfit(v, caps);
    if (!why.empty()) {
      out.rejected.push_back({v.name, std::nullopt, Step::Outcome::Rejected, why});
    } else {
      fitting.push_back(&v);
    }
  }
  if (ranking.score) {
    std::vector<std::pair<double, const Variant*>> scored;
    for (const Variant* v : fitting) scored.emplace_back(ranking.score(*v, caps), v);
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < scored.size(); ++i) fitting[i] = scored[i].second;
  }
  for (const Variant* v : fitting) {
    std::vector<Tier> tiers = all_tiers();
    if (const std::optional<Tier> first =
            ranking.tier_first ? ranking.tier_first(*v) : std::nullopt) {
      tiers.erase(std::find(tiers.begin(), tiers.end(), *first));
      tiers.insert(tiers.begin(), *first);
    }
    for (Tier tier : tiers) {
      if (options.tier && *options.tier != tier) {
        out.rejected.push_back({v->name, tier, Step::Outcome::Rejected,
                                std::string("excluded: the caller asked for the ") +
                                    to_string(*options.tier) + " tier"});
        continue;
      }
      if (std::string why = detail::strategy(tier).refusal(manifest, *v, caps); !why.empty()) {
        out.rejected.push_back({v->name, tier, Step::Outcome::Rejected, why});
        continue;
      }
      out.chain.push_back({v, tier});
    }
  }
  return out;
}

std::vector<const Variant*> Plan::variants() const {
  std::vector<const Variant*> out;
  for (const Candidate& c : chain) {
    if (std::find(out.begin(), out.end(), c.variant) == out.end()) out.push_back(c.variant);
  }
  return out;
}

std::string Explanation::to_string(Detail detail) const {
  std::string out = "device: " + device + "\n";
  const Step* chosen = nullptr;
  for (const Step& s : steps) {
    if (s.outcome == Step::Outcome::Chosen) chosen = &s;
  }
  if (chosen) {
    out += "chosen: " + chosen->variant + " (" + fatcl::to_string(*chosen->tier) + " tier)\n";
  } else {
    out += "chosen: nothing\n";
  }
  if (!family.empty()) out += "family: " + family + "\n";
  out += "ranking: " + ranking + "\n";
  if (!tuning.empty()) {
    std::string t = tuning;
    for (std::size_t at = t.find('\n'); at != std::string::npos; at = t.find('\n', at + 3)) {
      t.replace(at, 1, "\n  ");
    }
    out += "tuning: " + t + "\n";
  }
  for (const std::string& n : notes) out += "note: " + n + "\n";
  for (const std::string& q : quirks) out += "driver quirk: " + q + "\n";
  auto line = [&](const std::string& who, const Step& s) {
    const std::string name =
        who + (s.tier ? std::string(" [") + fatcl::to_string(*s.tier) + "]" : std::string(""));
    out += "  " + name + std::string(name.size() < 30 ? 30 - name.size() : 1, ' ') +
           fatcl::to_string(s.outcome) + ": " + s.reason + "\n";
  };
  // Steps not needed or rejected that share a tier, an outcome and a reason
  // make one group, placed where its first step was.
  auto groupable = [&](const Step& s) {
    return detail == Detail::Grouped &&
           (s.outcome == Step::Outcome::Rejected || s.outcome == Step::Outcome::Unneeded);
  };
  std::vector<std::vector<const Step*>> groups;
  for (const Step& s : steps) {
    auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      const Step& first = *g.front();
      return groupable(s) && groupable(first) && first.outcome == s.outcome &&
             first.tier == s.tier && first.reason == s.reason;
    });
    if (same != groups.end()) {
      same->push_back(&s);
    } else {
      groups.push_back({&s});
    }
  }
  for (const auto& g : groups) {
    line(g.size() == 1 ? g.front()->variant : std::to_string(g.size()) + " variants", *g.front());
  }
  return out;
}

}  // namespace fatcl
