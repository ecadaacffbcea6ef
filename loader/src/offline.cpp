// The loader's choice computed from a device's description: ranked_plan()
// as load() calls it, then the chain walked without a driver.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "fatcl/offline.hpp"
#include "fatcl/store.hpp"
#include "tiers.hpp"

namespace fatcl {

OfflineChoice predict_load(const Family& family, const DeviceCaps& caps,
                           const LoadOptions& options) {
  LoadOptions o = options;
  if (!o.store) o.store = Store::user();
  OfflineChoice out;
  out.family = family.manifest().family;
  Explanation& ex = out.explanation;
  const Plan p = ranked_plan(family, caps, o, &ex.ranking, &ex.tuning);
  ex.device = caps.summary();
  ex.notes.push_back(
      "predicted offline from the device's description: no OpenCL call was made; what only the "
      "driver can tell (that the build succeeds, the kernel's CL_KERNEL_WORK_GROUP_SIZE, a trial "
      "launch) is taken to go well");
  if (!family.damaged().empty()) ex.notes.push_back(detail::damage_note(family));
  ex.quirks = detail::quirk_lines(caps);

  for (const Candidate& c : p.chain) {
    auto at = std::find_if(out.fitting.begin(), out.fitting.end(),
                           [&](const auto& f) { return f.first == c.variant->name; });
    if (at == out.fitting.end()) {
      out.fitting.push_back({c.variant->name, {}});
      at = out.fitting.end() - 1;
    }
    at->second.push_back(c.tier);
  }
  for (Tier t : all_tiers()) {
    const bool offered = std::any_of(p.chain.begin(), p.chain.end(),
                                     [&](const Candidate& c) { return c.tier == t; });
    if (offered) continue;
    std::string why = "no variant fits the device";
    for (const Step& s : p.rejected) {
      if (s.tier == t) {
        why = s.reason;
        break;
      }
    }
    out.tier_refused[t] = why;
  }

  std::vector<Step> failed;
  for (std::size_t i = 0; i < p.chain.size(); ++i) {
    const Candidate& c = p.chain[i];
    const Variant& v = *c.variant;
    const detail::TierStrategy& strategy = detail::strategy(c.tier);
    const std::string build_options = strategy.build_options(family, v, caps);
    const BuildKey key{caps.key(), strategy.built(family, v, build_options), c.tier};
    if (std::string why = detail::remembered_build_failure(*o.store, key); !why.empty()) {
      failed.push_back({v.name, c.tier, Step::Outcome::Failed, why});
      continue;
    }
    out.variant = v.name;
    out.tier = c.tier;
    std::string reason =
        "predicted: would be built from the " + strategy.handed(family, v, caps, build_options);
    if (const std::size_t items = v.work_group_items(); items > 0) {
      reason += "; its CL_KERNEL_WORK_GROUP_SIZE must cover the " + std::to_string(items) +
                " work-items required";
      if (o.trial || family.description().trial) {
        reason += ", else a trial launch settles it";
      } else if (has_driver_quirk(caps, "misreported-kernel-work-group-size")) {
        reason += ", else the known quirk of this driver lets the device limit stand";
      }
    }
    ex.steps = detail::steps_of_choice(p, i, reason, failed);
    return out;
  }
  ex.steps = failed;
  ex.steps.insert(ex.steps.end(), p.rejected.begin(), p.rejected.end());
  return out;
}

namespace {

std::string device_name(const DeviceCaps& caps) {
  return caps.device_name + " [" + caps.platform_name + ", driver " + caps.driver_version + "]";
}

bool source_accepted(const DeviceCaps& caps, const std::vector<std::string>& patterns) {
  const std::string named = caps.platform_name + " / " + caps.device_name;
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return p == "*" || (!p.empty() && named.find(p) != std::string::npos);
  });
}

std::string refusals(const OfflineChoice& c) {
  std::string out;
  for (const auto& [tier, why] : c.tier_refused) {
    if (tier == Tier::Source) continue;
    out += std::string(out.empty() ? "" : "; ") + to_string(tier) + ": " + why;
  }
  return out;
}

std::string tiers_text(const std::vector<Tier>& tiers) {
  std::string out;
  for (Tier t : tiers) out += std::string(out.empty() ? "" : "+") + to_string(t);
  return out;
}

}  // namespace

DeviceCheckReport check_devices(const std::vector<const Family*>& families,
                                const std::vector<DeviceDescription>& devices,
                                const DeviceCheckOptions& options) {
  LoadOptions o = options.load;
  if (!o.store) o.store = std::make_shared<Store>();
  DeviceCheckReport report;
  for (const DeviceDescription& d : devices) {
    for (const Family* f : families) {
      DeviceCheck check;
      check.device = device_name(d.caps);
      check.origin = d.origin;
      check.choice = predict_load(*f, d.caps, o);
      const OfflineChoice& c = check.choice;
      const bool precompiled =
          std::any_of(c.fitting.begin(), c.fitting.end(), [](const auto& f) {
            return std::any_of(f.second.begin(), f.second.end(),
                               [](Tier t) { return t != Tier::Source; });
          });
      if (c.variant.empty()) {
        const auto source = c.tier_refused.find(Tier::Source);
        check.problem = "nothing would load (" + refusals(c) + "; source: " +
                        (source != c.tier_refused.end()
                             ? source->second
                             : std::string("every build is remembered as failed")) +
                        ")";
      } else if (!precompiled && !source_accepted(d.caps, options.source_ok)) {
        check.problem = "no precompiled tier would load, only the OpenCL C source (" +
                        refusals(c) +
                        "); if building the source is acceptable there, say so with "
                        "--source-ok \"" +
                        d.caps.device_name + "\"";
      }
      report.checks.push_back(std::move(check));
    }
  }
  return report;
}

bool DeviceCheckReport::ok() const {
  return std::all_of(checks.begin(), checks.end(),
                     [](const DeviceCheck& c) { return c.problem.empty(); });
}

std::string DeviceCheckReport::to_text(bool explain) const {
  std::string out, device;
  for (const DeviceCheck& check : checks) {
    if (check.device + check.origin != device) {
      device = check.device + check.origin;
      out += check.device + " (" + check.origin + ")\n";
    }
    const OfflineChoice& c = check.choice;
    out += "  " + c.family + ": ";
    if (c.variant.empty()) {
      out += "nothing would load";
    } else {
      out += "chooses " + c.variant + " [" + to_string(*c.tier) + "]";
    }
    const std::size_t variants = c.fitting.size();
    std::map<Tier, std::size_t> per_tier;
    for (const auto& [name, tiers] : c.fitting) {
      for (Tier t : tiers) ++per_tier[t];
    }
    out += "; " + std::to_string(variants) + " variant(s) fit";
    std::string in;
    for (const auto& [tier, count] : per_tier) {
      in += std::string(in.empty() ? "" : ", ") + to_string(tier) + " " + std::to_string(count);
    }
    if (!in.empty()) out += " (" + in + ")";
    for (const auto& [tier, why] : c.tier_refused) {
      out += std::string("; no ") + to_string(tier) + ": " + why;
    }
    out += check.problem.empty() ? "\n" : "; PROBLEM (below)\n";
    if (explain) {
      const std::string text = c.explanation.to_string();  // the lines view it
      for (std::string_view line : split_lines(text)) {
        out += "    " + std::string(line) + "\n";
      }
    }
  }
  std::size_t problems = 0;
  for (const DeviceCheck& check : checks) {
    if (check.problem.empty()) continue;
    out += "problem: " + check.device + " (" + check.origin + "): family " + check.choice.family +
           ": " + check.problem + "\n";
    ++problems;
  }
  out += std::to_string(checks.size()) + " choice(s) predicted, " + std::to_string(problems) +
         " problem(s)\n";
  return out;
}

std::string DeviceCheckReport::to_json() const {
  using json = nlohmann::json;
  json out = {{"ok", ok()}, {"checks", json::array()}};
  for (const DeviceCheck& check : checks) {
    const OfflineChoice& c = check.choice;
    json fitting = json::array();
    for (const auto& [name, tiers] : c.fitting) {
      json t = json::array();
      for (Tier tier : tiers) t.push_back(to_string(tier));
      fitting.push_back({{"variant", name}, {"tiers", t}});
    }
    json refused = json::object();
    for (const auto& [tier, why] : c.tier_refused) refused[to_string(tier)] = why;
    json steps = json::array();
    for (const Step& s : c.explanation.steps) {
      steps.push_back({{"variant", s.variant},
                       {"tier", s.tier ? json(to_string(*s.tier)) : json(nullptr)},
                       {"outcome", to_string(s.outcome)},
                       {"reason", s.reason}});
    }
    out["checks"].push_back(
        {{"device", check.device},
         {"origin", check.origin},
         {"family", c.family},
         {"chosen", c.variant.empty()
                        ? json(nullptr)
                        : json{{"variant", c.variant}, {"tier", to_string(*c.tier)}}},
         {"precompiled", c.precompiled()},
         {"fitting", fitting},
         {"tier_refused", refused},
         {"problem", check.problem},
         {"explanation",
          {{"ranking", c.explanation.ranking},
           {"tuning", c.explanation.tuning},
           {"quirks", c.explanation.quirks},
           {"notes", c.explanation.notes},
           {"steps", steps},
           {"text", c.explanation.to_string()}}}});
  }
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace fatcl
