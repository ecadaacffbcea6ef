// What fatcl learns about devices and keeps between runs, in one store:
// - tuning entries: a family's variants ranked by measured speed on one
//   device and driver for one problem size (fatcl tune writes them), and
// - remembered outcomes: trial launches and failed builds, per device,
//   driver and build, so that a product does not repeat a failing path at
//   every start.
// A Store lives in memory, or is backed by a JSON file that is rewritten
// atomically (a temporary file renamed into place, under a lock, merged with
// what other processes wrote meanwhile). Entries shipped with fatcl, measured
// on the devices of this project, come after the file's own.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fatcl/loader.hpp"

namespace fatcl {

// The fatcl version written into tuning entries.
const char* fatcl_version();
// Now, UTC, ISO 8601 ("2026-11-30T16:39:19Z"): how entries, outcomes and
// reports are dated.
std::string utc_timestamp();

struct TunedVariant {
  std::string variant;
  std::string sha256;  // of the code measured in `tier` (tier_sha256)
  std::string tier;    // "spirv", "ptx" or "source": the tier it was measured in
  double gflops = 0;
};

// The SHA-256 of the code a tier builds for a variant, as the manifest
// records it: the SPIR-V module, the PTX, or the family's OpenCL C source
// (the variant's parameters are in its name). A tuning entry holds while the
// code it measured is the same, whatever happens to the other tiers' code.
// "" for PTX a variant does not carry.
std::string tier_sha256(const Manifest& family, const Variant& variant, Tier tier);

struct TuningEntry {
  std::string family;                 // e.g. "matmul_blocked"
  std::string platform;               // CL_PLATFORM_NAME
  std::string device;                 // CL_DEVICE_NAME; shipped entries may use * as a wildcard
  std::string driver;                 // CL_DRIVER_VERSION
  std::vector<std::size_t> problem;   // the sizes measured, e.g. M, N, K
  std::string measured;               // UTC date and time, ISO 8601
  std::string fatcl_version;          // of the fatcl that measured
  std::vector<TunedVariant> ranking;  // fastest first
  std::string origin;                 // where it was read: the file, or "shipped with fatcl"

  // The problem-size class: each size to the nearest power of two
  // ("2^10x2^10x2^10"). One entry per family, device, driver and class.
  std::string size_class() const;
  // "matmul_blocked on NVIDIA H200 (driver 580.159.04) for 4096x4096x4096,
  // measured 2026-11-30T17:02:11Z by fatcl 0.1.0 (shipped with fatcl)"; a
  // device pattern reads "on Intel(R) OpenCL devices matching "*"".
  std::string describe() const;
};
std::string size_class(const std::vector<std::size_t>& problem);

// The outcome of a tuning lookup: the entry that decides (or none), and
// every entry for this device that was passed over, with the reason.
struct TuningMatch {
  const TuningEntry* entry = nullptr;
  std::vector<std::string> passed_over;
  std::string problem_note;  // the database could not be read, and why ("" if it could)
  // One paragraph for Explanation::tuning.
  std::string to_string() const;
};

// What was built, where: the device and driver (DeviceCaps::key()), the
// module's SHA-256 or the source's with the build options, and the tier.
struct BuildKey {
  std::string device;
  std::string built;
  Tier tier = Tier::Source;
  std::string to_string() const;
};

struct Outcome {
  enum class Kind { Trial, Build };
  Kind kind = Kind::Trial;
  std::string verdict;  // "" for a trial launch that passed, else the reason
  std::string date;     // when it happened (UTC)
};

class Store {
 public:
  // In memory only.
  Store();
  // Backed by `path`. A file that exists but cannot be read, is not JSON, or
  // is not a fatcl store of a known format is left untouched: problem() says
  // why, lookups answer from the shipped entries, and save() refuses.
  explicit Store(std::filesystem::path path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The process's store: the file FATCL_TUNING names, else
  // $XDG_CONFIG_HOME/fatcl/tuning.json, else ~/.config/fatcl/tuning.json;
  // FATCL_TUNING=off keeps it in memory. Created on first use.
  static std::shared_ptr<Store> user();
  // The default path as above ("" for off).
  static std::filesystem::path user_path();

  const std::filesystem::path& path() const;  // "" in memory
  std::string problem() const;                // "" or why the file is not used

  // The entry for `family` (its current manifest) on this device and driver
  // nearest to `problem` in size class: the file's entries first, then the
  // shipped ones. An empty problem takes the largest problem tuned. Entries
  // of another driver, that measured code the manifest no longer has (by
  // tier_sha256), or a size more than a factor 8 away are passed over, each
  // with its reason.
  TuningMatch find_tuning(const DeviceCaps& caps, const Manifest& family,
                          const std::vector<std::size_t>& problem) const;
  // The file's entries (not the shipped ones).
  std::vector<TuningEntry> tuning() const;
  // Adds an entry, replacing one of the same family, device, driver and
  // size class.
  void put_tuning(TuningEntry entry);

  std::optional<Outcome> outcome(const BuildKey& key) const;
  void remember(const BuildKey& key, Outcome outcome);
  void forget_outcomes();
  std::size_t outcome_count() const;

  // Writes the store to its file: merged with the file's current contents
  // (this store's entries win), into a temporary file renamed into place, so
  // a reader sees the old file or the new one, never a part. Does nothing in
  // memory. Throws fatcl::Error naming the path and the cause.
  void save();

  // The shipped entries (compiled into fatcl from loader/tuning/shipped.json).
  static const std::vector<TuningEntry>& shipped();
  // Parses a store document; throws fatcl::Error naming `origin` and the
  // field at fault.
  static void parse(const std::string& text, const std::string& origin,
                    std::vector<TuningEntry>* tuning,
                    std::vector<std::pair<BuildKey, Outcome>>* outcomes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fatcl
