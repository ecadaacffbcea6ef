#include "fatcl/manifest.hpp"

#include <nlohmann/json.hpp>

#include "fatcl/error.hpp"

namespace fatcl {
namespace {

using nlohmann::json;

const json& field(const json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) {
    throw Error("manifest: " + where + " has no field \"" + key + "\"");
  }
  return *it;
}

template <typename T>
T get(const json& object, const char* key, const std::string& where) {
  const json& value = field(object, key, where);
  try {
    return value.get<T>();
  } catch (const json::exception& e) {
    throw Error("manifest: " + where + " field \"" + key + "\" has the wrong type (" +
                value.type_name() + "): " + e.what());
  }
}

Variant parse_variant(const json& v, std::size_t index) {
  std::string where = "variants[" + std::to_string(index) + "]";
  Variant out;
  out.name = get<std::string>(v, "name", where);
  where += " (" + out.name + ")";
  const json& params = field(v, "params", where);
  if (!params.is_array()) throw Error("manifest: " + where + " field \"params\" is not an array");
  for (const json& p : params) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_number_integer()) {
      throw Error("manifest: " + where + " has a parameter that is not [\"NAME\", integer]");
    }
    out.params.emplace_back(p[0].get<std::string>(), p[1].get<long long>());
  }
  out.spirv_file = get<std::string>(v, "spirv_file", where);
  out.spirv_version = get<std::string>(v, "spirv_version", where);
  out.target_env = get<std::string>(v, "target_env", where);
  out.capabilities = get<std::vector<std::string>>(v, "capabilities", where);
  out.reqd_work_group_size = get<std::array<std::size_t, 3>>(v, "reqd_work_group_size", where);
  out.local_mem_bytes = get<std::size_t>(v, "local_mem_bytes", where);
  out.spirv_size = get<std::size_t>(v, "spirv_size", where);
  out.sha256 = get<std::string>(v, "sha256", where);
  if (v.contains("ptx")) {
    const json& p = field(v, "ptx", where);
    const std::string pw = where + " ptx";
    if (!p.is_object()) throw Error("manifest: " + where + " field \"ptx\" is not an object");
    PtxModule ptx;
    ptx.file = get<std::string>(p, "file", pw);
    ptx.target = get<std::string>(p, "target", pw);
    ptx.ptx_version = get<std::string>(p, "ptx_version", pw);
    ptx.size = get<std::size_t>(p, "size", pw);
    ptx.sha256 = get<std::string>(p, "sha256", pw);
    const json& r = field(p, "ptxas", pw);
    if (!r.is_object()) throw Error("manifest: " + pw + " field \"ptxas\" is not an object");
    if (!r.empty()) {
      const std::string rw = pw + " ptxas";
      PtxasReport report;
      report.arch = get<std::string>(r, "arch", rw);
      report.registers = get<std::size_t>(r, "registers", rw);
      report.stack_frame_bytes = get<std::size_t>(r, "stack_frame_bytes", rw);
      report.spill_store_bytes = get<std::size_t>(r, "spill_store_bytes", rw);
      report.spill_load_bytes = get<std::size_t>(r, "spill_load_bytes", rw);
      report.shared_bytes = get<std::size_t>(r, "shared_bytes", rw);
      ptx.ptxas = report;
    }
    out.ptx = ptx;
  }
  return out;
}

}  // namespace

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

Manifest Manifest::parse(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(std::string("manifest: not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error("manifest: the top level is not a JSON object");
  const std::string where = "the manifest";
  Manifest m;
  m.generator = get<std::string>(j, "generator", where);
  m.family = get<std::string>(j, "family", where);
  m.kernel = get<std::string>(j, "kernel", where);
  m.source_file = get<std::string>(j, "source_file", where);
  m.source_sha256 = get<std::string>(j, "source_sha256", where);
  m.language = get<std::string>(j, "language", where);
  if (j.contains("source_embedded")) m.source_embedded = get<bool>(j, "source_embedded", where);
  m.compile_flags = get<std::vector<std::string>>(j, "compile_flags", where);
  m.toolchain = get<std::map<std::string, std::string>>(j, "toolchain", where);
  const json& variants = field(j, "variants", where);
  if (!variants.is_array() || variants.empty()) {
    throw Error("manifest: family " + m.family + " lists no variants");
  }
  for (std::size_t i = 0; i < variants.size(); ++i) {
    m.variants.push_back(parse_variant(variants[i], i));
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
  json j = {{"generator", generator},
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
  return j.dump(2) + "\n";
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

}  // namespace fatcl
