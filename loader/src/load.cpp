// Loading: walking the plan's chain until a variant builds and can launch.
#include <algorithm>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "environment.hpp"
#include "fatcl/cache.hpp"
#include "fatcl/detail/format.hpp"
#include "fatcl/loader.hpp"
#include "fatcl/store.hpp"
#include "tiers.hpp"

namespace fatcl {

const char* to_string(ProgramOrigin origin) {
  switch (origin) {
    case ProgramOrigin::Built:
      return "built";
    case ProgramOrigin::ProgramCache:
      return "program cache";
    case ProgramOrigin::Process:
      return "process";
  }
  return "?";
}

namespace {

// Speeds measured on another device (a neighbour by similarity) within
// this factor of each other are not told apart here: two points 3 % apart
// on a Zen 4 ran 20 % apart on a Xeon, the FMA = 0 twin ahead there and
// behind here (PoCL, row-major TN at 2048^3, 2026-12-04).
constexpr double kNeighbourResolution = 0.95;

// The order an entry's variants are tried in on `caps`, each variant once
// (its best speed over the tiers measured; one this build lacks left out).
// Measured on this device: the entry's. Measured on a neighbour: the first
// still unplaced, or the one the family's ranking for this device puts
// first among those within kNeighbourResolution of its speed.
std::vector<std::string> entry_order(const TuningEntry& entry, const Ranking& family,
                                     const Manifest& manifest, const DeviceCaps& caps,
                                     bool neighbour) {
  std::vector<std::pair<const Variant*, double>> left;
  for (const TunedVariant& t : entry.ranking) {
    auto it = std::find_if(left.begin(), left.end(),
                           [&](const auto& l) { return l.first->name == t.variant; });
    if (it != left.end()) {
      it->second = std::max(it->second, t.gflops);
      continue;
    }
    for (const Variant& v : manifest.variants) {
      if (v.name == t.variant) left.emplace_back(&v, t.gflops);
    }
  }
  std::vector<std::string> order;
  while (!left.empty()) {
    auto pick = left.begin();
    if (neighbour && family.score) {
      // Within the resolution of the first left, either way (a carried
      // entry's order is the model's, not the measured speeds').
      const double first = pick->second;
      double best = family.score(*pick->first, caps);
      for (auto it = std::next(left.begin()); it != left.end(); ++it) {
        if (it->second < first * kNeighbourResolution ||
            it->second * kNeighbourResolution > first) {
          continue;
        }
        const double s = family.score(*it->first, caps);
        if (s > best) pick = it, best = s;
      }
    }
    order.push_back(pick->first->name);
    left.erase(pick);
  }
  return order;
}

// A tuning entry's variants first (entry_order, worked out once for the
// device the plan is for); the rest after, in the family's own ranking.
Ranking tuned_ranking(const TuningEntry& entry, const Ranking& family, const Manifest& manifest,
                      const DeviceCaps& caps, bool neighbour) {
  Ranking r;
  r.score = [order = entry_order(entry, family, manifest, caps, neighbour), family](
                const Variant& v, const DeviceCaps& caps) {
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i] == v.name) return 1e12 - double(i);
    }
    return family.score ? std::min(family.score(v, caps), 1e9) : 0.0;
  };
  // Each measured variant in the tier it was measured in first: on NVIDIA
  // a variant's PTX and source builds differ in speed (the driver's own
  // compiler against LLVM's PTX), so the measurement names both.
  r.tier_first = [names = entry.ranking](const Variant& v) -> std::optional<Tier> {
    for (const TunedVariant& t : names) {
      if (t.variant == v.name) return t.tier;
    }
    return std::nullopt;
  };
  r.rule =
      std::string(
          "measured speed (the tuning entry below: this device's, else the most similar "
          "measured device's") +
      (neighbour ? "; measured there, speeds within 5 % of the first left are taken as equal "
                   "and ordered by the family's ranking for this device"
                 : "") +
      "), each variant first in the tier it was measured in, then " + family.rule;
  return r;
}

// The family's model for this problem first, its ranking for the ties.
Ranking shaped_ranking(const Ranking& family, const std::vector<std::size_t>& problem) {
  Ranking r = family;
  r.score = [family, problem](const Variant& v, const DeviceCaps& caps) {
    const double tie = family.score ? std::clamp(family.score(v, caps), -1e4, 1e4) : 0.0;
    return family.shape_score(v, caps, problem) * 1e5 + tie;
  };
  r.rule = family.shape_rule + " for " + problem_text(problem) + ", then " + family.rule;
  return r;
}

// Keeps what the store learned on disk; a store that cannot be written
// leaves a note and the process goes on with what it has in memory.
void keep(Store& store, std::vector<std::string>& notes) {
  try {
    store.save();
  } catch (const Error& e) {
    notes.push_back(std::string("not remembered on disk: ") + e.what());
  }
}

constexpr const char* kEmptyBuildLog = "(empty build log)";
std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size <= 1) {
    return kEmptyBuildLog;
  }
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (log.size() > 2000) log = log.substr(0, 2000) + " ...";
  return log;
}

// Outcome of one attempt: a kernel, or the reason there is none.
struct Attempt {
  LoadedKernel loaded;
  std::string failure;  // "" on success
  std::string success_note;
};

// The driver's binary of a built program (one device), or "" if it gives none.
std::string program_binary(cl_program program) {
  std::size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) !=
          CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string binary(size, '\0');
  unsigned char* data = reinterpret_cast<unsigned char*>(binary.data());
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr) != CL_SUCCESS) {
    return "";
  }
  return binary;
}

// One (variant, tier) attempt in steps: what the store remembers, a
// program from this process, the program cache or a fresh build, the
// kernel and its reported limits, the work-group shortfall settled, the
// opt-in self-check, the binary kept. Each step that fails leaves the
// reason in `failure`.
class CandidateLoad {
 public:
  CandidateLoad(const cl::Context& context, const cl::Device& device, const DeviceCaps& caps,
                const Family& family, const Variant& variant, Tier tier, const LoadOptions& options,
                Store& store, std::vector<std::string>& notes, ProgramCache& cache)
      : context_(context),
        device_(device),
        caps_(caps),
        family_(family),
        variant_(variant),
        tier_(tier),
        options_(options),
        store_(store),
        notes_(notes),
        cache_(cache),
        strategy_(detail::strategy(tier)),
        build_options_(strategy_.build_options(family, variant, caps)),
        // What is built: the module's or the PTX's hash, or the source's and
        // this variant's options.
        key_{caps.key(), strategy_.built(family, variant, build_options_), tier},
        // The program cache's key: also the bytes handed to the driver, not
        // only the manifest's word for them (a module that changed under the
        // same name is a new key), and the driver's code-generation settings.
        cache_key_(key_.to_string() + "|" + build_options_ + "|bytes " +
                   std::to_string(fnv1a64(strategy_.input(family, variant))) + "|fatcl " +
                   fatcl_version() + detail::codegen_environment()),
        trial_launch_(options.trial ? options.trial : family.description().trial) {}

  Attempt run() {
    Attempt a;
    if (remembered_build_failure(&a.failure) || !obtain_program(&a.failure) ||
        !make_kernel(&a.failure) || !settle_work_group(&a.failure) || !self_check(&a.failure)) {
      return a;
    }
    keep_program();
    a.loaded.program = program_;
    a.loaded.kernel = kernel_;
    a.loaded.variant = variant_;
    a.loaded.tier = tier_;
    a.loaded.origin = origin_;
    a.loaded.kernel_work_group_size = kwg_;
    a.loaded.kernel_local_mem_bytes = klm_;
    a.loaded.settled_by_trial = trial_;
    a.loaded.not_cached = not_cached_;
    a.success_note = lead() + note_;
    return a;
  }

 private:
  bool remembered_build_failure(std::string* failure) const {
    *failure = detail::remembered_build_failure(store_, key_);
    return !failure->empty();
  }

  // The program, from this process, the program cache (a binary the driver
  // built before for exactly this device, driver, build, options and fatcl,
  // checked before it is used) or the tier's input, built.
  bool obtain_program(std::string* failure) {
    cl_device_id dev = device_();
    if (std::optional<cl::Program> earlier = cache_.built(context_(), cache_key_)) {
      program_ = *earlier;
      origin_ = ProgramOrigin::Process;
      how_ = "program built earlier in this process";
      return true;
    }
    if (cl_program cached = from_program_cache()) {
      program_ = cl::Program(cached, false);
      origin_ = ProgramOrigin::ProgramCache;
      return true;
    }
    cl_program raw = strategy_.create(context_, device_, caps_, family_, variant_, build_options_,
                                      &how_, failure);
    if (!raw) return false;
    program_ = cl::Program(raw, false);  // takes ownership
    origin_ = ProgramOrigin::Built;
    const cl_int err = clBuildProgram(raw, 1, &dev, build_options_.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      const std::string log = build_log(raw, dev);
      *failure = "clBuildProgram failed: " + cl_status_name(err) + "; build log: " + log;
      // A compiler that refuses code says why; a failure without a log,
      // or for want of memory or a device, is the moment's.
      if (status_says_code(err) &&
          !(err == CL_BUILD_PROGRAM_FAILURE && log == kEmptyBuildLog)) {
        store_.remember(key_, {RememberedOutcome::Kind::Build, *failure, ""});
        keep(store_, notes_);
      } else {
        *failure += " (not remembered: the next start tries again)";
      }
      return false;
    }
    return true;
  }

  // A program built from the cache's binary, or null (a refused binary is
  // removed, and the notes say so).
  cl_program from_program_cache() {
    std::string why;
    if (!cache_.enabled()) return nullptr;
    cl_program program = nullptr;
    if (std::optional<std::string> binary = cache_.get(cache_key_, &why)) {
      cl_device_id dev = device_();
      const unsigned char* bytes = reinterpret_cast<const unsigned char*>(binary->data());
      const std::size_t size = binary->size();
      cl_int status = CL_SUCCESS, err = CL_SUCCESS;
      cl_program cached =
          clCreateProgramWithBinary(context_(), 1, &dev, &size, &bytes, &status, &err);
      if (err == CL_SUCCESS && status == CL_SUCCESS && cached &&
          clBuildProgram(cached, 1, &dev, build_options_.c_str(), nullptr, nullptr) == CL_SUCCESS) {
        program = cached;
        cache_file_ = cache_.path_of(cache_key_).string();
      } else {
        why = "cache entry " + cache_.path_of(cache_key_).string() +
              " discarded: the driver refused the binary (" +
              cl_status_name(err != CL_SUCCESS ? err : status) + ")";
        if (cached) clReleaseProgram(cached);
        cache_.remove(cache_key_);
      }
    }
    if (!why.empty()) notes_.push_back(why);
    return program;
  }

  // The kernel, and what the driver reports of it: CL_KERNEL_WORK_GROUP_SIZE
  // and CL_KERNEL_LOCAL_MEM_SIZE (plan() checked the module's own __local
  // bytes against the device).
  bool make_kernel(std::string* failure) {
    cl_int err = CL_SUCCESS;
    cl_kernel raw = clCreateKernel(program_(), family_.manifest().kernel.c_str(), &err);
    if (err != CL_SUCCESS || !raw) {
      *failure = "clCreateKernel(" + family_.manifest().kernel + ") failed: " + cl_status_name(err);
      return false;
    }
    kernel_ = cl::Kernel(raw, false);
    cl_device_id dev = device_();
    err =
        clGetKernelWorkGroupInfo(raw, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg_, &kwg_, nullptr);
    if (err == CL_SUCCESS) {
      err =
          clGetKernelWorkGroupInfo(raw, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof klm_, &klm_, nullptr);
    }
    if (err != CL_SUCCESS) {
      *failure = "clGetKernelWorkGroupInfo failed: " + cl_status_name(err);
      return false;
    }
    if (klm_ > caps_.local_mem_bytes &&
        !has_driver_quirk(caps_, "misreported-kernel-local-mem-size")) {
      *failure = "CL_KERNEL_LOCAL_MEM_SIZE is " + std::to_string(klm_) + " B, the device has " +
                 std::to_string(caps_.local_mem_bytes) + " B (CL_DEVICE_LOCAL_MEM_SIZE)";
      return false;
    }
    note_ = "; CL_KERNEL_WORK_GROUP_SIZE " + std::to_string(kwg_);
    return true;
  }

  // The trial problem's verdict for this build ("" = correct): remembered in
  // the store per device, driver and build, else run once and remembered.
  // `seen` says since when it is remembered.
  std::string trial_verdict(std::string* seen) {
    if (std::optional<RememberedOutcome> before = store_.outcome(key_);
        before && before->kind == RememberedOutcome::Kind::Trial) {
      *seen = " (remembered for this device and driver since " + before->date + ")";
      return before->verdict;
    }
    std::string verdict;
    try {
      verdict = trial_launch_(context_, device_, kernel_, variant_);
    } catch (const Error& e) {
      // A failure the trial throws is the moment's (status_says_code).
      return std::string(e.what()) + " (not remembered: the next start tries again)";
    }
    store_.remember(key_, {RememberedOutcome::Kind::Trial, verdict, ""});
    keep(store_, notes_);
    return verdict;
  }

  // Drivers misreport CL_KERNEL_WORK_GROUP_SIZE (rusticl 32, NVIDIA 256,
  // yet 32x32 groups run): neither trust nor reject the number; settle a
  // shortfall by a checked launch, or without one by the known-quirk table
  // (plan() checked the device limit).
  bool settle_work_group(std::string* failure) {
    const std::size_t needed = variant_.work_group_items();
    const std::string shortfall = "CL_KERNEL_WORK_GROUP_SIZE is " + std::to_string(kwg_) +
                                  ", below the " + std::to_string(needed);
    if (needed > kwg_ && !trial_launch_) {
      if (!has_driver_quirk(caps_, "misreported-kernel-work-group-size")) {
        *failure = shortfall + " work-items the variant requires, the family gives no trial " +
                   "launch and this driver is not known to misreport it";
        return false;
      }
      note_ += ", below the " + std::to_string(needed) +
               " work-items required; a known quirk of this driver, so the device limit is used";
    } else if (needed > kwg_) {
      std::string seen;
      const std::string verdict = trial_verdict(&seen);
      if (!verdict.empty()) {
        *failure = shortfall + " required, and the trial launch failed" + seen + ": " + verdict;
        return false;
      }
      note_ += ", below the " + std::to_string(needed) +
               " work-items required; a trial launch ran correctly, so the driver misreports it" +
               seen;
      trial_ = true;
    } else if (needed > 0) {
      note_ += " covers the " + std::to_string(needed) + " work-items required";
    }
    return true;
  }

  // Opt-in (LoadOptions::self_check, FATCL_SELF_CHECK=1): the trial problem
  // against the CPU reference; a build that computes wrong is marked bad.
  bool self_check(std::string* failure) {
    if (!options_.self_check && !detail::self_check_from_environment()) return true;
    if (trial_) {
      note_ += " (that trial launch is the self-check)";
    } else if (!trial_launch_) {
      note_ += "; no self-check: the family gives no trial problem";
    } else {
      std::string seen;
      const std::string verdict = trial_verdict(&seen);
      if (!verdict.empty()) {
        *failure = "self-check failed, so this build is marked bad for this device and driver" +
                   seen + ": " + verdict;
        return false;
      }
      note_ += "; self-check: the trial problem matched the CPU reference" + seen;
    }
    return true;
  }

  // Kernels were created from the program and it passed every check: now
  // it is shared in this process and its binary may be kept on disk.
  void keep_program() {
    if (origin_ != ProgramOrigin::Process) cache_.keep_built(context_(), cache_key_, program_);
    if (origin_ != ProgramOrigin::Built || !cache_.enabled()) return;
    if (std::string binary = program_binary(program_()); !binary.empty()) {
      if (std::string warning = cache_.put(cache_key_, binary); !warning.empty()) {
        notes_.push_back(warning);
        not_cached_ = std::move(warning);
      }
    }
  }

  // Where the program came from, for the explanation.
  std::string lead() const {
    switch (origin_) {
      case ProgramOrigin::Process:
        return "reused the " + how_;
      case ProgramOrigin::ProgramCache:
        return "loaded from the fatcl cache " + cache_file_;
      case ProgramOrigin::Built:
        break;
    }
    return "built from the " + how_;
  }

  const cl::Context& context_;
  const cl::Device& device_;
  const DeviceCaps& caps_;
  const Family& family_;
  const Variant& variant_;
  const Tier tier_;
  const LoadOptions& options_;
  Store& store_;
  std::vector<std::string>& notes_;
  ProgramCache& cache_;
  const detail::TierStrategy& strategy_;
  const std::string build_options_;
  const BuildKey key_;
  const std::string cache_key_;
  const TrialLaunch& trial_launch_;

  cl::Program program_;
  cl::Kernel kernel_;
  ProgramOrigin origin_ = ProgramOrigin::Built;
  std::string how_;         // what was handed to the driver and through what
  std::string cache_file_;  // the cache entry a binary came from
  std::string not_cached_;  // why the binary built now was not kept
  std::size_t kwg_ = 0;
  cl_ulong klm_ = 0;
  bool trial_ = false;  // the work-group shortfall was settled by a trial launch
  std::string note_;    // what was checked, after the lead
};

Attempt try_candidate(const cl::Context& context, const cl::Device& device, const DeviceCaps& caps,
                      const Family& family, const Variant& variant, Tier tier,
                      const LoadOptions& options, Store& store, std::vector<std::string>& notes,
                      ProgramCache& cache) {
  return CandidateLoad(context, device, caps, family, variant, tier, options, store, notes, cache)
      .run();
}

}  // namespace

TuningEntry carry_tuning(const TuningEntry& entry, const Family& family, const DeviceCaps& caps,
                         const std::vector<std::size_t>& problem, std::string* why,
                         double* leader_gflops, double launch_ms) {
  if (why) why->clear();
  if (leader_gflops) *leader_gflops = entry.ranking.empty() ? 0 : entry.ranking.front().gflops;
  const auto& efficiency = family.description().efficiency;
  if (!efficiency || problem.empty() || problem == entry.problem) return entry;
  const auto& launches = family.description().launches;
  auto flop = [](const std::vector<std::size_t>& p) {
    double f = 2;
    for (std::size_t s : p) f *= double(s);
    return f;
  };
  const double flop_here = flop(problem), flop_there = flop(entry.problem);
  struct Carried {
    const TunedVariant* measured;
    double here, there, launches_here, launches_there, predicted;
  };
  std::vector<Carried> carried;
  for (const TunedVariant& t : entry.ranking) {
    const Variant* v = nullptr;
    for (const Variant& candidate : family.manifest().variants) {
      if (candidate.name == t.variant) v = &candidate;
    }
    if (!v) return entry;  // a variant this build lacks: changed_code passes such entries over
    Carried c{&t, efficiency(*v, caps, problem), efficiency(*v, caps, entry.problem), 1, 1, 0};
    if (launches) {
      c.launches_here = launch_cost(launches(*v, caps, problem));
      c.launches_there = launch_cost(launches(*v, caps, entry.problem));
    }
    if (c.there > 0 && c.here > 0 && t.gflops > 0) {
      // Milliseconds: measured there, computing there (at least a tenth of
      // it: a measurement is never all launching), and predicted here.
      const double ms_there = flop_there / (t.gflops * 1e6);
      const double computing = std::max(ms_there - c.launches_there * launch_ms, 0.1 * ms_there);
      const double ms_here =
          c.launches_here * launch_ms + computing * (flop_here / c.here) / (flop_there / c.there);
      c.predicted = flop_here / (ms_here * 1e6);
    }
    carried.push_back(c);
  }
  std::stable_sort(carried.begin(), carried.end(),
                   [](const Carried& a, const Carried& b) { return a.predicted > b.predicted; });
  TuningEntry out = entry;
  out.ranking.clear();
  // The rates the model predicts here: a neighbour's entry_order weighs
  // them, and the measured ones would let it reorder what the model set
  // apart (the H200's 4096 x 4096 x 256 entry on an H100: points within 5 %
  // there, 1.8x apart carried to K = 4).
  for (const Carried& c : carried) {
    out.ranking.push_back(*c.measured);
    out.ranking.back().gflops = c.predicted;
  }
  if (leader_gflops && !carried.empty()) *leader_gflops = carried.front().predicted;
  if (why && !carried.empty() && out.ranking.front().variant != entry.ranking.front().variant) {
    *why = "the family's model carries the entry to " + problem_text(problem) +
           (launch_ms > 0
                ? detail::format(" (the time measured there less its launches, %.4f ms the "
                                 "first, %.2f of that each after it, x work / efficiency here "
                                 "over there, plus the launches here; GFLOP/s there, efficiency "
                                 "here / there, launch cost here / there = GFLOP/s here):",
                                 launch_ms, kLaterLaunchShare)
                : std::string(" (measured GFLOP/s x efficiency here / efficiency there):"));
    for (std::size_t i = 0; i < carried.size() && i < 3; ++i) {
      const Carried& c = carried[i];
      *why += launch_ms > 0
                  ? detail::format("\n  %s [%s] %.0f, %.2f / %.2f, %.3g / %.3g = %.0f",
                                   c.measured->variant.c_str(), to_string(c.measured->tier),
                                   c.measured->gflops, c.here, c.there, c.launches_here,
                                   c.launches_there, c.predicted)
                  : detail::format("\n  %s [%s] %.0f x %.2f / %.2f = %.0f",
                                   c.measured->variant.c_str(), to_string(c.measured->tier),
                                   c.measured->gflops, c.here, c.there, c.predicted);
    }
  }
  return out;
}

const std::vector<TuningEntry>& shipped_tuning_for(const Family& family, const DeviceCaps& caps) {
  const FamilyDescription& d = family.description();
  if (d.shipped_tuning_lines.empty()) return d.shipped_tuning;
  // Per family and platform, for the process; entries are never removed, so
  // the references handed out stay valid.
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<std::vector<TuningEntry>>>
      parsed;
  // The lines of a platform in one shipped text, by family: the text (3.8
  // MB) is scanned once per platform, not once per family.
  static std::map<std::pair<const char*, std::string>,
                  std::map<std::string, std::vector<std::string_view>>>
      lines_by_family;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = parsed[{family.manifest().family, caps.platform_name}];
  if (slot) return *slot;
  const auto key = std::make_pair(d.shipped_tuning_lines.data(), caps.platform_name);
  auto found = lines_by_family.find(key);
  if (found == lines_by_family.end()) {
    found = lines_by_family.emplace(key, std::map<std::string, std::vector<std::string_view>>())
                .first;
    // A line is one entry; its keys are sorted, and a string is written as
    // JSON writes it: the line names both as these fragments do, before
    // the ranking, most of the line (the text before it is all that is
    // searched).
    const std::string platform_key = "\"platform\":" + nlohmann::json(caps.platform_name).dump();
    const std::string_view family_key = "\"family\":\"";
    std::string_view rest = d.shipped_tuning_lines;
    while (!rest.empty()) {
      const std::size_t end = rest.find('\n');
      std::string_view line = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      const std::string_view head = line.substr(0, line.find("\"ranking\":"));
      const std::size_t at = head.find(family_key);
      if (at == std::string_view::npos || head.find(platform_key) == std::string_view::npos) {
        continue;
      }
      const std::size_t name = at + family_key.size(), name_end = head.find('"', name);
      if (name_end == std::string_view::npos) continue;
      while (!line.empty() && (line.back() == ',' || line.back() == ' ')) line.remove_suffix(1);
      found->second[std::string(head.substr(name, name_end - name))].push_back(line);
    }
  }
  std::string doc = "{\"format\":\"fatcl-store\",\"version\":1,\"tuning\":[";
  bool first = true;
  for (std::string_view line : found->second[family.manifest().family]) {
    doc += (first ? "" : ",");
    doc += line;
    first = false;
  }
  doc += "]}";
  slot = std::make_unique<std::vector<TuningEntry>>(d.shipped_tuning);
  for (TuningEntry& e : parse_tuning_entries(doc, "shipped with fatcl")) {
    // The keys were found as text; the parsed fields decide.
    if (e.family == family.manifest().family && e.platform == caps.platform_name) {
      slot->push_back(std::move(e));
    }
  }
  return *slot;
}

bool status_says_code(int status) {
  switch (status) {
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILER_NOT_AVAILABLE:
    case CL_LINKER_NOT_AVAILABLE:
    case CL_LINK_PROGRAM_FAILURE:
    case CL_INVALID_BINARY:
    case CL_INVALID_BUILD_OPTIONS:
    case CL_INVALID_LINKER_OPTIONS:
    case CL_INVALID_KERNEL_ARGS:
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE:
      return true;
    default:
      return false;
  }
}

double launch_cost(double launches) {
  return 1 + (std::max(launches, 1.0) - 1) * kLaterLaunchShare;
}

double launch_floor_ms(const Store& store, const Family& family, const DeviceCaps& caps) {
  const TuningMatch match =
      store.find_tuning(caps, family.manifest(), {1, 1, 1}, shipped_tuning_for(family, caps), true);
  const auto& launches = family.description().launches;
  double fastest = 0;
  for (const TuningEntry* e : match.device_entries) {
    double work = 1;
    for (std::size_t s : e->problem) work *= double(s);
    if (e->problem.empty() || work > kLaunchFloorWork) continue;
    for (const TunedVariant& t : e->ranking) {
      const Variant* v = nullptr;
      for (const Variant& candidate : family.manifest().variants) {
        if (candidate.name == t.variant) v = &candidate;
      }
      if (!v || t.gflops <= 0) continue;
      const double count = launches ? launch_cost(launches(*v, caps, e->problem)) : 1;
      const double ms = 2 * work / (t.gflops * 1e6) / count;
      if (fastest == 0 || ms < fastest) fastest = ms;
    }
  }
  return fastest;
}

Plan ranked_plan(const Family& family, const DeviceCaps& caps, const LoadOptions& options,
                 std::string* rule, std::string* tuning, std::optional<TuningEntry>* entry) {
  const std::shared_ptr<Store> store = options.store ? options.store : Store::user();
  Ranking ranking = family.description().ranking;
  std::optional<TuningEntry> found;
  std::string said;
  // A variant forced without a tier runs in the tier its entry measured it
  // fastest in, as the automatic choice would run it (on NVIDIA a thin point
  // can lead from source and trail as PTX).
  const bool forced = !options.variant.empty();
  if (options.use_tuning && (!forced || !options.tier)) {
    const TuningMatch match = store->find_tuning(
        caps, family.manifest(), options.problem, shipped_tuning_for(family, caps),
        family.description().efficiency != nullptr && !options.problem.empty(), options.form);
    said = match.to_string();
    if (match.entry) {
      std::string why;
      ranking = tuned_ranking(carry_tuning(*match.entry, family, caps, options.problem, &why,
                                           nullptr, launch_floor_ms(*store, family, caps)),
                              ranking, family.manifest(), caps, match.similarity < 1);
      if (!why.empty()) said += "\n" + why;
      found = *match.entry;
    }
  }
  if (!found && options.variant.empty() && !options.problem.empty() && ranking.shape_score) {
    ranking = shaped_ranking(ranking, options.problem);
  }
  if (rule) *rule = ranking.rule;
  if (tuning) *tuning = said;
  if (entry) *entry = std::move(found);
  Plan p = plan(family.manifest(), caps, options, ranking);
  // Damaged code is refused before any driver sees it (Family::damage).
  std::vector<Candidate> sound;
  for (const Candidate& c : p.chain) {
    if (const std::string& why = family.damage(*c.variant, c.tier); !why.empty()) {
      p.rejected.push_back({c.variant->name, c.tier, Step::Outcome::Rejected, why});
    } else {
      sound.push_back(c);
    }
  }
  p.chain = std::move(sound);
  return p;
}

namespace detail {

std::string damage_note(const Family& family) {
  const std::vector<std::string>& damaged = family.damaged();
  std::string note = "the bundle of " + family.manifest().family + " is damaged: " +
                     std::to_string(damaged.size()) +
                     " embedded module(s) do not match their manifest records";
  for (std::size_t i = 0; i < damaged.size() && i < 3; ++i) note += "; " + damaged[i];
  if (damaged.size() > 3) note += "; and " + std::to_string(damaged.size() - 3) + " more";
  return note;
}

std::string remembered_build_failure(const Store& store, const BuildKey& key) {
  const std::optional<RememberedOutcome> before = store.outcome(key);
  if (!before || before->kind != RememberedOutcome::Kind::Build || before->verdict.empty()) {
    return "";
  }
  return "failed to build on this device and driver before (remembered since " + before->date +
         "; not tried again): " + before->verdict;
}

std::vector<Step> steps_of_choice(const Plan& p, std::size_t i, const std::string& reason,
                                  const std::vector<Step>& failed) {
  const Candidate& c = p.chain[i];
  std::vector<Step> steps{{c.variant->name, c.tier, Step::Outcome::Chosen, reason}};
  steps.insert(steps.end(), failed.begin(), failed.end());
  for (std::size_t j = i + 1; j < p.chain.size(); ++j) {
    const Candidate& rest = p.chain[j];
    std::string why = rest.variant == c.variant
                          ? std::string("the ") + to_string(c.tier) + " tier of this variant loaded"
                          : "ranked below " + c.variant->name;
    steps.push_back({rest.variant->name, rest.tier, Step::Outcome::Unneeded, why});
  }
  steps.insert(steps.end(), p.rejected.begin(), p.rejected.end());
  return steps;
}

std::vector<std::string> quirk_lines(const DeviceCaps& caps) {
  std::vector<std::string> out;
  for (const DriverQuirk& q : driver_quirks(caps)) {
    out.push_back(q.id + " (" + q.versions + "): " + q.breaks + "; " + q.fatcl_does);
  }
  return out;
}

}  // namespace detail

LoadedKernel load(const cl::Context& context, const cl::Device& device, const Family& family,
                  const LoadOptions& options) {
  check_context_and_device(context, device, "load " + family.manifest().family);
  const DeviceCaps caps = DeviceCaps::query(device);
  const std::shared_ptr<Store> store = options.store ? options.store : Store::user();
  const std::shared_ptr<ProgramCache> cache = options.cache ? options.cache : ProgramCache::user();
  Explanation explanation;
  std::optional<TuningEntry> entry;
  Plan p = ranked_plan(family, caps, options, &explanation.ranking, &explanation.tuning, &entry);
  explanation.device = caps.summary();
  std::vector<std::string> notes = detail::environment_notes();
  if (!family.damaged().empty()) notes.push_back(detail::damage_note(family));
  explanation.quirks = detail::quirk_lines(caps);
  std::vector<Step> failed;
  for (std::size_t i = 0; i < p.chain.size(); ++i) {
    const Candidate& c = p.chain[i];
    Attempt a = try_candidate(context, device, caps, family, *c.variant, c.tier, options, *store,
                              notes, *cache);
    if (!a.failure.empty()) {
      failed.push_back({c.variant->name, c.tier, Step::Outcome::Failed, a.failure});
      continue;
    }
    explanation.steps = detail::steps_of_choice(p, i, a.success_note, failed);
    explanation.notes = notes;
    a.loaded.explanation = std::move(explanation);
    a.loaded.tuning_entry = std::move(entry);
    return std::move(a.loaded);
  }
  explanation.steps = failed;
  explanation.steps.insert(explanation.steps.end(), p.rejected.begin(), p.rejected.end());
  explanation.notes = notes;
  std::string why = "no variant of " + family.manifest().family + " loads on " + caps.device_name;
  if (!family.manifest().source_embedded) {
    // Say first what a user of a NO_SOURCE product must know.
    why +=
        ": the OpenCL C source was left out on purpose (NO_SOURCE), and no precompiled "
        "tier loads (";
    const Manifest& m = family.manifest();
    std::string reason;
    if (m.leaves_out("spirv")) {
      why += "SPIR-V: left out on purpose (TIERS)";
    } else if (!caps.accepts_spirv("1.0", &reason)) {
      why += "tried: SPIR-V, which this device does not take: " + reason;
    } else {
      why += "tried: SPIR-V";
    }
    if (m.leaves_out("ptx")) {
      why += "; PTX: left out on purpose (TIERS)";
    } else {
      why += caps.is_nvidia() ? "; PTX" : "; PTX, which only NVIDIA's OpenCL takes";
    }
    why += ")";
  }
  const std::string said = why + ":\n" + explanation.to_string(Explanation::Detail::EveryStep);
  throw LoadFailure(said, std::move(explanation));
}

void forget_trials() { Store::user()->forget_outcomes(); }

}  // namespace fatcl
