#include "fatcl/cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "fatcl/detail/atomic_file.hpp"
#include "environment.hpp"
#include "fatcl/error.hpp"

namespace fatcl {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'F', 'A', 'T', 'C', 'L', 'B', 'I', 'N'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kMaxKey = 1 << 16;

template <typename T>
void put_int(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

template <typename T>
bool get_int(std::string_view& in, T* v) {
  if (in.size() < sizeof(T)) return false;
  *v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) *v |= T(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(sizeof(T));
  return true;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::uint64_t fnv1a64(std::string_view data) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

ProgramCache::ProgramCache() = default;

ProgramCache::ProgramCache(fs::path dir, std::uint64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {}

fs::path ProgramCache::user_dir() {
  if (detail::cache_off_from_environment()) return {};
  if (const char* d = std::getenv("FATCL_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    return fs::path(x) / "fatcl" / "programs";
  }
  if (const char* h = std::getenv("HOME"); h && *h) {
    return fs::path(h) / ".cache" / "fatcl" / "programs";
  }
  return {};
}

std::shared_ptr<ProgramCache> ProgramCache::user() {
  static std::mutex mutex;
  // Never destroyed: the programs it holds must not be released by a static
  // destructor after the driver's own have run (Oclgrind aborts then).
  static std::shared_ptr<ProgramCache>& cache = *new std::shared_ptr<ProgramCache>();
  std::lock_guard<std::mutex> lock(mutex);
  if (!cache) {
    const std::uint64_t mb = detail::cache_max_mb_from_environment();
    const fs::path dir = user_dir();
    cache = dir.empty() ? std::make_shared<ProgramCache>()
                        : std::make_shared<ProgramCache>(dir, mb << 20);
  }
  return cache;
}

fs::path ProgramCache::path_of(const std::string& key) const {
  return dir_ / (hex64(fnv1a64(key)) + ".bin");
}

std::optional<std::string> ProgramCache::get(const std::string& key, std::string* why) const {
  if (!enabled()) return std::nullopt;
  const fs::path path = path_of(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;  // no entry (or unreadable: a miss either way)
  std::ostringstream text;
  text << in.rdbuf();
  std::string reason;
  std::optional<std::string> binary = decode(text.str(), key, &reason);
  if (!binary) {
    if (why) *why = "cache entry " + path.string() + " discarded: " + reason;
    std::error_code ec;
    fs::remove(path, ec);
    return std::nullopt;
  }
  // Least recently used goes first: a hit counts as a use.
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return binary;
}

std::optional<std::string> ProgramCache::decode(std::string_view rest, const std::string& key,
                                                std::string* why) {
  auto discard = [&](const std::string& reason) -> std::optional<std::string> {
    if (why) *why = reason;
    return std::nullopt;
  };
  std::uint32_t version = 0, key_size = 0;
  std::uint64_t size = 0, checksum = 0;
  if (rest.size() < sizeof kMagic || std::memcmp(rest.data(), kMagic, sizeof kMagic) != 0) {
    return discard("not a fatcl cache entry (no FATCLBIN magic)");
  }
  rest.remove_prefix(sizeof kMagic);
  if (!get_int(rest, &version) || version != kVersion) {
    return discard("entry format " + std::to_string(version) + ", this fatcl writes " +
                   std::to_string(kVersion));
  }
  if (!get_int(rest, &key_size) || key_size > kMaxKey || rest.size() < key_size) {
    return discard("truncated in its key");
  }
  if (rest.substr(0, key_size) != key) return discard("it holds another key");
  rest.remove_prefix(key_size);
  if (!get_int(rest, &size) || !get_int(rest, &checksum)) return discard("truncated in its header");
  if (rest.size() != size) {
    return discard("the binary has " + std::to_string(rest.size()) + " bytes, the header says " +
                   std::to_string(size));
  }
  if (fnv1a64(rest) != checksum) return discard("the checksum does not match");
  return std::string(rest);
}

std::string ProgramCache::put(const std::string& key, std::string_view binary) const {
  if (!enabled()) return "";
  if (key.size() > kMaxKey) return "not cached: the key is too long";
  std::string out(kMagic, sizeof kMagic);
  put_int(out, kVersion);
  put_int(out, static_cast<std::uint32_t>(key.size()));
  out += key;
  put_int(out, static_cast<std::uint64_t>(binary.size()));
  put_int(out, fnv1a64(binary));
  out += binary;
  try {
    detail::write_file_atomic(path_of(key), out);
  } catch (const Error& e) {
    return std::string("not cached: ") + e.what();
  }
  evict();
  return "";
}

std::optional<cl::Program> ProgramCache::built(cl_context context, const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = built_.find({context, key});
  if (it == built_.end()) return std::nullopt;
  return it->second;
}

void ProgramCache::keep_built(cl_context context, const std::string& key,
                              const cl::Program& program) const {
  std::lock_guard<std::mutex> lock(mutex_);
  built_.emplace(std::pair{context, key}, program);
}

void ProgramCache::remove(const std::string& key) const {
  if (!enabled()) return;
  std::error_code ec;
  fs::remove(path_of(key), ec);
}

namespace {

// Whether the cache's folder is there to read; throws if its path is taken
// by something else.
bool folder_there(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return false;
  if (!fs::is_directory(dir, ec)) {
    throw Error("the program cache path " + dir.string() +
                " is not a folder (the user's cache: FATCL_CACHE_DIR, else "
                "$XDG_CACHE_HOME/fatcl/programs)");
  }
  return true;
}

// A temporary file of write_file_atomic that was to become an entry.
bool temporary_entry(const std::string& name) {
  return fs::path(detail::atomic_target(name)).extension() == ".bin";
}

}  // namespace

ProgramCache::Stats ProgramCache::stats() const {
  Stats s;
  std::error_code ec;
  if (!enabled() || !folder_there(dir_)) return s;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() != ".bin") continue;
    ++s.entries;
    s.bytes += e.file_size(ec);
  }
  return s;
}

std::size_t ProgramCache::clear() const {
  std::size_t removed = 0;
  std::error_code ec;
  if (!enabled() || !folder_there(dir_)) return 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".bin" || name.find(".bin.") != std::string::npos) {
      removed += fs::remove(e.path(), ec) ? 1 : 0;
    }
  }
  return removed;
}

ProgramCache::Check ProgramCache::verify() const {
  Check out;
  std::error_code ec;
  if (!enabled() || !folder_there(dir_)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (temporary_entry(name)) out.temporary.push_back(e.path().string());
    if (e.path().extension() != ".bin") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string bytes = text.str();
    // The key as the entry states it, then the entry checked against it.
    std::string_view rest = bytes;
    std::uint32_t version = 0, key_size = 0;
    std::string key;
    if (rest.size() > sizeof kMagic) {
      rest.remove_prefix(sizeof kMagic);
      if (get_int(rest, &version) && get_int(rest, &key_size) && key_size <= rest.size()) {
        key = std::string(rest.substr(0, key_size));
      }
    }
    std::string why;
    if (!in) {
      why = "cannot be read";
    } else if (decode(bytes, key, &why) && path_of(key).filename() != e.path().filename()) {
      why = "its key belongs in " + path_of(key).filename().string();
    }
    if (why.empty()) {
      ++out.whole;
    } else {
      out.damaged.push_back(e.path().string() + ": " + why);
    }
  }
  return out;
}

void ProgramCache::evict() const {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  std::uint64_t total = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    // A writer killed before its rename left this.
    if (temporary_entry(e.path().filename().string()) && detail::stale_temporary(e)) {
      fs::remove(e.path(), ec);
      continue;
    }
    if (e.path().extension() != ".bin") continue;
    total += e.file_size(ec);
    entries.emplace_back(e.last_write_time(ec), e.path());
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end());
  for (const auto& [when, path] : entries) {
    if (total <= max_bytes_) break;
    const std::uint64_t size = fs::file_size(path, ec);
    if (fs::remove(path, ec)) total -= std::min(total, size);
  }
}

}  // namespace fatcl
