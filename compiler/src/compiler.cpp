#include "fatcl/compiler.hpp"

#include <spirv-tools/libspirv.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "fatcl/detail/atomic_file.hpp"
#include "fatcl/detail/format.hpp"
#include "fatcl/detail/process.hpp"
#include "fatcl/error.hpp"
#include "ptx.hpp"

namespace fs = std::filesystem;

namespace fatcl {
namespace {

using detail::run_tool;

constexpr const char* kGenerator = "fatcl-compile 0.1.0";
constexpr const char* kLanguage = "CL1.2";
// The SPIR-V route: clang at -O0 (its blocks in source order, which
// SPIR-V's dominance rule needs; -O1 and up reorder loop blocks or write
// `freeze`, which llvm-spirv-15 cannot translate), then opt's clean-up
// without loop passes: private arrays and scalars out of memory into
// registers. Drivers optimise a module when they build it, but not all
// recover from -O0's memory traffic: Intel's CPU runtime ran the -O0
// modules of the CPU-shaped blocked points at 0.6-0.8 of their source
// builds in AVX2 code, the cleaned modules at parity.
const std::vector<std::string> kClangFlags = {
    "-cl-std=CL1.2",       "-target", "spir64-unknown-unknown",  "-O0", "-Xclang",
    "-disable-O0-optnone", "-Xclang", "-finclude-default-header"};
const char* const kSpirvPasses = "sroa,instcombine,simplifycfg";

std::string first_line_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) {
      line.erase(0, line.find_first_not_of(" \t"));
      return line;
    }
  }
  return "";
}

fs::path find_include(const std::string& name, const fs::path& from,
                      const std::vector<fs::path>& include_dirs) {
  std::vector<fs::path> dirs{from.parent_path()};
  dirs.insert(dirs.end(), include_dirs.begin(), include_dirs.end());
  for (const fs::path& d : dirs) {
    fs::path candidate = d / name;
    if (fs::is_regular_file(candidate)) return fs::weakly_canonical(candidate);
  }
  return {};
}

void inline_file(const fs::path& file, const std::vector<fs::path>& include_dirs,
                 std::set<fs::path>& seen, std::vector<fs::path>& inputs, std::string& out,
                 bool& inlined_any) {
  seen.insert(fs::weakly_canonical(file));
  inputs.push_back(file);
  std::string text = read_text(file);
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::string trimmed = line.substr(std::min(line.size(), line.find_first_not_of(" \t")));
    std::size_t q1 = std::string::npos;
    if (trimmed.rfind("#include", 0) == 0) q1 = trimmed.find('"');
    if (q1 == std::string::npos) {
      out += line + "\n";
      continue;
    }
    std::size_t q2 = trimmed.find('"', q1 + 1);
    std::string name = trimmed.substr(q1 + 1, q2 - q1 - 1);
    fs::path header = find_include(name, file, include_dirs);
    if (header.empty()) {
      throw Error(file.string() + ":" + std::to_string(line_no) + ": #include \"" + name +
                  "\" not found (searched next to the file and the include directories)");
    }
    inlined_any = true;
    if (seen.count(header) == 0) {
      out += "#line 1 \"" + header.filename().string() + "\"\n";
      inline_file(header, include_dirs, seen, inputs, out, inlined_any);
    }
    out += "#line " + std::to_string(line_no + 1) + " \"" + file.filename().string() + "\"\n";
  }
}

std::string hex_byte_table(const std::vector<std::uint32_t>& words) {
  std::string out;
  char buf[8];
  std::size_t n = 0;
  for (std::uint32_t w : words) {
    for (int b = 0; b < 4; ++b) {
      std::snprintf(buf, sizeof buf, "0x%02x,", (w >> (8 * b)) & 0xffu);
      out += (n % 16 == 0) ? "\n    " : " ";
      out += buf;
      ++n;
    }
  }
  return out;
}

std::string raw_string(const std::string& text, const std::string& what) {
  const std::string delim = "fatcl";
  if (text.find(")" + delim + "\"") != std::string::npos) {
    throw Error(what + " contains the raw-string terminator )" + delim + "\"");
  }
  return "R\"" + delim + "(" + text + ")" + delim + "\"";
}

}  // namespace

std::map<std::string, std::string> Toolchain::versions() const {
  std::map<std::string, std::string> v;
  v["clang"] = first_line_with(run_tool({clang, "--version"}, clang).output, "version");
  v["llvm-spirv"] =
      first_line_with(run_tool({llvm_spirv, "--version"}, llvm_spirv).output, "version");
  v["opt"] = first_line_with(run_tool({opt, "--version"}, opt).output, "version");
  v["spirv-tools"] = spvSoftwareVersionString();
  if (makes_ptx()) v["llc"] = first_line_with(run_tool({llc, "--version"}, llc).output, "version");
  if (makes_ptx() && !ptxas.empty()) {
    v["ptxas"] = first_line_with(run_tool({ptxas, "--version"}, ptxas).output, "release");
  }
  return v;
}

std::string variant_name(const std::string& family, const ParamPoint& params) {
  std::string name = family;
  for (const auto& [k, v] : params) {
    name += "_" + k + (v < 0 ? "m" + std::to_string(-v) : std::to_string(v));
  }
  return name;
}

std::string self_contained_source(const fs::path& source, const std::vector<fs::path>& include_dirs,
                                  std::vector<fs::path>* inputs) {
  std::set<fs::path> seen;
  std::vector<fs::path> read;
  std::string body;
  bool inlined_any = false;
  inline_file(source, include_dirs, seen, read, body, inlined_any);
  if (inputs) *inputs = read;
  if (!inlined_any) return body;
  return "#line 1 \"" + source.filename().string() + "\"\n" + body;
}

namespace {

// A folder in /tmp for one variant's intermediate files, removed with it.
class ScratchDir {
 public:
  ScratchDir() {
    char dir_template[] = "/tmp/fatcl-compile-XXXXXX";
    if (!mkdtemp(dir_template))
      throw Error(std::string("cannot create a temporary folder in /tmp: ") + std::strerror(errno));
    path_ = dir_template;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// clang-15 -> opt-15 -> llvm-spirv-15 on the self-contained copy `cl`.
std::vector<std::uint32_t> compile_spirv(const Toolchain& toolchain, const VariantRequest& request,
                                         const fs::path& cl, const fs::path& dir) {
  std::vector<std::string> clang{toolchain.clang};
  clang.insert(clang.end(), kClangFlags.begin(), kClangFlags.end());
  for (const auto& [k, v] : request.params) clang.push_back("-D" + k + "=" + std::to_string(v));
  clang.insert(clang.end(), request.extra_clang_flags.begin(), request.extra_clang_flags.end());
  clang.insert(clang.end(), {"-emit-llvm", "-c", cl.string(), "-o", (dir / "k0.bc").string()});
  run_tool(clang, "clang");
  run_tool({toolchain.opt, std::string("-passes=") + kSpirvPasses, (dir / "k0.bc").string(), "-o",
            (dir / "k.bc").string()},
           "opt");
  run_tool({toolchain.llvm_spirv, "--spirv-max-version=" + request.spirv_max_version,
            (dir / "k.bc").string(), "-o", (dir / "k.spv").string()},
           "llvm-spirv");
  return read_spirv(dir / "k.spv");
}

// The family-level fields of a variant's manifest: how it was compiled.
void describe_compile(const Toolchain& toolchain, const VariantRequest& request,
                      const std::string& source, Manifest& m) {
  m.generator = kGenerator;
  m.family = request.family;
  m.kernel = request.kernel;
  m.source_file = request.source.filename().string();
  m.source_sha256 = sha256_hex(source.data(), source.size());
  m.language = kLanguage;
  m.compile_flags = kClangFlags;
  m.compile_flags.insert(m.compile_flags.end(), request.extra_clang_flags.begin(),
                         request.extra_clang_flags.end());
  m.compile_flags.push_back(std::string("opt:-passes=") + kSpirvPasses);
  m.compile_flags.push_back("llvm-spirv:--spirv-max-version=" + request.spirv_max_version);
  if (toolchain.makes_ptx()) {
    m.compile_flags.push_back("ptx:-target nvptx64-nvidia-nvcl -O3, libclc " +
                              fs::path(toolchain.libclc_nvptx).filename().string() +
                              ", opt -O3, llc -mcpu=" + toolchain.ptx_cpu);
  }
  m.toolchain =
      request.toolchain_versions.empty() ? toolchain.versions() : request.toolchain_versions;
}

}  // namespace

CompiledVariant compile_variant(const Toolchain& toolchain, const VariantRequest& request) {
  const std::string name = variant_name(request.family, request.params);
  CompiledVariant out;
  try {
    const std::string source =
        self_contained_source(request.source, request.include_dirs, &out.inputs);
    // Compile the self-contained text itself, so that the SPIR-V tier and the
    // source fallback build exactly the same OpenCL C.
    const ScratchDir scratch;
    const fs::path& dir = scratch.path();
    // clang picks the language by the extension: the copy always ends in .cl.
    fs::path cl = dir / request.source.filename();
    if (cl.extension() != ".cl") cl += ".cl";
    detail::write_file_atomic(cl, source);
    out.spirv = compile_spirv(toolchain, request, cl, dir);

    ModuleInfo info = inspect_module(out.spirv, request.kernel);
    if (std::find(info.entry_points.begin(), info.entry_points.end(), request.kernel) ==
        info.entry_points.end()) {
      std::string have;
      for (const std::string& e : info.entry_points) have += (have.empty() ? "" : ", ") + e;
      throw Error("the module has no kernel \"" + request.kernel + "\" (it has: " + have + ")");
    }
    validate_module(out.spirv, info.target_env);
    if (request.barrier_check != BarrierCheck::Off) {
      for (const std::string& found : divergent_barriers(out.spirv)) {
        const std::string said =
            found + " (OpenCL requires every work-item of a group to reach each barrier)";
        if (request.barrier_check == BarrierCheck::Refuse) {
          throw Error(said + "; BARRIER_CHECK warn (fatcl-compile --barrier-check warn) builds "
                             "it anyway");
        }
        out.warnings.push_back(said);
      }
    }

    describe_compile(toolchain, request, source, out.manifest);
    Variant v;
    v.name = name;
    v.params = request.params;
    v.spirv_file = name + ".spv";
    v.spirv_version = info.version;
    v.target_env = info.target_env;
    v.capabilities = info.capabilities;
    v.reqd_work_group_size = info.reqd_work_group_size;
    v.local_mem_bytes = info.local_mem_bytes;
    v.program_local_mem_bytes = info.program_local_mem_bytes;
    v.spirv_size = out.spirv.size() * 4;
    v.sha256 = sha256_hex(out.spirv.data(), v.spirv_size);
    if (toolchain.makes_ptx()) {
      detail::PtxBuild ptx = detail::compile_ptx(toolchain, request, kLanguage, name, cl, dir);
      out.ptx = std::move(ptx.text);
      v.ptx = ptx.module;
    }
    out.manifest.variants.push_back(v);
  } catch (const Error& e) {
    throw Error("variant " + name + ": " + e.what(), e.cl_code());
  }
  return out;
}

namespace {

// The bundle's manifest: the variants' records, checked to come from one
// source, toolchain and set of flags and to match their bytes.
Manifest bundle_manifest(const BundleInput& input) {
  if (input.variants.empty()) throw Error("bundle: no variants given");
  Manifest m = input.variants.front().manifest;
  m.variants.clear();
  for (const CompiledVariant& cv : input.variants) {
    const Manifest& vm = cv.manifest;
    const std::vector<std::uint32_t>& words = cv.spirv;
    if (vm.variants.size() != 1) throw Error("bundle: a variant record must hold one variant");
    const Variant& v = vm.variants.front();
    if (vm.family != m.family || vm.kernel != m.kernel || vm.compile_flags != m.compile_flags ||
        vm.toolchain != m.toolchain || vm.source_sha256 != m.source_sha256) {
      throw Error("bundle: variant " + v.name +
                  " was built from another source, toolchain or flags than " +
                  input.variants.front().manifest.variants.front().name + "; rebuild all variants");
    }
    if (sha256_hex(words.data(), words.size() * 4) != v.sha256) {
      throw Error("bundle: " + v.spirv_file + " does not match the SHA-256 in its record");
    }
    if (v.ptx.has_value() != !cv.ptx.empty() ||
        (v.ptx && sha256_hex(cv.ptx.data(), cv.ptx.size()) != v.ptx->sha256)) {
      throw Error("bundle: the PTX of " + v.name + " does not match its record");
    }
    for (const Variant& other : m.variants) {
      if (other.name == v.name) throw Error("bundle: variant " + v.name + " is given twice");
    }
    m.variants.push_back(v);
  }
  if (sha256_hex(input.source.data(), input.source.size()) != m.source_sha256) {
    throw Error("bundle: the source differs from the one the variants were compiled from");
  }
  // NO_SOURCE: the product carries no OpenCL C; TIERS: nor these tiers'
  // code. The manifest says so.
  m.source_embedded = input.embed_source;
  for (const std::string& t : input.tiers_left_out) {
    if (t != "spirv" && t != "ptx") {
      throw Error("bundle: \"" + t + "\" is not a precompiled tier to leave out (spirv, ptx)");
    }
    if (!m.leaves_out(t)) m.tiers_left_out.push_back(t);
  }
  if (input.launch) {
    try {
      input.launch->check(m.variants);
    } catch (const Error& e) {
      throw Error("family " + m.family + ": the launch description does not fit: " + e.what());
    }
    m.launch = input.launch;
  }
  if (m.leaves_out("ptx")) {
    for (Variant& v : m.variants) v.ptx.reset();
  }
  return m;
}

std::string embed_header(const Manifest& m, const std::string& stamp, const std::string& ns) {
  return "// " + stamp + "\n#pragma once\n\n#include <fatcl/embedded.hpp>\n\n" + "namespace " + ns +
         " {\n\n// Manifest, OpenCL C source and SPIR-V of " + "the kernel family " + m.family +
         ".\nconst fatcl::EmbeddedFamily& " + m.family + "();\n\n}  // namespace " + ns + "\n";
}

// The tables of modules and PTX texts, and the accessor.
std::string embed_tables(const Manifest& m, const std::string& ns) {
  std::string cpp;
  std::string modules = "nullptr, 0";
  if (!m.leaves_out("spirv")) {
    cpp += "const fatcl::EmbeddedModule kModules[] = {\n";
    for (std::size_t i = 0; i < m.variants.size(); ++i) {
      cpp += "    {\"" + m.variants[i].name + "\", kModule" + std::to_string(i) +
             ", sizeof kModule" + std::to_string(i) + "},\n";
    }
    cpp += "};\n\n";
    modules = "kModules, sizeof kModules / sizeof kModules[0]";
  }
  // PTX text, sized without the literal's final NUL (which stays after it).
  std::string ptx_modules = "nullptr, 0";
  std::size_t ptx_count = 0;
  for (std::size_t i = 0; i < m.variants.size(); ++i) {
    if (!m.variants[i].ptx) continue;
    if (ptx_count++ == 0) cpp += "const fatcl::EmbeddedModule kPtxModules[] = {\n";
    cpp += "    {\"" + m.variants[i].name + "\", reinterpret_cast<const unsigned char*>(kPtx" +
           std::to_string(i) + "), sizeof kPtx" + std::to_string(i) + " - 1},\n";
  }
  if (ptx_count > 0) {
    cpp += "};\n\n";
    ptx_modules = "kPtxModules, sizeof kPtxModules / sizeof kPtxModules[0]";
  }
  return cpp + "}  // namespace\n\nnamespace " + ns + " {\n\nconst fatcl::EmbeddedFamily& " +
         m.family + "() {\n  static const fatcl::EmbeddedFamily family{\n" +
         "      kManifest, sizeof kManifest - 1, kSource, sizeof kSource - 1,\n      " + modules +
         ",\n      " + ptx_modules +
         "};\n  return family;\n}\n\n" + "}  // namespace " + ns + "\n";
}

// The embedding source: each module as bytes, each PTX, the source (or
// none) and the manifest as raw strings, then the tables.
std::string embed_source(const Manifest& m, const BundleInput& input, const std::string& stamp,
                         const std::string& manifest_json) {
  std::string cpp = "// " + stamp + "\n#include \"" + m.family + ".hpp\"\n\nnamespace {\n\n";
  for (std::size_t i = 0; i < input.variants.size(); ++i) {
    const auto& words = input.variants[i].spirv;
    if (!m.leaves_out("spirv")) {
      cpp += "// " + m.variants[i].name + ", SHA-256 " + m.variants[i].sha256 + "\n";
      cpp += "alignas(4) const unsigned char kModule" + std::to_string(i) + "[" +
             std::to_string(words.size() * 4) + "] = {" + hex_byte_table(words) + "\n};\n\n";
    }
    if (const std::optional<PtxModule>& ptx = m.variants[i].ptx) {
      cpp += "// " + ptx->file + ", SHA-256 " + ptx->sha256 + "\n";
      cpp += "const char kPtx" + std::to_string(i) +
             "[] = " + raw_string(input.variants[i].ptx, ptx->file) + ";\n\n";
    }
  }
  cpp += "const char kSource[] = " +
         (input.embed_source ? raw_string(input.source, m.source_file) : std::string("\"\"")) +
         ";\n\n";
  cpp += "const char kManifest[] = " + raw_string(manifest_json, "the manifest") + ";\n\n";
  return cpp + embed_tables(m, input.cpp_namespace);
}

// Modules of variants the grid no longer has would make the folder
// disagree with its manifest (fatcl validate reports them).
void remove_unlisted_modules(const Manifest& m, const fs::path& out_dir) {
  std::set<std::string> listed;
  for (const Variant& v : m.variants) {
    listed.insert(v.spirv_file);
    if (v.ptx) listed.insert(v.ptx->file);
  }
  std::error_code ec;
  for (fs::directory_iterator it(out_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const fs::path ext = it->path().extension();
    if ((ext == ".spv" || ext == ".ptx") && !listed.count(name)) {
      std::error_code removed;
      if (!fs::remove(it->path(), removed) && removed) {
        throw Error("cannot remove the stale module " + it->path().string() + ": " +
                    removed.message());
      }
    }
  }
  if (ec) throw Error("cannot list the bundle folder " + out_dir.string() + ": " + ec.message());
}

}  // namespace

Manifest write_bundle(const BundleInput& input, const fs::path& out_dir) {
  const Manifest m = bundle_manifest(input);
  const std::string stamp =
      "Generated by " + m.generator + " from " + m.source_file + "; do not edit.";
  const std::string manifest_json = m.dump();
  const std::string header = embed_header(m, stamp, input.cpp_namespace);
  const std::string cpp = embed_source(m, input, stamp, manifest_json);
  if (std::error_code ec; !fs::create_directories(out_dir, ec) && ec) {
    throw Error("cannot create the bundle folder " + out_dir.string() + ": " + ec.message());
  }
  for (std::size_t i = 0; i < m.variants.size(); ++i) {
    const auto& words = input.variants[i].spirv;
    detail::write_file_atomic(
        out_dir / m.variants[i].spirv_file,
        std::string_view(reinterpret_cast<const char*>(words.data()), words.size() * 4));
    if (m.variants[i].ptx) {
      detail::write_file_atomic(out_dir / m.variants[i].ptx->file, input.variants[i].ptx);
    }
  }
  detail::write_file_atomic(out_dir / (m.family + ".hpp"), header);
  detail::write_file_atomic(out_dir / (m.family + ".embed.cpp"), cpp);
  detail::write_file_atomic(out_dir / "manifest.json", manifest_json);
  remove_unlisted_modules(m, out_dir);
  return m;
}

std::string read_text(const fs::path& path) {
  // (A folder opens as an empty stream on Linux: say what it is.)
  if (std::error_code ec; fs::is_directory(path, ec)) {
    throw Error(path.string() + " is a folder, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::uint32_t> read_spirv(const fs::path& path) {
  std::string bytes = read_text(path);
  if (bytes.size() % 4 != 0 || bytes.size() < 20) {
    throw Error(path.string() + " is not a SPIR-V module (" + std::to_string(bytes.size()) +
                " bytes: " +
                (bytes.size() % 4 ? "not a whole number of words" : "shorter than a header") + ")");
  }
  std::vector<std::uint32_t> words(bytes.size() / 4);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(words.data()));
  return words;
}

}  // namespace fatcl

namespace fatcl {

namespace {

// The names that become file names, C++ names and tool arguments, checked
// before any tool runs.
void check_request(const Toolchain& toolchain, const FamilyRequest& request) {
  auto name = [](const std::string& what, const std::string& value) {
    if (!is_identifier(value) || value.size() > 200) {
      throw Error(what + " \"" + value.substr(0, 60) + (value.size() > 60 ? "..." : "") +
                  "\" is not a name of letters, digits and _ (at most 200, not starting with a " +
                  "digit): it becomes file and C++ names");
    }
  };
  name("family", request.base.family);
  name("kernel", request.base.kernel);
  std::string ns = request.cpp_namespace;
  for (std::size_t at = 0;;) {
    const std::size_t end = ns.find("::", at);
    const std::string part = ns.substr(at, end == std::string::npos ? end : end - at);
    if (!is_identifier(part)) {
      throw Error("namespace \"" + ns.substr(0, 60) +
                  "\" is not a C++ namespace (names of letters, digits and _ joined by ::)");
    }
    if (end == std::string::npos) break;
    at = end + 2;
  }
  const std::string& arch = toolchain.ptx_arch;
  if (arch.size() < 4 || arch.size() > 12 || arch.compare(0, 3, "sm_") != 0 ||
      !std::all_of(arch.begin() + 3, arch.end(),
                   [](unsigned char c) { return std::isdigit(c) || std::islower(c); })) {
    throw Error("PTX architecture \"" + arch.substr(0, 60) + "\" is not of the form sm_90");
  }
  std::error_code ec;
  if (!fs::is_regular_file(request.base.source, ec)) {
    throw Error("source " + request.base.source.string() + " is not a file");
  }
}

}  // namespace

CompiledFamily compile_family(const Toolchain& toolchain, const FamilyRequest& request,
                              const fs::path& out_dir) {
  check_request(toolchain, request);
  CompiledFamily out;
  std::vector<ParamPoint> points;
  try {
    points = expand_grid(request.grid, &out.dropped);
  } catch (const Error& e) {
    throw Error("family " + request.base.family + ": " + e.what());
  }
  if (points.empty()) points.push_back({});  // a family without parameters
  VariantRequest base = request.base;
  base.toolchain_versions = toolchain.versions();

  std::vector<std::optional<CompiledVariant>> compiled(points.size());
  std::vector<std::string> failures(points.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < points.size(); i = next++) {
      VariantRequest r = base;
      r.params = points[i];
      try {
        compiled[i] = compile_variant(toolchain, r);
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    }
  };
  unsigned jobs = request.jobs ? request.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, points.size()));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();

  std::string failed;
  for (const std::string& f : failures) {
    if (!f.empty()) failed += (failed.empty() ? "" : "\n") + f;
  }
  if (!failed.empty()) throw Error(failed);

  BundleInput input;
  input.cpp_namespace = request.cpp_namespace;
  input.embed_source = request.embed_source;
  input.tiers_left_out = request.tiers_left_out;
  input.launch = request.launch;
  input.source = self_contained_source(base.source, base.include_dirs, &out.inputs);
  for (std::optional<CompiledVariant>& v : compiled) {
    for (const std::string& w : v->warnings) {
      out.warnings.push_back("variant " + v->manifest.variants.front().name + ": " + w);
    }
    input.variants.push_back(std::move(*v));
  }
  out.manifest = write_bundle(input, out_dir);
  for (const Variant& v : out.manifest.variants) {
    if (!out.manifest.leaves_out("spirv")) out.embedded_bytes["spirv"] += v.spirv_size;
    if (v.ptx) out.embedded_bytes["ptx"] += v.ptx->size;
  }
  if (out.manifest.source_embedded) out.embedded_bytes["source"] = input.source.size();
  return out;
}

std::string CompiledFamily::size_report() const {
  std::string out = "embedded:";
  std::size_t total = 0;
  for (const char* tier : {"spirv", "ptx", "source"}) {
    const auto it = embedded_bytes.find(tier);
    if (it == embedded_bytes.end()) continue;
    out += detail::format("%s %s %.1f KiB", total ? "," : "", tier, double(it->second) / 1024);
    total += it->second;
  }
  out += detail::format(" (%.1f KiB)", double(total) / 1024);
  std::string left;
  for (const char* tier : {"spirv", "ptx", "source"}) {
    if (manifest.leaves_out(tier)) left += std::string(left.empty() ? "" : ", ") + tier;
  }
  if (!left.empty()) out += "; left out on purpose: " + left;
  return out;
}

}  // namespace fatcl
