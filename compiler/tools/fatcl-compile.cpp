// fatcl-compile: compile a kernel family's grid of variants to validated
// SPIR-V and bundle them for embedding; validate bundles. A thin front end
// over fatcl::compiler; the CMake function fatcl_add_kernel_variants()
// drives `family`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "fatcl/compiler.hpp"
#include "fatcl/detail/atomic_file.hpp"
#include "fatcl/error.hpp"

namespace fs = std::filesystem;

namespace {

// "NAME=V1,V2,..." -> {NAME, {V1, V2, ...}}.
std::pair<std::string, std::vector<long long>> parse_param(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw fatcl::Error("--param " + text + ": expected NAME=V1,V2,...");
  }
  std::vector<long long> values;
  std::string rest = text.substr(eq + 1) + ",";
  for (std::size_t start = 0, comma; (comma = rest.find(',', start)) != std::string::npos;
       start = comma + 1) {
    const std::string value = rest.substr(start, comma - start);
    std::size_t used = 0;
    try {
      values.push_back(std::stoll(value, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (value.empty() || used != value.size()) {
      throw fatcl::Error("--param " + text + ": \"" + value + "\" is not an integer");
    }
  }
  return {text.substr(0, eq), values};
}

std::string escape_make(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

}  // namespace

// Long for a reason: the two subcommands' options as CLI11 declares them,
// then a few lines that run each; the work is in fatcl::compiler.
int main(int argc, char** argv) {
  CLI::App app{
      "fatcl-compile: OpenCL C kernel families -> validated SPIR-V, manifest and "
      "embedding source; offline validation"};
  app.require_subcommand(1);

  fatcl::Toolchain toolchain;
  fatcl::FamilyRequest request;
  std::vector<std::string> params, points;
  fs::path out_dir, depfile;
  CLI::App* family = app.add_subcommand(
      "family", "compile and validate every point of a family's grid, and write its bundle");
  family->add_option("--family", request.base.family, "kernel family name")->required();
  family->add_option("--kernel", request.base.kernel, "kernel function name")->required();
  family->add_option("--source", request.base.source, "OpenCL C source")
      ->required()
      ->check(CLI::ExistingFile);
  family->add_option("-I,--include-dir", request.base.include_dirs, "folder for quoted #includes");
  family->add_option("--param", params, "a parameter and its values, NAME=V1,V2,... (repeat)");
  family->add_option("--constraint", request.grid.constraints,
                     "an integer C expression every point of the product must meet (repeat)");
  family->add_option("--point", points, "an explicit point, NAME=V,NAME=V,... (repeat)");
  family->add_option("--clang", toolchain.clang, "clang to use");
  family->add_option("--llvm-spirv", toolchain.llvm_spirv, "llvm-spirv to use");
  family->add_option("--llvm-link", toolchain.llvm_link,
                     "PTX route: llvm-link (e.g. llvm-link-15)");
  family->add_option("--opt", toolchain.opt,
                     "opt to use: the SPIR-V route's clean-up, and the PTX route (default opt-15)");
  family->add_option("--llc", toolchain.llc, "PTX route: llc (e.g. llc-15)");
  family->add_option("--libclc-nvptx", toolchain.libclc_nvptx,
                     "PTX route: libclc's NVPTX library (/usr/lib/clc/nvptx64--nvidiacl.bc); "
                     "with --llvm-link and --llc every variant gets PTX too");
  family->add_option("--ptxas", toolchain.ptxas,
                     "assembles every PTX (CUDA toolkit); without it the PTX is unvalidated");
  family->add_option("--ptx-arch", toolchain.ptx_arch, "architecture ptxas assembles for")
      ->capture_default_str();
  family->add_option("--extra-clang-flag", request.base.extra_clang_flags,
                     "extra clang flag (experiments)");
  family->add_option("--namespace", request.cpp_namespace, "C++ namespace of the accessor");
  family->add_option("--jobs", request.jobs, "variants compiled at once (default: one per CPU)");
  bool no_source = false;
  family->add_flag("--no-source", no_source,
                   "embed no OpenCL C: the product runs only where a precompiled tier loads");
  std::vector<std::string> leave_out;
  family->add_option("--leave-out", leave_out,
                     "a tier not to embed: spirv (still built and validated), ptx (not built) "
                     "or source (as --no-source); repeat for more")
      ->check(CLI::IsMember({"spirv", "ptx", "source"}))
      ->allow_extra_args(false);
  std::string barrier_check = "refuse";
  family->add_option("--barrier-check", barrier_check,
                     "a barrier only some work-items of a group may reach: refuse (default), "
                     "warn or off")
      ->check(CLI::IsMember({"refuse", "warn", "off"}));
  fs::path launch;
  family->add_option("--launch", launch,
                     "a launch description (JSON: the problem, geometry and arguments as "
                     "expressions, the tile edges), checked against every variant and kept in "
                     "the manifest for fatcl launch and fatcl validate --oclgrind")
      ->check(CLI::ExistingFile);
  family->add_option("--out-dir", out_dir, "writes the bundle here")->required();
  family->add_option("--depfile", depfile, "writes a Makefile depfile for the bundle's manifest");

  std::vector<fs::path> paths;
  bool json = false;
  CLI::App* validate = app.add_subcommand(
      "validate", "validate bundles, manifests and SPIR-V modules (the same as fatcl validate)");
  validate->add_option("paths", paths, "bundle folders, manifest.json files or SPIR-V modules")
      ->required();
  validate->add_flag("--json", json, "print the report as JSON");
  std::string validate_barriers = "refuse";
  validate->add_option("--barrier-check", validate_barriers,
                       "a barrier only some work-items may reach: a problem (refuse, the "
                       "default), a warning (warn) or not looked for (off)")
      ->check(CLI::IsMember({"refuse", "warn", "off"}));

  CLI11_PARSE(app, argc, argv);

  try {
    if (*family) {
      for (const std::string& p : params) request.grid.params.push_back(parse_param(p));
      for (const std::string& p : points) request.grid.points.push_back(fatcl::parse_point(p));
      request.embed_source = !no_source;
      for (const std::string& t : leave_out) {
        if (t == "source") {
          request.embed_source = false;
        } else {
          request.tiers_left_out.push_back(t);
        }
      }
      request.base.barrier_check = fatcl::parse_barrier_check(barrier_check);
      if (!launch.empty()) {
        request.launch =
            fatcl::LaunchDescription::parse(fatcl::read_text(launch), launch.string());
      }
      const fatcl::CompiledFamily f = fatcl::compile_family(toolchain, request, out_dir);
      for (const std::string& w : f.warnings) {
        std::fprintf(stderr, "fatcl-compile: warning: %s: %s\n", f.manifest.family.c_str(),
                     w.c_str());
      }
      if (!depfile.empty()) {
        std::string deps = escape_make(fs::absolute(out_dir / "manifest.json").string()) + ":";
        for (const fs::path& in : f.inputs) deps += " " + escape_make(fs::absolute(in).string());
        deps += "\n";
        fatcl::detail::write_file_atomic(depfile, deps);
      }
      std::printf("fatcl-compile: %s: %zu variants compiled, validated and bundled in %s",
                  f.manifest.family.c_str(), f.manifest.variants.size(), out_dir.string().c_str());
      if (f.dropped) std::printf(" (%zu grid points removed by constraints)", f.dropped);
      std::printf("; %s\n", f.size_report().c_str());
    } else if (*validate) {
      const fatcl::ValidationReport report =
          fatcl::validate_paths(paths, fatcl::parse_barrier_check(validate_barriers));
      std::fputs((json ? report.to_json() : report.to_text()).c_str(), stdout);
      return report.ok() ? 0 : 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fatcl-compile: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
