#include "environment.hpp"

#include <cctype>
#include <cstdlib>
#include <optional>

#include "fatcl/loader.hpp"

namespace fatcl::detail {
namespace {

constexpr std::uint64_t kDefaultCacheMb = 512;
constexpr std::uint64_t kMaxCacheMb = (1u << 20) - 1;

std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

// "", "0" or "1": the switch values; none for anything else.
std::optional<bool> switch_value(const std::string& v) {
  if (v.empty() || v == "0") return false;
  if (v == "1") return true;
  return std::nullopt;
}

std::optional<std::uint64_t> megabytes(const std::string& v) {
  return parse_whole_number(v, 1, kMaxCacheMb);
}

std::string shown(const char* name, const std::string& v) {
  std::string text = v.substr(0, 40);
  for (char& c : text) {
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  }
  return std::string(name) + "=\"" + text + (v.size() > 40 ? "...\"" : "\"");
}

}  // namespace

bool self_check_from_environment() {
  const auto v = get("FATCL_SELF_CHECK");
  return v && switch_value(*v).value_or(false);
}

bool cache_off_from_environment() {
  const auto v = get("FATCL_CACHE");
  return v && *v == "0";
}

std::uint64_t cache_max_mb_from_environment() {
  const auto v = get("FATCL_CACHE_MAX_MB");
  return v ? megabytes(*v).value_or(kDefaultCacheMb) : kDefaultCacheMb;
}

bool online_tuning_from_environment() {
  const auto v = get("FATCL_TUNE");
  return v && *v == "online";
}

std::string codegen_environment() {
  // Intel's CL_CONFIG_CPU_TARGET_ARCH=core-avx2 made AVX2 binaries that a
  // later run without it was served from the cache (half the speed on a
  // Zen 4, 2026-12-02).
  static const char* const kNames[] = {"CL_CONFIG_CPU_TARGET_ARCH", "CL_CONFIG_USE_VECTORIZER",
                                       "CL_CONFIG_CPU_VECTORIZER_MODE", "POCL_WORK_GROUP_METHOD"};
  std::string out;
  for (const char* name : kNames) {
    if (const auto v = get(name)) out += std::string("|env ") + name + "=" + *v;
  }
  return out;
}

std::vector<std::string> environment_notes() {
  std::vector<std::string> notes;
  if (const auto v = get("FATCL_TUNE"); v && *v != "online" && *v != "off" && !v->empty()) {
    notes.push_back(shown("FATCL_TUNE", *v) +
                    " ignored: expected online (learn the choice on the first calls) or off; "
                    "no learning");
  }
  if (const auto v = get("FATCL_SELF_CHECK"); v && !switch_value(*v)) {
    notes.push_back(shown("FATCL_SELF_CHECK", *v) +
                    " ignored: expected 1 (self-check on) or 0; the self-check stays off");
  }
  if (const auto v = get("FATCL_CACHE"); v && !switch_value(*v)) {
    notes.push_back(shown("FATCL_CACHE", *v) +
                    " ignored: expected 0 (program cache off) or 1; the cache stays on");
  }
  if (const auto v = get("FATCL_CACHE_MAX_MB"); v && !megabytes(*v)) {
    notes.push_back(shown("FATCL_CACHE_MAX_MB", *v) +
                    " ignored: expected a whole number from 1 to " + std::to_string(kMaxCacheMb) +
                    "; the cache keeps at most " + std::to_string(kDefaultCacheMb) + " MiB");
  }
  return notes;
}

}  // namespace fatcl::detail
