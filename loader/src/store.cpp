#include "fatcl/store.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fatcl/detail/atomic_file.hpp"
#include "fatcl/detail/format.hpp"
#include "fatcl/detail/json_fields.hpp"

namespace fatcl {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kFormat = "fatcl-store";
constexpr int kFormatVersion = 1;

bool device_matches(const std::string& pattern, const std::string& name) {
  if (pattern.find('*') == std::string::npos) return pattern == name;
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

// How specific a device pattern is: an exact name beats any pattern, a
// longer pattern a shorter one.
std::size_t specificity(const std::string& pattern) {
  return pattern.find('*') == std::string::npos ? std::string::npos : pattern.size();
}

// Log2 distance between two problems (the sum over sizes), and the
// largest of one size.
double distance(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b,
                double* largest) {
  double d = 0;
  *largest = 0;
  // A size one side leaves out counts as 1 (the GEMM families' entries
  // hold {M, N, K, batch}; a problem of three sizes is one product).
  auto at = [](const std::vector<std::size_t>& p, std::size_t i) {
    return i < p.size() ? std::max<std::size_t>(1, p[i]) : 1;
  };
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const double one = std::fabs(std::log2(double(at(a, i))) - std::log2(double(at(b, i))));
    d += one;
    *largest = std::max(*largest, one);
  }
  return d;
}

// A tier as JSON writes it; names the field's place if it is none.
Tier tier_field(const detail::JsonFields& f, const json& j, const std::string& where) {
  const std::string text = f.text(j, "tier", where, 64);
  for (Tier t : all_tiers()) {
    if (text == to_string(t)) return t;
  }
  f.fail(where, "tier " + detail::JsonFields::shown(text) + " is none of spirv, ptx, source");
}

json to_json(const TuningEntry& e) {
  json ranking = json::array();
  for (const TunedVariant& v : e.ranking) {
    ranking.push_back({{"variant", v.variant},
                       {"sha256", v.sha256},
                       {"tier", to_string(v.tier)},
                       {"gflops", v.gflops}});
  }
  json j = {{"family", e.family},         {"platform", e.platform},
            {"device", e.device},         {"driver", e.driver},
            {"problem", e.problem},       {"size_class", e.size_class()},
            {"measured", e.measured},     {"fatcl_version", e.fatcl_version},
            {"provenance", e.provenance}, {"ranking", ranking}};
  if (!e.form.empty()) j["form"] = e.form;
  if (e.measured_on) {
    const DeviceProfile& p = *e.measured_on;
    j["measured_on"] = {{"gpu", p.gpu},
                        {"vendor", p.vendor},
                        {"isa", p.isa},
                        {"compute_units", p.compute_units},
                        {"max_clock_mhz", p.max_clock_mhz},
                        {"local_mem_bytes", p.local_mem_bytes},
                        {"native_float_width", p.native_float_width}};
  }
  return j;
}

// An entry's "measured_on": what its device reported.
DeviceProfile profile_from_json(const detail::JsonFields& f, const json& j, const TuningEntry& e,
                                const std::string& where) {
  DeviceProfile p;
  p.platform = e.platform;
  p.device = e.device;
  p.driver = e.driver;
  const json& gpu = f.field(j, "gpu", where);
  if (!gpu.is_boolean()) f.fail(where, "field \"gpu\" is not true or false");
  p.gpu = gpu.get<bool>();
  p.vendor = f.text(j, "vendor", where, 256);
  p.isa = f.text(j, "isa", where, 64);
  p.compute_units = unsigned(f.whole_field(j, "compute_units", where, 1u << 20));
  p.max_clock_mhz = unsigned(f.whole_field(j, "max_clock_mhz", where, 1u << 20));
  p.local_mem_bytes = f.whole_field(j, "local_mem_bytes", where, std::uint64_t(1) << 40);
  p.native_float_width = unsigned(f.whole_field(j, "native_float_width", where, 64));
  return p;
}

TuningEntry entry_from_json(const detail::JsonFields& f, const json& j, const std::string& where) {
  TuningEntry e;
  e.family = f.text(j, "family", where);
  e.platform = f.text(j, "platform", where);
  e.device = f.text(j, "device", where);
  e.driver = f.text(j, "driver", where);
  e.measured = f.text(j, "measured", where);
  e.fatcl_version = f.text(j, "fatcl_version", where);
  if (j.contains("provenance")) e.provenance = f.text(j, "provenance", where, 400);
  if (j.contains("form")) e.form = f.text(j, "form", where, 200);
  const std::string at = where + " (" + e.family + " on " + e.device.substr(0, 80) + ")";
  if (j.contains("measured_on")) {
    if (e.device.find('*') != std::string::npos) {
      f.fail(at, "an entry with \"measured_on\" names its device, not a pattern");
    }
    e.measured_on = profile_from_json(f, j["measured_on"], e, at + " measured_on");
  }
  const json& problem = f.array(j, "problem", at);
  if (problem.empty() || problem.size() > 8)
    f.fail(at, "\"problem\" is not a list of 1 to 8 sizes");
  for (const json& size : problem) {
    const std::size_t n = f.whole(size, "a size in \"problem\"", at, std::size_t(1) << 40);
    if (n == 0) f.fail(at, "\"problem\" holds a size of 0");
    e.problem.push_back(n);
  }
  const json& ranking = f.array(j, "ranking", at);
  if (ranking.empty()) f.fail(at, "\"ranking\" is an empty list");
  for (std::size_t i = 0; i < ranking.size(); ++i) {
    const json& r = ranking[i];
    const std::string rw = at + " ranking[" + std::to_string(i) + "]";
    TunedVariant v;
    v.variant = f.text(r, "variant", rw);
    v.sha256 = f.text(r, "sha256", rw);
    v.tier = tier_field(f, r, rw);
    v.gflops = f.nonnegative(r, "gflops", rw);
    e.ranking.push_back(std::move(v));
  }
  return e;
}

std::string same_entry_key(const TuningEntry& e) {
  return e.family + "|" + e.form + "|" + e.platform + "|" + e.device + "|" + e.driver + "|" +
         e.size_class();
}

// An exclusive lock on `<path>.lock`, released on destruction.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    const std::string lock = path.string() + ".lock";
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error("cannot open the lock file " + lock + ": " + std::strerror(errno));
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int e = errno;
        ::close(fd_);
        throw Error("cannot lock " + lock + ": " + std::strerror(e));
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// Removes the temporary files of write_file_atomic for `path` that a writer
// killed before its rename left (detail::stale_temporary).
void remove_stale_temporaries(const fs::path& path) {
  std::error_code ec;
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (detail::atomic_target(e.path().filename().string()) == path.filename() &&
        detail::stale_temporary(e)) {
      fs::remove(e.path(), ec);
    }
  }
}

// Reads `path` into the two lists: "" if it does not exist or was read,
// else why it cannot be used.
std::string read_store(const fs::path& path, std::vector<TuningEntry>* tuning,
                       std::vector<std::pair<BuildKey, RememberedOutcome>>* outcomes) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  if (fs::is_directory(path, ec)) return "it is a folder, not a store file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot be read (" + std::string(std::strerror(errno)) + ")";
  std::ostringstream text;
  text << in.rdbuf();
  try {
    Store::parse(text.str(), path.string(), tuning, outcomes);
  } catch (const Error& e) {
    tuning->clear();
    outcomes->clear();
    return e.what();
  }
  return "";
}

}  // namespace

const char* fatcl_version() { return FATCL_VERSION; }

std::string tier_sha256(const Manifest& family, const Variant& variant, Tier tier) {
  switch (tier) {
    case Tier::SpirV:
      return variant.sha256;
    case Tier::Ptx:
      return variant.ptx ? variant.ptx->sha256 : std::string();
    case Tier::Source:
      return family.source_sha256;
  }
  return "";
}

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string size_class(const std::vector<std::size_t>& problem) {
  std::string out;
  for (std::size_t s : problem) {
    const int e = static_cast<int>(std::lround(std::log2(double(std::max<std::size_t>(1, s)))));
    out += (out.empty() ? "" : "x") + std::string("2^") + std::to_string(e);
  }
  return out;
}

std::size_t size_alignment(std::size_t size) {
  std::size_t p = 1;
  while (p < 16 && size % (2 * p) == 0) p *= 2;
  return p;
}

std::string problem_text(const std::vector<std::size_t>& problem) {
  std::string out;
  for (std::size_t s : problem) out += (out.empty() ? "" : "x") + std::to_string(s);
  return out.empty() ? "(no size)" : out;
}

std::string TuningEntry::size_class() const { return fatcl::size_class(problem); }

namespace {

// Whether two entries were measured on one device: its platform, name and
// driver, and its hardware where both say. One name may stand for two
// machines (a PoCL built for znver3 measured on a Zen 3 and on a Zen 4).
bool same_measured_device(const TuningEntry& a, const TuningEntry& b) {
  return a.platform == b.platform && a.device == b.device && a.driver == b.driver &&
         (!a.measured_on || !b.measured_on || same_hardware(*a.measured_on, *b.measured_on));
}

}  // namespace

bool measured_here(const TuningEntry& e, const DeviceCaps& caps) {
  if (e.platform != caps.platform_name || e.driver != caps.driver_version) return false;
  if (!e.measured_on) return device_matches(e.device, caps.device_name);
  return e.device == caps.device_name && same_hardware(*e.measured_on, caps.profile());
}

bool tuned_here(const std::optional<TuningEntry>& entry, const std::vector<std::size_t>& problem,
                const DeviceCaps& caps) {
  return entry && entry->size_class() == size_class(problem) && measured_here(*entry, caps);
}

TuningEntry measured_entry(const DeviceCaps& caps, const std::string& family,
                           const std::string& form, const std::vector<std::size_t>& problem,
                           const std::string& who) {
  TuningEntry e;
  e.family = family;
  e.form = form;
  e.platform = caps.platform_name;
  e.device = caps.device_name;
  e.driver = caps.driver_version;
  e.measured_on = caps.profile();
  e.problem = problem;
  e.measured = utc_timestamp();
  e.fatcl_version = fatcl_version();
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  e.provenance = who + " on " + (host[0] ? host : "an unnamed host");
  return e;
}

std::string TuningEntry::describe() const {
  // A shipped entry's device may be a pattern: say so rather than print "on *".
  const std::string on = device.find('*') == std::string::npos
                             ? device
                             : platform + " devices matching \"" + device + "\"";
  return family + (form.empty() ? "" : " (" + form + ")") + " on " + on + " (driver " + driver +
         ") for " + problem_text(problem) + ", measured " + measured + " by fatcl " +
         fatcl_version + " (" + origin + ")";
}

std::string TuningMatch::to_string() const {
  std::string out;
  if (!store_note.empty()) out += store_note + "\n";
  if (entry) {
    out += "tuning entry: " + entry->describe() + "; " + std::to_string(entry->ranking.size()) +
           " variants ranked by measured speed, fastest " + entry->ranking.front().variant + " (" +
           std::to_string(static_cast<long long>(entry->ranking.front().gflops)) + " GFLOP/s)";
    if (similarity < 1) {
      out +=
          "\nno entry was measured on this device and driver; the most similar measured "
          "device is " +
          entry->device + " [" + entry->driver + "], similarity " +
          detail::format("%.2f", similarity) + " (" + similar_because + ")";
    }
  } else {
    out += "no tuning entry for this device and driver: the family's own ranking";
    if (!nearest_unused.empty()) {
      out += "\nthe most similar measured device, " + nearest_unused + ", is below the " +
             detail::format("%.2f", kSimilarEnough) + " at which its entries carry";
    }
  }
  for (const std::string& p : passed_over) out += "\npassed over: " + p;
  return out;
}

std::string BuildKey::to_string() const {
  return device + "|" + built + "|" + fatcl::to_string(tier);
}

struct Store::Impl {
  fs::path path;
  std::string why_not_used;  // "" or why the file is not used
  mutable std::mutex mutex;
  std::vector<TuningEntry> tuning;
  std::vector<TuningEntry> layers;  // read-only system layers, in the order added
  std::vector<std::string> layer_notes;
  // By BuildKey::to_string().
  std::map<std::string, std::pair<BuildKey, RememberedOutcome>> outcomes;
};

Store::Store() : impl_(std::make_unique<Impl>()) {}

Store::Store(fs::path path) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  std::vector<std::pair<BuildKey, RememberedOutcome>> outcomes;
  impl_->why_not_used = read_store(impl_->path, &impl_->tuning, &outcomes);
  for (auto& [k, o] : outcomes) impl_->outcomes[k.to_string()] = {k, o};
}

Store::~Store() = default;

fs::path Store::user_path() {
  if (const char* t = std::getenv("FATCL_TUNING")) {
    const std::string v = t;
    if (v == "off" || v == "0" || v.empty()) return {};
    return v;
  }
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) {
    return fs::path(x) / "fatcl" / "tuning.json";
  }
  if (const char* h = std::getenv("HOME"); h && *h) {
    return fs::path(h) / ".config" / "fatcl" / "tuning.json";
  }
  return {};
}

std::shared_ptr<Store> Store::user() {
  static std::mutex mutex;
  static std::shared_ptr<Store> store;
  std::lock_guard<std::mutex> lock(mutex);
  if (!store) {
    const fs::path p = user_path();
    store = p.empty() ? std::make_shared<Store>() : std::make_shared<Store>(p);
    for (const fs::path& layer : system_paths()) store->add_layer(layer);
  }
  return store;
}

std::vector<fs::path> Store::system_paths() {
  std::vector<fs::path> out;
  auto split = [](const std::string& list) {
    std::vector<std::string> parts;
    std::size_t at = 0;
    while (at <= list.size()) {
      const std::size_t colon = std::min(list.find(':', at), list.size());
      if (colon > at) parts.push_back(list.substr(at, colon - at));
      at = colon + 1;
    }
    return parts;
  };
  if (const char* listed = std::getenv("FATCL_TUNING_SYSTEM")) {
    for (const std::string& p : split(listed)) out.emplace_back(p);
    return out;
  }
  const char* dirs = std::getenv("XDG_CONFIG_DIRS");
  for (const std::string& d : split(dirs && *dirs ? dirs : "/etc/xdg")) {
    const fs::path p = fs::path(d) / "fatcl" / "tuning.json";
    std::error_code ec;
    if (fs::exists(p, ec)) out.push_back(p);
  }
  return out;
}

void Store::add_layer(const fs::path& path) {
  std::vector<TuningEntry> entries;
  std::vector<std::pair<BuildKey, RememberedOutcome>> ignored;  // a layer's outcomes are its host's
  std::error_code ec;
  std::string why;
  if (!fs::exists(path, ec)) {
    why = "it does not exist";
  } else {
    why = read_store(path, &entries, &ignored);
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!why.empty()) {
    impl_->layer_notes.push_back("the system store " + path.string() + " is not used: " + why);
    return;
  }
  for (TuningEntry& e : entries) e.origin = "system layer " + path.string();
  impl_->layers.insert(impl_->layers.end(), entries.begin(), entries.end());
}

std::vector<std::string> Store::layer_notes() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->layer_notes;
}

const fs::path& Store::path() const { return impl_->path; }

std::string Store::why_not_used() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->why_not_used;
}

std::vector<TuningEntry> parse_tuning_entries(std::string_view text, const std::string& origin) {
  std::vector<TuningEntry> tuning;
  std::vector<std::pair<BuildKey, RememberedOutcome>> outcomes;
  Store::parse(std::string(text), origin, &tuning, &outcomes);
  return tuning;
}

void Store::parse(const std::string& text, const std::string& origin,
                  std::vector<TuningEntry>* tuning,
                  std::vector<std::pair<BuildKey, RememberedOutcome>>* outcomes) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error("store " + origin + " is not JSON (" + std::string(e.what()).substr(0, 200) + ")");
  }
  const detail::JsonFields f("store " + origin);
  if (!j.is_object() || !j.contains("format") || j.at("format") != kFormat) {
    throw Error("store " + origin + " is not a fatcl store (no \"format\": \"" + kFormat + "\")");
  }
  const std::size_t version = f.whole_field(j, "version", "", 1u << 20);
  if (version != kFormatVersion) {
    throw Error("store " + origin + " has format version " + std::to_string(version) +
                "; this fatcl reads " + std::to_string(kFormatVersion));
  }
  if (j.contains("tuning")) {
    const json& list = f.array(j, "tuning", "");
    for (std::size_t i = 0; i < list.size(); ++i) {
      TuningEntry e = entry_from_json(f, list[i], "tuning[" + std::to_string(i) + "]");
      e.origin = origin;
      tuning->push_back(std::move(e));
    }
  }
  if (j.contains("outcomes")) {
    const json& list = f.array(j, "outcomes", "");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& o = list[i];
      const std::string ow = "outcomes[" + std::to_string(i) + "]";
      BuildKey k;
      k.device = f.text(o, "device", ow);
      k.built = f.text(o, "built", ow);
      k.tier = tier_field(f, o, ow);
      RememberedOutcome out;
      const std::string kind = f.text(o, "kind", ow, 64);
      if (kind != "trial" && kind != "build") {
        f.fail(ow, "kind " + detail::JsonFields::shown(kind) + " is neither trial nor build");
      }
      out.kind = kind == "trial" ? RememberedOutcome::Kind::Trial : RememberedOutcome::Kind::Build;
      out.verdict = f.text(o, "verdict", ow);
      out.date = f.text(o, "date", ow);
      outcomes->emplace_back(std::move(k), std::move(out));
    }
  }
}

// Why an entry measured code the family no longer has ("" if it has it):
// a variant gone, or a tier's code with another SHA-256 (tier_sha256).
static std::string changed_code(const TuningEntry& e, const Manifest& family) {
  for (const TunedVariant& t : e.ranking) {
    const Variant* v = nullptr;
    for (const Variant& candidate : family.variants) {
      if (candidate.name == t.variant) v = &candidate;
    }
    if (!v) return "variant " + t.variant + " is no longer in the family";
    if (const std::string now = tier_sha256(family, *v, t.tier); now != t.sha256) {
      return std::string("the ") + to_string(t.tier) + " code of " + t.variant +
             " changed since (SHA-256 " + t.sha256.substr(0, 12) + "..., now " +
             (now.empty() ? "none" : now.substr(0, 12)) + "...)";
    }
  }
  return "";
}

TuningMatch Store::find_tuning(const DeviceCaps& caps, const Manifest& family,
                               const std::vector<std::size_t>& problem,
                               const std::vector<TuningEntry>& shipped, bool modelled,
                               const std::string& form, const TuningEntry* on_device_of) const {
  TuningMatch match;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->why_not_used.empty()) {
    match.store_note = "the store " + impl_->path.string() + " is not used: " + impl_->why_not_used;
  }
  for (const std::string& note : impl_->layer_notes) {
    match.store_note += (match.store_note.empty() ? "" : "\n") + note;
  }
  std::vector<const TuningEntry*> all;
  for (const TuningEntry& e : impl_->tuning) all.push_back(&e);
  for (const TuningEntry& e : impl_->layers) all.push_back(&e);
  for (const TuningEntry& e : shipped) all.push_back(&e);
  const DeviceProfile here = caps.profile();
  // Entries that may decide: this device's (by name or pattern, and driver),
  // else those of the most similar measured device.
  struct Viable {
    const TuningEntry* entry;
    double similarity;
    std::string because;
    double score;  // size distance, lower is better
  };
  std::vector<Viable> viable;
  double nearest_unused = 0;
  for (const TuningEntry* e : all) {
    if (e->family != family.family || e->form != form) continue;
    if (on_device_of && !same_measured_device(*e, *on_device_of)) continue;
    const bool named =
        e->platform == caps.platform_name && device_matches(e->device, caps.device_name);
    double similarity = 0;
    std::string because;
    if (measured_here(*e, caps)) {
      similarity = 1;
    } else if (e->measured_on) {
      similarity = device_similarity(*e->measured_on, here, &because);
      if (similarity < kSimilarEnough) {
        if (similarity > nearest_unused) {
          nearest_unused = similarity;
          match.nearest_unused = e->device + " [" + e->driver + "]" +
                                 detail::format(" (similarity %.2f: ", similarity) + because + ")";
        }
        continue;
      }
    } else if (named) {
      match.passed_over.push_back(e->describe() + ": measured with driver " + e->driver +
                                  ", the device has " + caps.driver_version);
      continue;
    } else {
      continue;  // another device, which said nothing of itself
    }
    const std::string who = e->describe();
    const std::string changed = changed_code(*e, family);
    if (!changed.empty()) {
      match.passed_over.push_back(who + ": " + changed);
      continue;
    }
    double score;  // lower is better
    if (problem.empty()) {
      double volume = 0;
      for (std::size_t s : e->problem) volume += std::log2(double(s));
      score = -volume;
    } else {
      double largest = 0;
      score = distance(e->problem, problem, &largest);
      if (largest > 3.0 && !modelled) {
        match.passed_over.push_back(who + ": a size more than a factor 8 from " +
                                    problem_text(problem));
        continue;
      }
    }
    viable.push_back({e, similarity, because, score});
  }
  // This device first; else one neighbour, the most similar (the upper
  // layer where two are as similar), and its entries only.
  const Viable* device = nullptr;
  for (const Viable& v : viable) {
    if (!device || v.similarity > device->similarity) device = &v;
  }
  if (!device) return match;
  auto same_device = [&](const Viable& v) {
    if (device->similarity == 1) return v.similarity == 1;
    return same_measured_device(*v.entry, *device->entry);
  };
  double best = 0;
  for (const Viable& v : viable) {
    if (!same_device(v)) continue;
    const TuningEntry* e = v.entry;
    match.device_entries.push_back(e);
    // Nearest first; at the same distance the more specific device pattern
    // (an exact name before any pattern), then the file before the shipped.
    if (!match.entry || v.score < best ||
        (v.score == best && specificity(e->device) > specificity(match.entry->device))) {
      match.entry = e;
      best = v.score;
      match.similarity = v.similarity;
      match.similar_because = v.because;
    }
  }
  return match;
}

std::vector<TuningEntry> Store::tuning() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->tuning;
}

void Store::put_tuning(TuningEntry entry) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  entry.origin = impl_->path.empty() ? "in memory" : impl_->path.string();
  const std::string key = same_entry_key(entry);
  for (TuningEntry& e : impl_->tuning) {
    if (same_entry_key(e) == key) {
      e = std::move(entry);
      return;
    }
  }
  impl_->tuning.push_back(std::move(entry));
}

Store::MergeCount Store::merge(const std::vector<TuningEntry>& entries) {
  MergeCount count;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const std::string here = impl_->path.empty() ? "in memory" : impl_->path.string();
  for (TuningEntry e : entries) {
    e.origin = here;
    const std::string key = same_entry_key(e);
    auto it = std::find_if(impl_->tuning.begin(), impl_->tuning.end(),
                           [&](const TuningEntry& mine) { return same_entry_key(mine) == key; });
    if (it == impl_->tuning.end()) {
      impl_->tuning.push_back(std::move(e));
      ++count.added;
      continue;
    }
    // This fatcl's measurement over another version's; else the newer
    // (ISO 8601 dates compare as text).
    const bool theirs_current = e.fatcl_version == fatcl_version();
    const bool mine_current = it->fatcl_version == fatcl_version();
    const bool wins = theirs_current != mine_current ? theirs_current : e.measured > it->measured;
    if (wins) {
      *it = std::move(e);
      ++count.replaced;
    } else {
      ++count.kept;
    }
  }
  return count;
}

std::optional<RememberedOutcome> Store::outcome(const BuildKey& key) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->outcomes.find(key.to_string());
  if (it == impl_->outcomes.end()) return std::nullopt;
  return it->second.second;
}

void Store::remember(const BuildKey& key, RememberedOutcome outcome) {
  if (outcome.date.empty()) outcome.date = utc_timestamp();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->outcomes[key.to_string()] = {key, std::move(outcome)};
}

void Store::forget_outcomes() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->outcomes.clear();
}

std::size_t Store::outcome_count() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->outcomes.size();
}

void Store::save() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->path.empty()) return;
  if (!impl_->why_not_used.empty()) {
    throw Error("not writing " + impl_->path.string() +
                ", which is left as found: " + impl_->why_not_used);
  }
  std::error_code ec;
  if (!impl_->path.parent_path().empty()) fs::create_directories(impl_->path.parent_path(), ec);
  if (ec) throw Error("cannot create " + impl_->path.parent_path().string() + ": " + ec.message());
  FileLock file_lock(impl_->path);
  remove_stale_temporaries(impl_->path);
  // What other processes wrote since we read, under ours.
  std::vector<TuningEntry> theirs;
  std::vector<std::pair<BuildKey, RememberedOutcome>> their_outcomes;
  const std::string why = read_store(impl_->path, &theirs, &their_outcomes);
  if (!why.empty()) {
    throw Error("not writing " + impl_->path.string() +
                ", which changed into something else: " + why);
  }
  for (const TuningEntry& e : theirs) {
    bool ours = false;
    for (const TuningEntry& mine : impl_->tuning)
      ours = ours || same_entry_key(mine) == same_entry_key(e);
    if (!ours) impl_->tuning.push_back(e);
  }
  for (auto& [k, o] : their_outcomes) impl_->outcomes.emplace(k.to_string(), std::pair{k, o});

  json doc = {{"format", kFormat},
              {"version", kFormatVersion},
              {"tuning", json::array()},
              {"outcomes", json::array()}};
  for (const TuningEntry& e : impl_->tuning) doc["tuning"].push_back(to_json(e));
  for (const auto& [key, value] : impl_->outcomes) {
    const auto& [k, o] = value;
    doc["outcomes"].push_back(
        {{"device", k.device},
         {"built", k.built},
         {"tier", fatcl::to_string(k.tier)},
         {"kind", o.kind == RememberedOutcome::Kind::Trial ? "trial" : "build"},
         {"verdict", o.verdict},
         {"date", o.date}});
  }
  detail::write_file_atomic(impl_->path,
                            doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace fatcl
