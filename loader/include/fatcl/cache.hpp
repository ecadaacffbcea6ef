// The program cache: programs built in this process, shared by its threads,
// and the persistent program-binary cache: what a driver built
// (CL_PROGRAM_BINARIES) kept on disk, so that the next start loads it with
// clCreateProgramWithBinary instead of compiling again (PyOpenCL's and
// ArrayFire's binary caches, CUDA's JIT cache).
//
// One file per key (platform, device and driver, what was built and with
// which options, the tier, the fatcl version). A file holds a magic word, its
// key, the binary's length and an FNV-1a checksum of it; it is written to a
// temporary file and renamed into place, so concurrent writers leave one
// whole entry (a writer killed before its rename leaves a temporary file,
// which the next writer removes once it is an hour old). An entry that is truncated, corrupt or of another key is
// removed with the reason and never handed to the driver. The folder is
// capped in size, least recently used entries going first. A folder that
// cannot be written leaves the cache read-only or off, with the reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fatcl/opencl.hpp"

namespace fatcl {

class ProgramCache {
 public:
  // Off: every lookup misses, nothing is written.
  ProgramCache();
  // In `dir` (created on first write), holding at most `max_bytes`.
  ProgramCache(std::filesystem::path dir, std::uint64_t max_bytes);

  // The process's cache: off when FATCL_CACHE=0, else in FATCL_CACHE_DIR,
  // else $XDG_CACHE_HOME/fatcl/programs, else ~/.cache/fatcl/programs;
  // FATCL_CACHE_MAX_MB caps it (default 512).
  static std::shared_ptr<ProgramCache> user();
  static std::filesystem::path user_dir();  // "" when off

  bool enabled() const { return !dir_.empty(); }
  const std::filesystem::path& dir() const { return dir_; }

  // The binary stored under `key`, or none. An entry that is there but
  // cannot be trusted is removed, and `why` says what was wrong with it.
  std::optional<std::string> get(const std::string& key, std::string* why = nullptr) const;
  // The binary an entry's bytes hold for `key`, or none with `why` set:
  // another format, another key, truncated, or a checksum that differs.
  static std::optional<std::string> decode(std::string_view entry, const std::string& key,
                                           std::string* why);
  // Stores `binary` under `key`; "" or why it was not stored.
  std::string put(const std::string& key, std::string_view binary) const;
  void remove(const std::string& key) const;

  struct Stats {
    std::size_t entries = 0;
    std::uint64_t bytes = 0;
  };
  // Both throw fatcl::Error if the cache's path is there but is not a
  // folder; a cache that is off or not yet made has no entries.
  Stats stats() const;
  // Removes every entry; returns how many.
  std::size_t clear() const;
  // What reading every entry found (verify()).
  struct Check {
    std::size_t whole = 0;
    std::vector<std::string> damaged;    // "FILE: why"
    std::vector<std::string> temporary;  // files a writer left, e.g. killed mid-write
  };
  // Reads every entry and checks its header, key, file name, size and
  // checksum, as get() would; changes nothing.
  Check verify() const;

  // The file an entry of `key` lives in.
  std::filesystem::path path_of(const std::string& key) const;

  // Programs built in this process, in memory whether or not the folder is
  // on: every thread that loads the same build into the same context gets
  // the same program. They live as long as the cache (and keep their
  // contexts alive), like CLBlast's program cache.
  std::optional<cl::Program> built(cl_context context, const std::string& key) const;
  void keep_built(cl_context context, const std::string& key, const cl::Program& program) const;

 private:
  void evict() const;
  std::filesystem::path dir_;
  std::uint64_t max_bytes_ = 0;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<cl_context, std::string>, cl::Program> built_;
};

// FNV-1a, 64 bits: the entry checksum and file name (not a security hash).
std::uint64_t fnv1a64(std::string_view data);

}  // namespace fatcl
