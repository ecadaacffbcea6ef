// Tuning entries: a family's variants ranked by measured speed on one device
// and driver for one problem size. fatcl tune measures them, the store keeps
// them (fatcl/store.hpp), a family ships its own (FamilyDescription), and
// load() ranks by the one nearest to the problem.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatcl/device.hpp"
#include "fatcl/manifest.hpp"
#include "fatcl/tier.hpp"

namespace fatcl {

// The fatcl version written into tuning entries.
const char* fatcl_version();
// Now, UTC, ISO 8601 ("2026-11-30T16:39:19Z"): how entries, outcomes and
// reports are dated.
std::string utc_timestamp();

struct TunedVariant {
  std::string variant;
  std::string sha256;       // of the code measured in `tier` (tier_sha256)
  Tier tier = Tier::SpirV;  // the tier it was measured in
  double gflops = 0;
};

// The SHA-256 of the code a tier builds for a variant, as the manifest
// records it: the SPIR-V module, the PTX, or the family's OpenCL C source
// (the variant's parameters are in its name). A tuning entry holds while the
// code it measured is the same, whatever happens to the other tiers' code.
// "" for PTX a variant does not carry.
std::string tier_sha256(const Manifest& family, const Variant& variant, Tier tier);

struct TuningEntry {
  std::string family;                // e.g. "matmul_blocked"
  std::string platform;              // CL_PLATFORM_NAME
  std::string device;                // CL_DEVICE_NAME; shipped entries may use * as a wildcard
  std::string driver;                // CL_DRIVER_VERSION
  std::vector<std::size_t> problem;  // the sizes measured, e.g. M, N, K
  // Which form of its problem the family computed, where it serves several
  // (a GEMM's layout, transposes, precision and batch, e.g. "col-major NT
  // double"); "" for a family's one form. Part of the key: an entry answers
  // lookups of its own form only.
  std::string form;
  std::string measured;               // UTC date and time, ISO 8601
  std::string fatcl_version;          // of the fatcl that measured
  std::vector<TunedVariant> ranking;  // the choice first: fastest first, but learning online
                                      // keeps its current choice within OnlineOptions::margin
  std::string origin;                 // where it was read: the file, or "shipped with fatcl"
  // Who measured it, kept through exports and merges ("fatcl tune on
  // <host>"); "" where the file does not say.
  std::string provenance;
  // What the device it was measured on reported (its platform, name and
  // driver are the fields above): how a device without entries of its own
  // finds the most similar measured one (device_similarity). None in entries
  // written before fatcl kept it; those match by name (a pattern) only.
  std::optional<DeviceProfile> measured_on;

  // The problem-size class: each size to the nearest power of two
  // ("2^10x2^10x2^10"). One entry per family, form, device, driver and class.
  std::string size_class() const;
  // "matmul_blocked on NVIDIA H200 (driver 580.159.04) for 4096x4096x4096,
  // measured 2026-11-30T17:02:11Z by fatcl 0.1.0 (shipped with fatcl)"; a
  // device pattern reads "on Intel(R) OpenCL devices matching "*"".
  std::string describe() const;
};
std::string size_class(const std::vector<std::size_t>& problem);
// The largest power of two, up to 16, that divides `size` (16 for 0): with the
// size class, what a choice kept for a shape is kept for. The families' models
// tell 1000 from 1024, and 24 columns from 32, by whether rows are whole
// vectors and tiles whole (a 16-wide tile fits 24 columns once and a half).
std::size_t size_alignment(std::size_t size);
// Whether the entry was measured on this device and driver: its platform
// and driver, its device's name (a pattern, for an entry that keeps no
// profile of its device) and, where it keeps one, the same hardware
// (same_hardware: another CPU under the same name is a similar device).
bool measured_here(const TuningEntry& entry, const DeviceCaps& caps);
// Whether `entry` (the one that ranked a choice, if any) was measured on this
// device at the problem's own size class: a tuned size, for the benches and
// for learning online, as opposed to one the model carried an entry to.
bool tuned_here(const std::optional<TuningEntry>& entry, const std::vector<std::size_t>& problem,
                const DeviceCaps& caps);
// An entry measured now, on this device, by `who` ("fatcl tune"): family,
// form, platform, device, driver, what the device reports, problem, date,
// fatcl version and provenance ("<who> on <host>") filled in; the ranking
// is the caller's.
TuningEntry measured_entry(const DeviceCaps& caps, const std::string& family,
                           const std::string& form, const std::vector<std::size_t>& problem,
                           const std::string& who);
// "1x8192x8192"; "(no size)" for an empty problem.
std::string problem_text(const std::vector<std::size_t>& problem);

// The outcome of a tuning lookup: the entry that decides (or none), and
// every entry for this device that was passed over, with the reason.
struct TuningMatch {
  const TuningEntry* entry = nullptr;
  // How alike the device the entry was measured on is to this one (1: this
  // device, or a name pattern that matches it), and the figures behind it
  // (device_similarity); "" for this device.
  double similarity = 0;
  std::string similar_because;
  // The device nearest to this one that was not similar enough
  // (kSimilarEnough), with its similarity; "" where there was none.
  std::string nearest_unused;
  std::vector<std::string> passed_over;
  // Every entry of the device that decides (this one, or the neighbour whose
  // entry was taken) that was not passed over, `entry` among them.
  std::vector<const TuningEntry*> device_entries;
  std::string store_note;  // the database could not be read, and why ("" if it could)
  // One paragraph for Explanation::tuning.
  std::string to_string() const;
};

// The tuning entries of a store document (the "tuning" list of what
// Store::save() writes, or of `fatcl tune --json`'s database): how a family
// ships its own (FamilyDescription::shipped_tuning). Each entry's origin is
// `origin`. Throws fatcl::Error naming `origin` and the field at fault.
std::vector<TuningEntry> parse_tuning_entries(std::string_view text, const std::string& origin);

}  // namespace fatcl
