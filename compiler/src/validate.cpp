// Offline validation of kernel bundles: every module by SPIRV-Tools, every
// manifest entry against its module. One problem per line, never a throw.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"

namespace fs = std::filesystem;

namespace fatcl {
namespace {

constexpr const char* kManifestName = "manifest.json";

// The first line of a message, at most 300 characters: problems are lines.
std::string one_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  // Validator messages follow on indented lines: keep the first of them.
  const std::size_t nl = text.find('\n');
  if (nl != std::string::npos && nl + 1 < text.size()) {
    std::string next = text.substr(nl + 1, text.find('\n', nl + 1) - nl - 1);
    next.erase(0, next.find_first_not_of(' '));
    if (!next.empty()) line += " " + next;
  }
  if (line.size() > 300) line = line.substr(0, 300) + " ...";
  return line;
}

std::string list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& i : items) out += (out.size() > 1 ? ", " : "") + i;
  return out + "]";
}

std::string triple(const std::array<std::size_t, 3>& v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

class Validator {
 public:
  ValidationReport report;
  BarrierCheck barriers = BarrierCheck::Refuse;

  void path(const fs::path& p) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) return folder(p);
    if (!fs::exists(p, ec)) return problem(p, "", "read", "no such file or folder");
    if (p.filename() == kManifestName || p.extension() == ".json") {
      manifest_file(p);
    } else {
      lone_module(p);
    }
  }

 private:
  std::set<std::string> seen_;  // modules already checked (a folder and its files)

  void problem(const fs::path& file, const std::string& variant, const std::string& check,
               const std::string& message) {
    report.problems.push_back({file.string(), variant, check, one_line(message)});
  }

  // The file's bytes, or nullopt with a problem recorded.
  std::optional<std::string> read(const fs::path& file, const std::string& variant) {
    try {
      return read_text(file);
    } catch (const Error& e) {
      std::error_code ec;
      problem(file, variant, "read", fs::exists(file, ec) ? e.what() : "missing");
      return std::nullopt;
    }
  }

  std::optional<Manifest> parse_manifest(const fs::path& file) {
    auto text = read(file, "");
    if (!text) return std::nullopt;
    try {
      return Manifest::parse(*text);
    } catch (const std::exception& e) {  // fatcl::Error, or anything the JSON library throws
      std::string why = e.what();
      if (why.rfind("manifest: ", 0) == 0) why.erase(0, 10);  // the file is named already
      const bool said = why.rfind("not a fatcl manifest", 0) == 0;
      problem(file, "", "manifest", said ? why : "not a fatcl manifest: " + why);
    }
    return std::nullopt;
  }

  void folder(const fs::path& dir) {
    const fs::path manifest = dir / kManifestName;
    std::error_code ec;
    if (!fs::exists(manifest, ec)) {
      return problem(dir, "", "manifest", "no manifest.json: not a fatcl bundle folder");
    }
    // A module in the folder that the manifest does not list is not shipped
    // by it: say so rather than pass over it.
    std::set<std::string> listed;
    if (const std::optional<Manifest> m = manifest_file(manifest)) {
      for (const Variant& v : m->variants) {
        listed.insert(v.spirv_file);
        if (v.ptx) listed.insert(v.ptx->file);
      }
    }
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const fs::path ext = entry.path().extension();
      if ((ext == ".spv" || ext == ".ptx") && listed.count(entry.path().filename().string()) == 0) {
        problem(entry.path(), "", "manifest", "not listed in " + manifest.string());
      }
    }
  }

  std::optional<Manifest> parse_manifest_quietly(const fs::path& file) {
    try {
      return Manifest::parse(read_text(file));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // Checks a manifest and every module it lists; returns it if it parsed.
  // Manifest::parse has refused repeated variant names, module files named
  // twice and file names that are not plain names beside the manifest.
  std::optional<Manifest> manifest_file(const fs::path& file) {
    std::optional<Manifest> m = parse_manifest(file);
    if (!m) return m;
    for (const Variant& v : m->variants) {
      module_against(file.parent_path() / v.spirv_file, *m, v, file);
      if (v.ptx) ptx_against(file.parent_path(), *m, v, file);
    }
    return m;
  }

  // A variant's PTX file against its manifest record: name, size, SHA-256,
  // .version, .target and the kernel's .entry (ptxas ran when it was built,
  // where the build had one; the record keeps its report).
  void ptx_against(const fs::path& dir, const Manifest& m, const Variant& v,
                   const fs::path& manifest) {
    const PtxModule& ptx = *v.ptx;
    const fs::path file = dir / ptx.file;
    auto text = read(file, v.name);
    if (!text) return;
    const std::string from = " (" + manifest.filename().string() + " says ";
    if (text->size() != ptx.size) {
      problem(file, v.name, "ptx",
              "PTX of " + std::to_string(text->size()) + " bytes" + from +
                  std::to_string(ptx.size) + ")");
    }
    if (sha256_hex(text->data(), text->size()) != ptx.sha256) {
      problem(file, v.name, "ptx",
              "the PTX's SHA-256 differs from the manifest's: changed after the manifest was "
              "written, or the manifest is stale");
    }
    try {
      const PtxInfo info = inspect_ptx(*text, m.kernel);
      if (info.version != ptx.ptx_version || info.target != ptx.target) {
        problem(file, v.name, "ptx",
                "the PTX is .version " + info.version + " .target " + info.target + from +
                    ptx.ptx_version + " " + ptx.target + ")");
      }
    } catch (const Error& e) {
      problem(file, v.name, "ptx", e.what());
    }
  }

  void lone_module(const fs::path& file) {
    // A manifest beside it that lists it: check against that entry.
    const fs::path manifest = file.parent_path() / kManifestName;
    std::error_code ec;
    if (fs::exists(manifest, ec)) {
      if (auto m = parse_manifest_quietly(manifest)) {
        for (const Variant& v : m->variants) {
          if (v.spirv_file == file.filename().string()) {
            return module_against(file, *m, v, manifest);
          }
        }
      }
    }
    auto bytes = read(file, "");
    if (!bytes) return;
    auto words = words_of(file, "", *bytes);
    if (!words) return;
    ModuleInfo info;
    try {
      info = inspect_module(*words, "");
      validate_module(*words, info.target_env);
    } catch (const Error& e) {
      return problem(file, "", "spirv-val", e.what());
    }
    const std::size_t before = report.problems.size();
    barrier_check(file, "", *words);
    if (report.problems.size() != before) return;
    seen_.insert(fs::weakly_canonical(file, ec).string());
    report.valid.push_back({file.string(), "", info.target_env, info.version});
  }

  // A barrier only some work-items may reach: a problem, or a warning.
  void barrier_check(const fs::path& file, const std::string& variant,
                     const std::vector<std::uint32_t>& words) {
    if (barriers == BarrierCheck::Off) return;
    try {
      for (const std::string& found : divergent_barriers(words)) {
        const ValidationProblem p{file.string(), variant, "barrier",
                                  found + " (OpenCL requires every work-item of a group to "
                                          "reach each barrier)"};
        (barriers == BarrierCheck::Refuse ? report.problems : report.warnings).push_back(p);
      }
    } catch (const Error& e) {
      problem(file, variant, "barrier", e.what());
    }
  }

  // The bytes as SPIR-V words, or nullopt with a problem recorded.
  std::optional<std::vector<std::uint32_t>> words_of(const fs::path& file,
                                                     const std::string& variant,
                                                     const std::string& bytes) {
    if (bytes.size() % 4 != 0) {
      problem(file, variant, "spirv",
              "not a SPIR-V module: " + std::to_string(bytes.size()) +
                  " bytes is not a whole number of 4-byte words (truncated or foreign)");
      return std::nullopt;
    }
    std::vector<std::uint32_t> words(bytes.size() / 4);
    if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
    const std::string header = module_header_problem(words);
    if (!header.empty()) {
      problem(file, variant, "spirv", header);
      return std::nullopt;
    }
    return words;
  }

  void module_against(const fs::path& file, const Manifest& m, const Variant& v,
                      const fs::path& manifest) {
    std::error_code ec;
    if (!seen_.insert(fs::weakly_canonical(file, ec).string()).second) return;
    const std::size_t before = report.problems.size();
    auto bytes = read(file, v.name);
    if (!bytes) return;
    const std::string from = " (" + manifest.filename().string() + " says ";
    if (bytes->size() != v.spirv_size) {
      const bool shorter = bytes->size() < v.spirv_size;
      problem(file, v.name, "size",
              std::string(shorter ? "truncated: " : "size differs: ") +
                  std::to_string(bytes->size()) + " bytes" + from + std::to_string(v.spirv_size) +
                  ")");
    }
    const std::string sha = sha256_hex(bytes->data(), bytes->size());
    if (sha != v.sha256) {
      problem(file, v.name, "sha256",
              "SHA-256 " + sha.substr(0, 16) + "... differs from the manifest's " +
                  v.sha256.substr(0, 16) +
                  "...: the module was changed after the manifest was written, or the "
                  "manifest is stale");
    }
    auto words = words_of(file, v.name, *bytes);
    if (!words) return;
    try {
      validate_module(*words, v.target_env);
    } catch (const Error& e) {
      return problem(file, v.name, "spirv-val", e.what());
    }
    ModuleInfo info;
    try {
      info = inspect_module(*words, m.kernel);
    } catch (const Error& e) {
      return problem(file, v.name, "inspect", e.what());
    }
    auto differs = [&](const std::string& check, const std::string& module_value,
                       const std::string& manifest_value) {
      if (module_value != manifest_value) {
        problem(file, v.name, check,
                check + " differs: the module has " + module_value + from + manifest_value + ")");
      }
    };
    if (std::find(info.entry_points.begin(), info.entry_points.end(), m.kernel) ==
        info.entry_points.end()) {
      problem(file, v.name, "entry-point",
              "the module has no kernel \"" + m.kernel +
                  "\" (its kernels: " + list(info.entry_points) + ")");
    }
    differs("spirv_version", info.version, v.spirv_version);
    differs("reqd_work_group_size", triple(info.reqd_work_group_size),
            triple(v.reqd_work_group_size));
    differs("local_mem_bytes", std::to_string(info.local_mem_bytes),
            std::to_string(v.local_mem_bytes));
    if (v.program_local_mem_bytes > 0) {
      differs("program_local_mem_bytes", std::to_string(info.program_local_mem_bytes),
              std::to_string(v.program_local_mem_bytes));
    }
    differs("capabilities", list(info.capabilities), list(v.capabilities));
    barrier_check(file, v.name, *words);
    if (report.problems.size() == before) {
      report.valid.push_back({file.string(), v.name, v.target_env, info.version});
    }
  }
};

}  // namespace

ValidationReport validate_paths(const std::vector<fs::path>& paths, BarrierCheck barriers) {
  Validator validator;
  validator.barriers = barriers;
  for (const fs::path& p : paths) {
    try {
      validator.path(p);
    } catch (const std::exception& e) {
      // Filesystem errors (permissions) and the like: still one line.
      validator.report.problems.push_back({p.string(), "", "read", one_line(e.what())});
    }
  }
  if (validator.report.valid.empty() && validator.report.problems.empty()) {
    validator.report.problems.push_back(
        {"", "", "input", paths.empty() ? "no paths given" : "no SPIR-V module found"});
  }
  return validator.report;
}

std::string ValidationReport::to_text() const {
  std::string out;
  for (const ValidatedModule& v : valid) {
    out += "ok: " + v.file + ": " + (v.variant.empty() ? "" : v.variant + ", ") + "SPIR-V " +
           v.spirv_version + ", valid under " + v.target_env +
           (v.variant.empty() ? " (no manifest lists it)" : ", matches its manifest entry") + "\n";
  }
  for (const ValidationProblem& p : problems) {
    out += (p.file.empty() ? std::string("fatcl validate") : p.file) + ": " +
           (p.variant.empty() ? "" : "variant " + p.variant + ": ") + p.message + "\n";
  }
  for (const ValidationProblem& p : warnings) {
    out += "warning: " + p.file + ": " + (p.variant.empty() ? "" : "variant " + p.variant + ": ") +
           p.message + "\n";
  }
  return out;
}

std::string ValidationReport::to_json() const {
  nlohmann::json j = {
      {"ok", ok()}, {"valid", nlohmann::json::array()}, {"problems", nlohmann::json::array()}};
  for (const ValidatedModule& v : valid) {
    j["valid"].push_back({{"file", v.file},
                          {"variant", v.variant},
                          {"target_env", v.target_env},
                          {"spirv_version", v.spirv_version}});
  }
  for (const ValidationProblem& p : problems) {
    j["problems"].push_back(
        {{"file", p.file}, {"variant", p.variant}, {"check", p.check}, {"message", p.message}});
  }
  j["warnings"] = nlohmann::json::array();
  for (const ValidationProblem& p : warnings) {
    j["warnings"].push_back(
        {{"file", p.file}, {"variant", p.variant}, {"check", p.check}, {"message", p.message}});
  }
  // Replace invalid UTF-8 (a foreign file's name) instead of throwing.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fatcl
