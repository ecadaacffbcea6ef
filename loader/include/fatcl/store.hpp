// What fatcl learns about devices and keeps between runs, in one store:
// - tuning entries: a family's variants ranked by measured speed on one
//   device and driver for one problem size (fatcl tune writes them), and
// - remembered outcomes: trial launches and failed builds, per device,
//   driver and build, so that a product does not repeat a failing path at
//   every start.
// A Store lives in memory, or is backed by a JSON file that is rewritten
// atomically (a temporary file renamed into place, under a lock, merged with
// what other processes wrote meanwhile). The entries a family ships
// (FamilyDescription::shipped_tuning) come after the file's own.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fatcl/loader.hpp"

namespace fatcl {

// What was built, where: the device and driver (DeviceCaps::key()), the
// module's SHA-256 or the source's with the build options, and the tier.
struct BuildKey {
  std::string device;
  std::string built;
  Tier tier = Tier::Source;
  std::string to_string() const;
};

struct RememberedOutcome {
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
  // is not a fatcl store of a known format is left untouched: why_not_used() says
  // why, lookups answer from the shipped entries, and save() refuses.
  explicit Store(std::filesystem::path path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Tuning entries are read in layers: the family's shipped entries, then
  // the system's (read-only: files a package or an administrator installs,
  // shared by every user and node), then the user's own file; a lookup
  // takes the nearest entry in size and, at the same distance, the most
  // specific device, then the upper layer.
  //
  // The system layers: the files FATCL_TUNING_SYSTEM lists (separated by
  // ':'), else fatcl/tuning.json under each folder of $XDG_CONFIG_DIRS
  // (default /etc/xdg), where such a file exists.
  static std::vector<std::filesystem::path> system_paths();
  // Reads one read-only layer: its tuning entries answer lookups after this
  // store's own; save() never writes them. A file that cannot be used is
  // passed over with the reason in layer_notes().
  void add_layer(const std::filesystem::path& path);
  std::vector<std::string> layer_notes() const;

  // The process's store: the file FATCL_TUNING names, else
  // $XDG_CONFIG_HOME/fatcl/tuning.json, else ~/.config/fatcl/tuning.json;
  // FATCL_TUNING=off keeps it in memory. Created on first use, with the
  // system layers (system_paths()) added.
  static std::shared_ptr<Store> user();
  // The default path as above ("" for off).
  static std::filesystem::path user_path();

  const std::filesystem::path& path() const;  // "" in memory
  std::string why_not_used() const;           // "" or why the file is not used

  // The entry for `family` (its current manifest) on this device and driver
  // nearest to `problem` in size class: the file's entries first, then
  // `shipped` (the family's own, FamilyDescription::shipped_tuning). An
  // empty problem takes the largest problem tuned. Entries of another
  // driver, that measured code the manifest no longer has (by tier_sha256),
  // or a size more than a factor 8 away are passed over, each with its
  // reason; with `modelled` (the family has a model that carries an entry
  // to other sizes, FamilyDescription::efficiency) the nearest entry is
  // taken however far. Only entries of `form` (TuningEntry::form) answer;
  // with `on_device_of`, only those measured on the device that entry was
  // measured on (its platform, name, driver and hardware), whatever this
  // device has of its own. The match points into this store or into
  // `shipped`.
  TuningMatch find_tuning(const DeviceCaps& caps, const Manifest& family,
                          const std::vector<std::size_t>& problem,
                          const std::vector<TuningEntry>& shipped = {}, bool modelled = false,
                          const std::string& form = "",
                          const TuningEntry* on_device_of = nullptr) const;
  // The file's entries (not the shipped ones).
  std::vector<TuningEntry> tuning() const;
  // Adds an entry, replacing one of the same family, form, device, driver
  // and size class.
  void put_tuning(TuningEntry entry);
  // What merge() did with the entries it was given.
  struct MergeCount {
    std::size_t added = 0, replaced = 0, kept = 0;
  };
  // Merges entries measured elsewhere (another node's export): an entry of
  // a new key is added; for a key the store has, the entry measured by
  // this fatcl version wins over another version's, and between two of the
  // same version the newer measurement. Provenance travels with each.
  MergeCount merge(const std::vector<TuningEntry>& entries);

  std::optional<RememberedOutcome> outcome(const BuildKey& key) const;
  void remember(const BuildKey& key, RememberedOutcome outcome);
  void forget_outcomes();
  std::size_t outcome_count() const;

  // Writes the store to its file: merged with the file's current contents
  // (this store's entries win), into a temporary file renamed into place, so
  // a reader sees the old file or the new one, never a part. Does nothing in
  // memory. Throws fatcl::Error naming the path and the cause.
  void save();

  // Parses a store document; throws fatcl::Error naming `origin` and the
  // field at fault.
  static void parse(const std::string& text, const std::string& origin,
                    std::vector<TuningEntry>* tuning,
                    std::vector<std::pair<BuildKey, RememberedOutcome>>* outcomes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fatcl
