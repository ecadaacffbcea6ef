#include "fatcl/manifest.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "fatcl/detail/json_fields.hpp"
#include "fatcl/error.hpp"

namespace fatcl {
namespace {

using nlohmann::json;

// Limits no fatcl bundle comes near; past them a manifest is damaged or
// hostile, and its numbers would overflow what is computed from them.
constexpr std::size_t kMaxName = 200;             // variant, kernel, parameter, file names
constexpr std::size_t kMaxModuleBytes = 1 << 30;  // SPIR-V or PTX
constexpr std::size_t kMaxLocalBytes = 1 << 30;
constexpr std::size_t kMaxGroupSide = 1 << 16;   // one side of reqd_work_group_size
constexpr std::size_t kMaxGroupItems = 1 << 20;  // their product
constexpr std::size_t kMaxVariants = 100000;

const detail::JsonFields kFields("manifest");

std::string shown(const std::string& text) { return detail::JsonFields::shown(text); }

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  kFields.fail(where, what);
}
const json& field(const json& object, const char* key, const std::string& where) {
  return kFields.field(object, key, where);
}
std::string text(const json& object, const char* key, const std::string& where,
                 std::size_t max = 4096) {
  return kFields.text(object, key, where, max);
}
std::size_t size_value(const json& value, const std::string& what, const std::string& where,
                       std::size_t max) {
  return kFields.whole(value, what, where, max);
}
std::size_t size_field(const json& object, const char* key, const std::string& where,
                       std::size_t max) {
  return kFields.whole_field(object, key, where, max);
}

std::string identifier(const json& object, const char* key, const std::string& where) {
  std::string s = text(object, key, where, kMaxName);
  if (!is_identifier(s)) {
    fail(where, std::string("field \"") + key + "\" is " + shown(s) +
                    ", not a name of letters, digits and _");
  }
  return s;
}

// A name of a file beside the manifest.
std::string file_name(const json& object, const char* key, const std::string& where) {
  std::string s = text(object, key, where, kMaxName);
  if (s.empty() || s == "." || s == ".." || s.find_first_of("/\\") != std::string::npos ||
      s.find('\0') != std::string::npos) {
    fail(where, std::string("field \"") + key + "\" is " + shown(s) +
                    ", not a file name beside the manifest");
  }
  return s;
}

std::string sha256_field(const json& object, const char* key, const std::string& where) {
  std::string s = text(object, key, where, 64);
  if (s.size() != 64 || s.find_first_not_of("0123456789abcdef") != std::string::npos) {
    fail(where, std::string("field \"") + key + "\" is " + shown(s) +
                    ", not a SHA-256 in 64 lower-case hex digits");
  }
  return s;
}

std::vector<std::string> strings(const json& object, const char* key, const std::string& where) {
  return kFields.strings(object, key, where);
}

// "1.0" .. "1.6": the SPIR-V versions there are.
std::string spirv_version(const json& object, const std::string& where) {
  std::string s = text(object, "spirv_version", where, 8);
  if (s.size() != 3 || s[0] != '1' || s[1] != '.' || s[2] < '0' || s[2] > '6') {
    fail(where, "field \"spirv_version\" is " + shown(s) + ", not a SPIR-V version 1.0 to 1.6");
  }
  return s;
}

// A variant's "ptx" record: the file, target, PTX version, size, SHA-256
// and ptxas's report ({} where the build had no ptxas).
PtxModule parse_ptx(const json& p, const std::string& where) {
  const std::string pw = where + " ptx";
  if (!p.is_object()) fail(where, "field \"ptx\" is not an object");
  PtxModule ptx;
  ptx.file = file_name(p, "file", pw);
  ptx.target = text(p, "target", pw, 32);
  ptx.ptx_version = text(p, "ptx_version", pw, 16);
  ptx.size = size_field(p, "size", pw, kMaxModuleBytes);
  if (ptx.size == 0) fail(pw, "field \"size\" is 0");
  ptx.sha256 = sha256_field(p, "sha256", pw);
  const json& r = field(p, "ptxas", pw);
  if (!r.is_object()) fail(pw, "field \"ptxas\" is not an object");
  if (!r.empty()) {
    const std::string rw = pw + " ptxas";
    PtxasReport report;
    report.arch = text(r, "arch", rw, 32);
    report.registers = size_field(r, "registers", rw, 1 << 16);
    report.stack_frame_bytes = size_field(r, "stack_frame_bytes", rw, kMaxLocalBytes);
    report.spill_store_bytes = size_field(r, "spill_store_bytes", rw, kMaxLocalBytes);
    report.spill_load_bytes = size_field(r, "spill_load_bytes", rw, kMaxLocalBytes);
    report.shared_bytes = size_field(r, "shared_bytes", rw, kMaxLocalBytes);
    ptx.ptxas = report;
  }
  return ptx;
}

Variant parse_variant(const json& v, std::size_t index) {
  std::string where = "variants[" + std::to_string(index) + "]";
  if (!v.is_object()) fail(where, "is not a JSON object");
  Variant out;
  out.name = identifier(v, "name", where);
  where += " (" + out.name + ")";
  const json& params = field(v, "params", where);
  if (!params.is_array()) fail(where, "field \"params\" is not an array");
  for (const json& p : params) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_number_integer()) {
      fail(where, "has a parameter that is not [\"NAME\", integer]");
    }
    const std::string name = p[0].get<std::string>();
    if (!is_identifier(name) || name.size() > kMaxName) {
      fail(where, "has a parameter named " + shown(name) + ", not a name of letters, digits and _");
    }
    for (const auto& [k, value] : out.params) {
      if (k == name) fail(where, "has the parameter " + name + " twice");
    }
    if (p[1].is_number_unsigned() && p[1].get<std::uint64_t>() > std::uint64_t(INT64_MAX)) {
      fail(where, "parameter " + name + " is out of range (" + p[1].dump() + ")");
    }
    out.params.emplace_back(name, p[1].get<long long>());
  }
  out.spirv_file = file_name(v, "spirv_file", where);
  out.spirv_version = spirv_version(v, where);
  out.target_env = text(v, "target_env", where, 64);
  out.capabilities = strings(v, "capabilities", where);
  const json& wg = field(v, "reqd_work_group_size", where);
  if (!wg.is_array() || wg.size() != 3) {
    fail(where,
         "field \"reqd_work_group_size\" is not an array of 3 sizes" +
             std::string(wg.is_array() ? " (it has " + std::to_string(wg.size()) + ")" : ""));
  }
  std::size_t items = 1;
  for (std::size_t d = 0; d < 3; ++d) {
    out.reqd_work_group_size[d] =
        size_value(wg[d], "reqd_work_group_size[" + std::to_string(d) + "]", where, kMaxGroupSide);
    items *= out.reqd_work_group_size[d];
  }
  const bool none = items == 0;
  const bool all_zero = out.reqd_work_group_size == std::array<std::size_t, 3>{0, 0, 0};
  if (none && !all_zero) {
    fail(where, "field \"reqd_work_group_size\" mixes 0 (none) with sizes");
  }
  if (items > kMaxGroupItems) {
    fail(where, "reqd_work_group_size asks for " + std::to_string(items) +
                    " work-items per group, more than " + std::to_string(kMaxGroupItems));
  }
  out.local_mem_bytes = size_field(v, "local_mem_bytes", where, kMaxLocalBytes);
  if (v.contains("program_local_mem_bytes")) {
    out.program_local_mem_bytes =
        size_field(v, "program_local_mem_bytes", where, kMaxLocalBytes);
    if (out.program_local_mem_bytes < out.local_mem_bytes) {
      fail(where, "field \"program_local_mem_bytes\" is " +
                      std::to_string(out.program_local_mem_bytes) +
                      ", less than the kernel's own local_mem_bytes " +
                      std::to_string(out.local_mem_bytes));
    }
  }
  out.spirv_size = size_field(v, "spirv_size", where, kMaxModuleBytes);
  if (out.spirv_size < 20 || out.spirv_size % 4 != 0) {
    fail(where, "field \"spirv_size\" is " + std::to_string(out.spirv_size) +
                    ", not the size of a SPIR-V module (a whole number of 4-byte words, at "
                    "least the 20-byte header)");
  }
  out.sha256 = sha256_field(v, "sha256", where);
  if (v.contains("ptx")) out.ptx = parse_ptx(v["ptx"], where);
  return out;
}

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::size_t Variant::work_group_items() const {
  return reqd_work_group_size[0] * reqd_work_group_size[1] * reqd_work_group_size[2];
}

long long Variant::param(std::string_view key) const {
  for (const auto& [k, v] : params) {
    if (k == key) return v;
  }
  throw Error("variant " + name + " has no parameter " + std::string(key));
}

std::string Variant::define_options() const {
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out += ' ';
    out += "-D" + k + "=" + std::to_string(v);
  }
  return out;
}

Manifest Manifest::parse(std::string_view text_in) {
  json j;
  try {
    j = json::parse(text_in);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 2e4692
    throw Error(std::string("manifest: not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error("manifest: the top level is not a JSON object");
  const std::string where;  // the top level: errors need no place
  // The format first: a manifest of another kind or a newer fatcl is named
  // as such, not as a missing field.
  if (!j.contains("format") || !j["format"].is_string() || j["format"] != kFormat) {
    throw Error(std::string("manifest: not a fatcl manifest (\"format\" is not \"") + kFormat +
                "\")");
  }
  const std::size_t version = size_field(j, "format_version", where, 1u << 20);
  if (version != kFormatVersion) {
    throw Error("manifest: format version " + std::to_string(version) +
                (version > kFormatVersion ? ", newer than" : ", not") + " the version " +
                std::to_string(kFormatVersion) + " this fatcl reads: rebuild the bundle with " +
                "this fatcl's fatcl-compile");
  }
  Manifest m;
  m.generator = text(j, "generator", where);
  m.family = identifier(j, "family", where);
  m.kernel = identifier(j, "kernel", where);
  m.source_file = file_name(j, "source_file", where);
  m.source_sha256 = sha256_field(j, "source_sha256", where);
  m.language = text(j, "language", where, 16);
  if (j.contains("source_embedded")) {
    if (!j["source_embedded"].is_boolean())
      fail(where, "field \"source_embedded\" is not true/false");
    m.source_embedded = j["source_embedded"].get<bool>();
  }
  if (j.contains("tiers_left_out")) {
    m.tiers_left_out = strings(j, "tiers_left_out", where);
    for (std::size_t i = 0; i < m.tiers_left_out.size(); ++i) {
      const std::string& t = m.tiers_left_out[i];
      if (t != "spirv" && t != "ptx") {
        fail(where, "tiers_left_out names " + shown(t) +
                        ", not a precompiled tier (spirv, ptx; a bundle without its source says "
                        "\"source_embedded\": false)");
      }
      if (std::find(m.tiers_left_out.begin(), m.tiers_left_out.begin() + i, t) !=
          m.tiers_left_out.begin() + i) {
        fail(where, "tiers_left_out names " + shown(t) + " twice");
      }
    }
  }
  m.compile_flags = strings(j, "compile_flags", where);
  const json& toolchain = field(j, "toolchain", where);
  if (!toolchain.is_object()) fail(where, "field \"toolchain\" is not an object");
  for (const auto& [k, v] : toolchain.items()) {
    if (!v.is_string()) fail(where, "toolchain entry " + shown(k) + " is not a string");
    m.toolchain[k] = v.get<std::string>();
  }
  const json& variants = field(j, "variants", where);
  if (!variants.is_array()) {
    throw Error("manifest: family " + m.family + ": field \"variants\" is " +
                std::string(variants.type_name()) + ", not an array of variants");
  }
  if (variants.empty()) {
    throw Error("manifest: family " + m.family + " lists no variants");
  }
  if (variants.size() > kMaxVariants) {
    fail(where, "lists " + std::to_string(variants.size()) + " variants, more than " +
                    std::to_string(kMaxVariants));
  }
  std::set<std::string> names, files;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    Variant v = parse_variant(variants[i], i);
    if (!names.insert(v.name).second) {
      fail("variants[" + std::to_string(i) + "]",
           "the variant name " + v.name + " is listed twice");
    }
    if (!files.insert(v.spirv_file).second || (v.ptx && !files.insert(v.ptx->file).second)) {
      fail("variants[" + std::to_string(i) + "] (" + v.name + ")",
           "names a module file another variant names too");
    }
    m.variants.push_back(std::move(v));
  }
  if (j.contains("launch")) {
    const json& launch = j["launch"];
    if (!launch.is_object()) fail(where, "field \"launch\" is not an object");
    m.launch = LaunchDescription::parse(launch.dump(), "manifest: family " + m.family);
  }
  return m;
}

std::string Manifest::dump() const {
  json variants = json::array();
  for (const Variant& v : this->variants) {
    json params = json::array();
    for (const auto& [k, value] : v.params) params.push_back({k, value});
    variants.push_back({{"name", v.name},
                        {"params", params},
                        {"spirv_file", v.spirv_file},
                        {"spirv_version", v.spirv_version},
                        {"target_env", v.target_env},
                        {"capabilities", v.capabilities},
                        {"reqd_work_group_size", v.reqd_work_group_size},
                        {"local_mem_bytes", v.local_mem_bytes},
                        {"spirv_size", v.spirv_size},
                        {"sha256", v.sha256}});
    if (v.program_local_mem_bytes > 0) {
      variants.back()["program_local_mem_bytes"] = v.program_local_mem_bytes;
    }
    if (v.ptx) {
      // An empty "ptxas" object: built where ptxas was missing (unvalidated).
      json report = json::object();
      if (const std::optional<PtxasReport>& r = v.ptx->ptxas) {
        report = {{"arch", r->arch},
                  {"registers", r->registers},
                  {"stack_frame_bytes", r->stack_frame_bytes},
                  {"spill_store_bytes", r->spill_store_bytes},
                  {"spill_load_bytes", r->spill_load_bytes},
                  {"shared_bytes", r->shared_bytes}};
      }
      variants.back()["ptx"] = {
          {"file", v.ptx->file}, {"target", v.ptx->target}, {"ptx_version", v.ptx->ptx_version},
          {"size", v.ptx->size}, {"sha256", v.ptx->sha256}, {"ptxas", report}};
    }
  }
  json j = {{"format", kFormat},
            {"format_version", kFormatVersion},
            {"generator", generator},
            {"family", family},
            {"kernel", kernel},
            {"source_file", source_file},
            {"source_sha256", source_sha256},
            {"language", language},
            {"compile_flags", compile_flags},
            {"toolchain", toolchain},
            {"variants", variants}};
  // Written only when false, so bundles with their source keep their bytes.
  if (!source_embedded) j["source_embedded"] = false;
  if (launch) j["launch"] = json::parse(launch->dump());
  if (!tiers_left_out.empty()) {
    std::vector<std::string> sorted = tiers_left_out;
    std::sort(sorted.begin(), sorted.end());
    j["tiers_left_out"] = sorted;
  }
  return j.dump(2) + "\n";
}

bool Manifest::leaves_out(std::string_view tier) const {
  if (tier == "source") return !source_embedded;
  return std::find(tiers_left_out.begin(), tiers_left_out.end(), tier) != tiers_left_out.end();
}

const Variant& Manifest::variant(std::string_view name) const {
  for (const Variant& v : variants) {
    if (v.name == name) return v;
  }
  std::string known;
  for (const Variant& v : variants) known += (known.empty() ? "" : ", ") + v.name;
  throw Error("family " + family + " has no variant " + std::string(name) + " (it has: " + known +
              ")");
}

std::string sha256_hex(const void* data, std::size_t size) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data, size, digest, &length, EVP_sha256(), nullptr) != 1) {
    throw Error("SHA-256 failed (OpenSSL EVP_Digest)");
  }
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

}  // namespace fatcl
