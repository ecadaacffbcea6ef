p='loader/src/load.cpp'; s=open(p).read()
anchor='const std::vector<TuningEntry>& shipped_tuning_for(const Family& family, const DeviceCaps& caps) {'
add=r'''TuningEntry carry_neighbours(const TuningMatch& match, const Family& family,
                             const DeviceCaps& caps, const std::vector<std::size_t>& problem,
                             std::string* why, double* leader_gflops, double launch_ms) {
  const TuningEntry& nearest = *match.entry;
  const char* reach_env = std::getenv("FATCL_EXP_BLEND");
  const double reach = reach_env ? std::atof(reach_env) : 0;
  const char* most_env = std::getenv("FATCL_EXP_BLEND_K");
  const std::size_t most = most_env ? std::size_t(std::atoi(most_env)) : 4;
  const char* pw_env = std::getenv("FATCL_EXP_BLEND_P");
  const double power = pw_env ? std::atof(pw_env) : 2;
  const char* tie_env = std::getenv("FATCL_EXP_TIE");
  const double tie = tie_env ? std::atof(tie_env) : 0;
  const bool noaug = std::getenv("FATCL_EXP_BLEND_NOAUG") != nullptr;
  TuningEntry base = carry_tuning(nearest, family, caps, problem, why, leader_gflops, launch_ms);
  if (reach <= 0 || !family.description().efficiency || problem.empty() ||
      nearest.problem == problem) {
    return base;
  }
  auto distance = [&](const std::vector<std::size_t>& a) {
    double d = 0;
    for (std::size_t i = 0; i < std::max(a.size(), problem.size()); ++i) {
      const double x = double(i < a.size() ? std::max<std::size_t>(1, a[i]) : 1);
      const double y = double(i < problem.size() ? std::max<std::size_t>(1, problem[i]) : 1);
      d += std::fabs(std::log2(x) - std::log2(y));
    }
    return d;
  };
  struct Neighbour {
    const TuningEntry* entry;
    double distance;
  };
  std::vector<Neighbour> near{{&nearest, distance(nearest.problem)}};
  for (const TuningEntry* e : match.device_entries) {
    bool seen = false;
    for (const Neighbour& n : near) seen = seen || n.entry->problem == e->problem;
    if (!seen && !e->ranking.empty()) near.push_back({e, distance(e->problem)});
  }
  std::stable_sort(near.begin() + 1, near.end(),
                   [](const Neighbour& a, const Neighbour& b) { return a.distance < b.distance; });
  std::size_t used = 1;
  while (used < near.size() && used < most && near[used].distance <= near[0].distance + reach) ++used;
  near.resize(used);
  if (near.size() == 1) return base;
  std::vector<std::pair<std::string, Tier>> all;
  for (const Neighbour& n : near) {
    for (const TunedVariant& t : n.entry->ranking) {
      if (std::find(all.begin(), all.end(), std::make_pair(t.variant, t.tier)) == all.end()) {
        all.emplace_back(t.variant, t.tier);
      }
    }
  }
  std::map<std::pair<std::string, Tier>, std::pair<double, double>> votes;
  std::map<std::pair<std::string, Tier>, TunedVariant> measured;
  for (const Neighbour& n : near) {
    TuningEntry augmented = *n.entry;
    double slowest = 0;
    for (const TunedVariant& t : n.entry->ranking) {
      if (t.gflops > 0 && (slowest == 0 || t.gflops < slowest)) slowest = t.gflops;
      measured.emplace(std::make_pair(t.variant, t.tier), t);
    }
    for (const auto& key : all) {
      bool has = false;
      for (const TunedVariant& t : n.entry->ranking) has = has || (t.variant == key.first && t.tier == key.second);
      if (!has && slowest > 0 && !noaug) {
        TunedVariant bound = measured.count(key) ? measured.at(key) : n.entry->ranking.front();
        bound.variant = key.first;
        bound.tier = key.second;
        bound.gflops = slowest;
        augmented.ranking.push_back(bound);
      }
    }
    const TuningEntry carried = carry_tuning(augmented, family, caps, problem, nullptr, nullptr, launch_ms);
    const double w = 1 / std::pow(n.distance + 1, power);
    for (const TunedVariant& t : carried.ranking) {
      if (t.gflops <= 0) continue;
      auto& v = votes[{t.variant, t.tier}];
      v.first += w * std::log(t.gflops);
      v.second += w;
    }
  }
  auto blended = [&](const TunedVariant& t) {
    auto it = votes.find({t.variant, t.tier});
    return it == votes.end() ? 0.0 : std::exp(it->second.first / it->second.second);
  };
  if (tie > 0) {
    // Only the nearest's near-ties are re-ordered by the blend.
    TuningEntry out = base;
    const double top = base.ranking.empty() ? 0 : base.ranking.front().gflops;
    std::size_t best = 0;
    for (std::size_t i = 0; i < out.ranking.size(); ++i) {
      if (out.ranking[i].gflops < (1 - tie) * top) continue;
      if (blended(out.ranking[i]) > blended(out.ranking[best])) best = i;
    }
    if (best != 0) {
      TunedVariant b = out.ranking[best];
      out.ranking.erase(out.ranking.begin() + best);
      out.ranking.insert(out.ranking.begin(), b);
      if (why) *why += "\n  tie broken by neighbours: " + b.variant;
    }
    return out;
  }
  TuningEntry out = nearest;
  out.ranking.clear();
  for (const auto& [key, v] : votes) {
    if (noaug) {
      bool in_nearest = false;
      for (const TunedVariant& t : nearest.ranking) in_nearest = in_nearest || (t.variant == key.first && t.tier == key.second);
      if (!in_nearest) continue;
    }
    TunedVariant t = measured.at(key);
    t.gflops = std::exp(v.first / v.second);
    out.ranking.push_back(t);
  }
  std::stable_sort(out.ranking.begin(), out.ranking.end(),
                   [](const TunedVariant& a, const TunedVariant& b) { return a.gflops > b.gflops; });
  if (leader_gflops) *leader_gflops = out.ranking.empty() ? 0 : out.ranking.front().gflops;
  return out;
}

'''
s=s.replace(anchor, add+anchor,1)
s=s.replace('''      ranking = tuned_ranking(carry_tuning(*match.entry, family, caps, options.problem, &why,
                                           nullptr, launch_floor_ms(*store, family, caps)),''','''      ranking = tuned_ranking(carry_neighbours(match, family, caps, options.problem, &why,
                                               nullptr, launch_floor_ms(*store, family, caps)),''')
s=s.replace('#include <algorithm>','#include <algorithm>\n#include <cmath>\n#include <cstdlib>',1)
open(p,'w').write(s)
h='loader/include/fatcl/loader.hpp'; t=open(h).read()
a='''// The entries a family ships that a device of this platform can use'''
t=t.replace(a,'''TuningEntry carry_neighbours(const TuningMatch& match, const Family& family,
                             const DeviceCaps& caps, const std::vector<std::size_t>& problem,
                             std::string* why, double* leader_gflops = nullptr,
                             double launch_ms = 0);

'''+a,1)
open(h,'w').write(t)
p='matmul/src/families.cpp'; s=open(p).read()
s=s.replace('''    p.variant = carry_tuning(*match.entry, family, caps, problem, nullptr, &p.gflops,''','''    p.variant = carry_neighbours(match, family, caps, problem, nullptr, &p.gflops,''')
open(p,'w').write(s)
p='matmul/src/matmul.cpp'; s=open(p).read()
s=s.replace('''      carried = carry_tuning(*match.entry, family, caps, problem, nullptr, nullptr,''','''      carried = carry_neighbours(match, family, caps, problem, nullptr, nullptr,''')
open(p,'w').write(s)
