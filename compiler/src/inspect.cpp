// What a bundle, or a product binary with families embedded, holds: per
// family and variant the parameters, work-group, local memory and each
// tier's code (found, its size and SHA-256, and what it is), with sizes per
// tier. A binary is read as bytes: each embedded manifest is found by its
// format field, each module by its SPIR-V magic number or PTX header and
// its SHA-256, the source by its kernel and its SHA-256 (as cuobjdump reads
// a CUDA fat binary out of a program).
#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "fatcl/compiler.hpp"
#include "fatcl/detail/format.hpp"
#include "fatcl/error.hpp"

namespace fatcl {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string short_hash(const std::string& sha) { return sha.substr(0, 12); }

std::string kib(std::size_t bytes) { return detail::format("%.1f KiB", double(bytes) / 1024); }

// The family's variants with each tier's code looked up by `find` (the
// bytes, or nullopt if absent), checked against the manifest.
template <typename Find>
InspectedFamily describe(const Manifest& m, std::string_view manifest_json,
                         const std::string& origin, Find find) {
  InspectedFamily f;
  f.origin = origin;
  f.manifest = m;
  f.bytes.manifest_json = std::string(manifest_json);
  for (const Variant& v : m.variants) {
    InspectedVariant iv;
    iv.name = v.name;
    auto tier = [&](const std::string& name, const std::string& file, std::size_t size,
                    const std::string& sha, const std::string& what) {
      InspectedTier t;
      t.tier = name;
      t.bytes = size;
      t.sha256 = sha;
      t.what = what;
      if (m.leaves_out(name)) {
        // Built and validated, but not embedded: nothing to find in a product.
        t.left_out = true;
        t.what += "; left out of the product on purpose (TIERS)";
        iv.tiers.push_back(std::move(t));
        return;
      }
      const std::optional<std::string> bytes = find(name, file, size, sha);
      if (!bytes) {
        t.problem = "not found";
      } else if (bytes->size() != size) {
        t.problem = "has " + std::to_string(bytes->size()) + " B, the manifest says " +
                    std::to_string(size);
      } else if (sha256_hex(bytes->data(), bytes->size()) != sha) {
        t.problem = "does not match the SHA-256 its manifest records";
      }
      if (bytes) (name == "spirv" ? f.bytes.spirv : f.bytes.ptx).push_back({v.name, *bytes});
      f.tier_bytes[name] += size;
      iv.tiers.push_back(std::move(t));
    };
    std::string caps;
    for (const std::string& c : v.capabilities) caps += (caps.empty() ? "" : ",") + c;
    tier("spirv", v.spirv_file, v.spirv_size, v.sha256,
         "SPIR-V " + v.spirv_version + " for " + v.target_env + ", capabilities " + caps);
    if (v.ptx) {
      std::string what = "PTX " + v.ptx->ptx_version + " for " + v.ptx->target;
      if (v.ptx->ptxas) {
        const PtxasReport& r = *v.ptx->ptxas;
        what += "; ptxas for " + r.arch + ": " + std::to_string(r.registers) + " registers, " +
                std::to_string(r.stack_frame_bytes) + " B stack, " +
                std::to_string(r.spill_store_bytes) + " B spill stores, " +
                std::to_string(r.spill_load_bytes) + " B spill loads, " +
                std::to_string(r.shared_bytes) + " B shared";
      } else {
        what += " (not assembled by ptxas at build time)";
      }
      tier("ptx", v.ptx->file, v.ptx->size, v.ptx->sha256, what);
    }
    for (const InspectedTier& t : iv.tiers) {
      if (!t.problem.empty()) f.problems.push_back(v.name + " [" + t.tier + "]: " + t.problem);
    }
    f.variants.push_back(std::move(iv));
  }
  if (m.source_embedded) {
    const std::optional<std::string> source = find("source", m.source_file, 0, m.source_sha256);
    if (!source) {
      f.problems.push_back("the OpenCL C source (" + m.source_file + ") is not found");
    } else {
      f.source_bytes = source->size();
      f.bytes.source = *source;
      f.tier_bytes["source"] = source->size();
      if (sha256_hex(source->data(), source->size()) != m.source_sha256) {
        f.problems.push_back("the OpenCL C source does not match the SHA-256 its manifest "
                             "records");
      }
    }
  }
  return f;
}

InspectedFamily inspect_bundle(const fs::path& manifest_path) {
  const fs::path dir = manifest_path.parent_path();
  const std::string text = read_text(manifest_path);
  const Manifest m = Manifest::parse(text);
  // A bundle keeps the source as the product's embedding does: in the
  // generated .embed.cpp, whose kSource is the text compiled.
  return describe(m, text, dir.string(),
                  [&](const std::string& tier, const std::string& file, std::size_t,
                      const std::string&) -> std::optional<std::string> {
                    std::error_code ec;
                    if (tier != "source") {
                      if (!fs::exists(dir / file, ec)) return std::nullopt;
                      return read_text(dir / file);
                    }
                    const fs::path embed = dir / (m.family + ".embed.cpp");
                    if (!fs::exists(embed, ec)) return std::nullopt;
                    const std::string text = read_text(embed);
                    const std::string open = "kSource[] = R\"fatcl(";
                    const std::size_t at = text.find(open);
                    if (at == std::string::npos) return std::nullopt;
                    const std::size_t begin = at + open.size();
                    const std::size_t end = text.find(")fatcl\"", begin);
                    if (end == std::string::npos) return std::nullopt;
                    return text.substr(begin, end - begin);
                  });
}

// The NUL-terminated string of `bytes` that holds position `at`.
std::string_view c_string_around(std::string_view bytes, std::size_t at) {
  std::size_t begin = at;
  while (begin > 0 && bytes[begin - 1] != '\0') --begin;
  const std::size_t end = bytes.find('\0', at);
  return bytes.substr(begin, (end == std::string_view::npos ? bytes.size() : end) - begin);
}

std::vector<InspectedFamily> inspect_binary(const fs::path& path) {
  const std::string data = read_text(path);
  const std::string_view bytes = data;
  std::vector<InspectedFamily> out;
  // Every SPIR-V module's start (the magic word; at any offset: a static
  // library's members start on 2-byte boundaries) and every PTX text's.
  std::vector<std::size_t> modules, ptx;
  const char magic[4] = {0x03, 0x02, 0x23, 0x07};
  for (std::size_t at = bytes.find(std::string_view(magic, 4)); at != std::string_view::npos;
       at = bytes.find(std::string_view(magic, 4), at + 1)) {
    modules.push_back(at);
  }
  const std::string_view ptx_head = "//\n// Generated by LLVM NVPTX Back-End";
  for (std::size_t at = bytes.find(ptx_head); at != std::string_view::npos;
       at = bytes.find(ptx_head, at + 1)) {
    ptx.push_back(at);
  }
  const std::string_view format = "\"format\": \"fatcl-manifest\"";
  for (std::size_t at = bytes.find(format); at != std::string_view::npos;
       at = bytes.find(format, at + 1)) {
    // A manifest is a C string whose keys come sorted: only its own opening
    // brace comes before "format" (compile_flags and family hold none).
    const std::size_t start = bytes.rfind('{', at);
    if (start == std::string_view::npos) continue;
    const std::size_t end = bytes.find('\0', at);
    const std::string_view text =
        bytes.substr(start, (end == std::string_view::npos ? bytes.size() : end) - start);
    Manifest m;
    try {
      m = Manifest::parse(text);
    } catch (const Error&) {
      continue;  // the phrase, but no manifest (e.g. this very code's string)
    }
    out.push_back(describe(
        m, text, path.string() + detail::format(" (manifest at byte %zu)", start),
        [&](const std::string& tier, const std::string&, std::size_t size,
            const std::string& sha) -> std::optional<std::string> {
          if (tier == "source") {
            // The source is a C string holding its kernel; what precedes it
            // need not be a NUL, so each place it could start (a comment, a
            // directive, a declaration) is tried against its SHA-256.
            const std::string kernel = " " + m.kernel + "(";
            for (std::size_t k = bytes.find(kernel); k != std::string_view::npos;
                 k = bytes.find(kernel, k + 1)) {
              const std::string_view s = c_string_around(bytes, k);
              for (std::size_t b = 0; b <= std::size_t(bytes.data() + k - s.data()); ++b) {
                if (b > 0 && s[b - 1] != '\n' && std::strchr("/#_", s[b]) == nullptr) continue;
                const std::string_view candidate = s.substr(b);
                if (sha256_hex(candidate.data(), candidate.size()) == sha) {
                  return std::string(candidate);
                }
              }
            }
            return std::nullopt;
          }
          for (std::size_t start : tier == "spirv" ? modules : ptx) {
            if (start + size > bytes.size()) continue;
            const std::string_view candidate = bytes.substr(start, size);
            if (sha256_hex(candidate.data(), candidate.size()) == sha) {
              return std::string(candidate);
            }
          }
          return std::nullopt;
        }));
  }
  return out;
}

}  // namespace

InspectReport inspect_paths(const std::vector<fs::path>& paths) {
  InspectReport report;
  for (const fs::path& p : paths) {
    std::error_code ec;
    try {
      if (fs::is_directory(p, ec)) {
        if (!fs::exists(p / "manifest.json", ec)) {
          throw Error(p.string() + " holds no manifest.json (not a bundle folder)");
        }
        report.families.push_back(inspect_bundle(p / "manifest.json"));
      } else if (p.filename() == "manifest.json") {
        report.families.push_back(inspect_bundle(p));
      } else {
        if (!fs::exists(p, ec)) throw Error(p.string() + " does not exist");
        std::vector<InspectedFamily> found = inspect_binary(p);
        if (found.empty()) {
          throw Error(p.string() + " embeds no fatcl family (no manifest in its bytes)");
        }
        for (InspectedFamily& f : found) report.families.push_back(std::move(f));
      }
    } catch (const Error& e) {
      report.problems.push_back(e.what());
    }
  }
  return report;
}

std::string InspectReport::to_text() const {
  std::string out;
  std::map<std::string, std::size_t> all;
  for (const InspectedFamily& f : families) {
    const Manifest& m = f.manifest;
    out += "family " + m.family + " (kernel " + m.kernel + ", " +
           std::to_string(m.variants.size()) + " variants) in " + f.origin + "\n";
    out += "  made by " + m.generator;
    for (const auto& [tool, version] : m.toolchain) out += "; " + tool + ": " + version;
    out += "\n";
    if (m.source_embedded) {
      out += "  source: " + m.source_file + ", OpenCL C " + m.language + ", " +
             std::to_string(f.source_bytes) + " B, SHA-256 " + short_hash(m.source_sha256) +
             "...\n";
    } else {
      out += "  source: left out on purpose (NO_SOURCE): precompiled tiers only\n";
    }
    for (std::size_t i = 0; i < m.variants.size(); ++i) {
      const Variant& v = m.variants[i];
      std::string params;
      for (const auto& [k, val] : v.params) params += " " + k + "=" + std::to_string(val);
      const auto& wg = v.reqd_work_group_size;
      out += "  " + v.name + ":" + params + "; work-group " + std::to_string(wg[0]) + "x" +
             std::to_string(wg[1]) + "x" + std::to_string(wg[2]) + ", " +
             std::to_string(v.local_mem_bytes) + " B local memory\n";
      for (const InspectedTier& t : f.variants[i].tiers) {
        out += "    " + t.tier + ": " + std::to_string(t.bytes) + " B, SHA-256 " +
               short_hash(t.sha256) + "..., " + t.what +
               (t.problem.empty() ? "" : "; PROBLEM: " + t.problem) + "\n";
      }
      if (!v.ptx) {
        out += m.leaves_out("ptx") ? "    ptx: left out on purpose (TIERS)\n"
                                   : "    ptx: none (built without the PTX route)\n";
      }
    }
    out += "  size:";
    std::size_t total = 0;
    for (const auto& [tier, bytes] : f.tier_bytes) {
      out += " " + tier + " " + kib(bytes);
      total += bytes;
      all[tier] += bytes;
    }
    out += "; " + kib(total) + " in all\n";
    for (const std::string& p : f.problems) out += "  problem: " + p + "\n";
  }
  if (families.size() > 1) {
    out += std::to_string(families.size()) + " families:";
    std::size_t total = 0;
    for (const auto& [tier, bytes] : all) {
      out += " " + tier + " " + kib(bytes);
      total += bytes;
    }
    out += "; " + kib(total) + " in all\n";
  }
  for (const std::string& p : problems) out += "fatcl inspect: " + p + "\n";
  return out;
}

std::string InspectReport::to_json() const {
  json j = {{"ok", ok()}, {"families", json::array()}, {"problems", problems}};
  for (const InspectedFamily& f : families) {
    const Manifest& m = f.manifest;
    json family = {{"family", m.family},
                   {"kernel", m.kernel},
                   {"origin", f.origin},
                   {"generator", m.generator},
                   {"toolchain", m.toolchain},
                   {"language", m.language},
                   {"source_embedded", m.source_embedded},
                   {"tiers_left_out", m.tiers_left_out},
                   {"source_bytes", f.source_bytes},
                   {"source_sha256", m.source_sha256},
                   {"bytes_per_tier", f.tier_bytes},
                   {"problems", f.problems},
                   {"variants", json::array()}};
    for (std::size_t i = 0; i < m.variants.size(); ++i) {
      const Variant& v = m.variants[i];
      json params = json::object();
      for (const auto& [k, val] : v.params) params[k] = val;
      json tiers = json::array();
      for (const InspectedTier& t : f.variants[i].tiers) {
        json tier = {{"tier", t.tier},
                     {"bytes", t.bytes},
                     {"sha256", t.sha256},
                     {"what", t.what},
                     {"found", t.problem.empty() && !t.left_out},
                     {"left_out", t.left_out},
                     {"problem", t.problem}};
        if (t.tier == "spirv") {
          tier["spirv_version"] = v.spirv_version;
          tier["target_env"] = v.target_env;
          tier["capabilities"] = v.capabilities;
        } else if (t.tier == "ptx" && v.ptx) {
          tier["target"] = v.ptx->target;
          tier["ptx_version"] = v.ptx->ptx_version;
          if (v.ptx->ptxas) {
            const PtxasReport& r = *v.ptx->ptxas;
            tier["ptxas"] = {{"arch", r.arch},
                             {"registers", r.registers},
                             {"stack_frame_bytes", r.stack_frame_bytes},
                             {"spill_store_bytes", r.spill_store_bytes},
                             {"spill_load_bytes", r.spill_load_bytes},
                             {"shared_bytes", r.shared_bytes}};
          }
        }
        tiers.push_back(tier);
      }
      family["variants"].push_back({{"name", v.name},
                                    {"params", params},
                                    {"reqd_work_group_size", v.reqd_work_group_size},
                                    {"local_mem_bytes", v.local_mem_bytes},
                                    {"tiers", tiers}});
    }
    j["families"].push_back(family);
  }
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace fatcl
