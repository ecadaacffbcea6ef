// fatcl cache: the persistent program-binary cache (fatcl::ProgramCache):
// stats, clear, verify (every entry and the store read and checked, e.g.
// after a crash or a full disk), and warm (build every fitting variant, in each tier, of the bundled
// families for every device, e.g. at install time, so that no product start
// compiles).
#include "fatcl/cache.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "fatcl/matmul.hpp"
#include "fatcl/store.hpp"
#include "verbs.hpp"

namespace fatcl::tool {

namespace {

std::string first_line(const std::string& text) {
  return text.substr(0, std::min<std::size_t>(text.find('\n'), 300));
}

// Every entry read and checked, and the store (FATCL_TUNING's, else the
// user's) parsed: exit status 1 if an entry is damaged or the store cannot
// be used. Temporary files a killed writer left are listed, not faults.
int verify(const ProgramCache& cache, bool json) {
  const ProgramCache::Check c = cache.verify();
  const std::filesystem::path store_path = Store::user_path();
  std::string store_problem;
  std::size_t tuning = 0, outcomes = 0;
  if (!store_path.empty()) {
    const Store store(store_path);
    store_problem = store.why_not_used();
    tuning = store.tuning().size();
    outcomes = store.outcome_count();
  }
  const bool ok = c.damaged.empty() && store_problem.empty();
  if (json) {
    std::puts(nlohmann::json({{"folder", cache.dir().string()},
                              {"whole", c.whole},
                              {"damaged", c.damaged},
                              {"temporary", c.temporary},
                              {"store", store_path.string()},
                              {"store_problem", store_problem},
                              {"tuning_entries", tuning},
                              {"outcomes", outcomes},
                              {"ok", ok}})
                  .dump(2)
                  .c_str());
    return ok ? 0 : 1;
  }
  std::printf("program cache %s: %zu entries whole, %zu damaged, %zu temporary files\n",
              cache.dir().c_str(), c.whole, c.damaged.size(), c.temporary.size());
  for (const std::string& d : c.damaged) std::printf("  damaged: %s\n", d.c_str());
  for (const std::string& t : c.temporary) std::printf("  temporary: %s\n", t.c_str());
  std::error_code ec;
  if (store_path.empty()) {
    std::puts("store: in memory (FATCL_TUNING=off)");
  } else if (!std::filesystem::exists(store_path, ec)) {
    std::printf("store %s: none yet\n", store_path.c_str());
  } else if (!store_problem.empty()) {
    std::printf("store %s: cannot be used: %s\n", store_path.c_str(), store_problem.c_str());
  } else {
    std::printf("store %s: readable, %zu tuning entries, %zu remembered outcomes\n",
                store_path.c_str(), tuning, outcomes);
  }
  return ok ? 0 : 1;
}

}  // namespace

// The options, then the run: stats, clear, or warm (warm_matmul_programs on
// each device), each reported as text or one JSON document.
VerbRun add_cache(CLI::App& app) {
  struct Options {
    std::string action;
    std::vector<std::string> families;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "cache",
      "the program-binary cache (FATCL_CACHE_DIR, else $XDG_CACHE_HOME/fatcl/programs; "
      "FATCL_CACHE=0 turns it off): stats, clear, or warm (build every fitting variant, in every "
      "tier the device takes, of the "
      "bundled families on every device)");
  cmd->add_option("action", o->action, "stats, clear, verify or warm")
      ->required()
      ->check(CLI::IsMember({"stats", "clear", "verify", "warm"}));
  cmd->add_option(
      "--family", o->families,
      "warm: only this family (" + matmul_kernel_names() + "); repeat for more (default: all)");
  cmd->add_flag("--json", o->json, "print one JSON document to stdout");
  return [o] {
    if (!o->families.empty() && o->action != "warm") {
      throw Error("--family chooses what `fatcl cache warm` builds; `cache " + o->action +
                  "` takes the whole cache");
    }
    const std::shared_ptr<ProgramCache> cache = ProgramCache::user();
    nlohmann::json report = {{"folder", cache->dir().string()}, {"enabled", cache->enabled()}};
    if (!cache->enabled()) {
      if (o->json) {
        std::puts(report.dump(2).c_str());
      } else {
        std::puts("the program cache is off (FATCL_CACHE=0, or no home folder)");
      }
      return o->action == "stats" ? 0 : 1;
    }
    std::string failure;  // why warm did not fill the cache
    if (o->action == "clear") {
      report["removed"] = cache->clear();
    } else if (o->action == "verify") {
      return verify(*cache, o->json);
    } else if (o->action == "warm") {
      report["devices"] = nlohmann::json::array();
      std::string not_kept;  // the first build the cache could not keep
      std::size_t failed = 0;
      for (const PlatformDevices& p : list_platforms()) {
        for (const cl::Device& device : p.devices) {
          const DeviceCaps caps = DeviceCaps::query(device);
          const cl::Context context = context_for(device);
          const MatmulWarmth w = warm_matmul_programs(context, device, cache, o->families);
          auto steps = [](const std::vector<Step>& list) {
            nlohmann::json out = nlohmann::json::array();
            for (const Step& f : list) {
              out.push_back({{"variant", f.variant},
                             {"tier", f.tier ? to_string(*f.tier) : ""},
                             {"reason", f.reason.substr(0, 300)}});
            }
            return out;
          };
          const std::size_t built = w.built, cached = w.already_cached;
          std::fprintf(stderr, "%s: %zu built, %zu already cached, %zu failed, %zu not kept\n",
                       caps.device_name.c_str(), built, cached, w.failed.size(),
                       w.not_kept.size());
          report["devices"].push_back({{"device", caps.summary()},
                                       {"built", built},
                                       {"already_cached", cached},
                                       {"failed", steps(w.failed)},
                                       {"not_kept", steps(w.not_kept)}});
          for (const Step& f : w.failed) {
            std::fprintf(stderr, "  %s [%s] failed: %s\n", f.variant.c_str(),
                         f.tier ? to_string(*f.tier) : "", first_line(f.reason).c_str());
          }
          failed += w.failed.size();
          if (not_kept.empty() && !w.not_kept.empty()) not_kept = w.not_kept.front().reason;
        }
      }
      // Warming is for the cache: a build that failed, or that it could not
      // keep, fails the verb (a start would build it again).
      if (!not_kept.empty()) {
        failure = "the program cache could not keep what was built (" + not_kept + ")";
      } else if (failed) {
        failure = std::to_string(failed) + " build" + (failed == 1 ? "" : "s") +
                  " failed (listed above); a start that needs one will build it again";
      }
    }
    const ProgramCache::Stats s = cache->stats();
    report["entries"] = s.entries;
    report["bytes"] = s.bytes;
    if (o->json) {
      std::puts(report.dump(2).c_str());
    } else {
      std::printf(
          "program cache %s: %zu entries, %.1f MiB%s\n", cache->dir().c_str(), s.entries,
          double(s.bytes) / (1 << 20),
          report.contains("removed")
              ? (", " + std::to_string(report["removed"].get<std::size_t>()) + " removed").c_str()
              : "");
    }
    if (!failure.empty()) {
      std::fprintf(stderr, "fatcl cache warm: %s\n", failure.c_str());
      return 1;
    }
    return 0;
  };
}

}  // namespace fatcl::tool
