// fatcl-compile: compile OpenCL C kernel variants to validated SPIR-V and
// bundle them for embedding. A thin front end over fatcl::compiler; the
// CMake function fatcl_add_kernel_variants() drives it.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"

namespace fs = std::filesystem;

namespace {

std::pair<std::string, long long> parse_define(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw fatcl::Error("-D " + text + ": expected NAME=INTEGER");
  }
  std::string value = text.substr(eq + 1);
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty()) {
    throw fatcl::Error("-D " + text + ": the value of a variant parameter must be an integer");
  }
  return {text.substr(0, eq), v};
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

int main(int argc, char** argv) {
  CLI::App app{
      "fatcl-compile: OpenCL C kernel variants -> validated SPIR-V, manifest and embedding"};
  app.require_subcommand(1);

  fatcl::Toolchain toolchain;
  fatcl::VariantRequest request;
  std::vector<std::string> defines;
  fs::path out_dir, depfile;
  CLI::App* variant = app.add_subcommand("variant", "compile and validate one variant");
  variant->add_option("--family", request.family, "kernel family name")->required();
  variant->add_option("--kernel", request.kernel, "kernel function name")->required();
  variant->add_option("--source", request.source, "OpenCL C source")
      ->required()
      ->check(CLI::ExistingFile);
  variant->add_option("-I,--include-dir", request.include_dirs, "folder for quoted #includes");
  variant->add_option("-D,--define", defines, "variant parameter NAME=INTEGER");
  variant->add_option("--clang", toolchain.clang, "clang to use");
  variant->add_option("--llvm-spirv", toolchain.llvm_spirv, "llvm-spirv to use");
  variant->add_option("--extra-clang-flag", request.extra_clang_flags,
                      "extra clang flag (experiments)");
  variant->add_option("--spirv-max-version", request.spirv_max_version, "SPIR-V version to emit");
  variant->add_option("--out-dir", out_dir, "writes <variant>.spv and <variant>.json here")
      ->required();
  variant->add_option("--depfile", depfile, "writes a Makefile depfile for the .spv");

  std::vector<fs::path> records;
  fs::path source;
  std::vector<fs::path> include_dirs;
  std::string cpp_namespace = "fatcl_kernels";
  CLI::App* bundle =
      app.add_subcommand("bundle", "write manifest.json, modules and embedding source");
  bundle->add_option("records", records, "<variant>.json files written by 'variant'")->required();
  bundle->add_option("--source", source, "OpenCL C source")->required()->check(CLI::ExistingFile);
  bundle->add_option("-I,--include-dir", include_dirs, "folder for quoted #includes");
  bundle->add_option("--namespace", cpp_namespace, "C++ namespace of the accessor");
  bundle->add_option("--out-dir", out_dir, "output folder")->required();

  std::vector<fs::path> paths;
  bool json = false;
  CLI::App* validate = app.add_subcommand(
      "validate", "validate bundles, manifests and SPIR-V modules (the same as fatcl validate)");
  validate->add_option("paths", paths, "bundle folders, manifest.json files or SPIR-V modules")
      ->required();
  validate->add_flag("--json", json, "print the report as JSON");

  CLI11_PARSE(app, argc, argv);

  try {
    if (*variant) {
      for (const std::string& d : defines) request.params.push_back(parse_define(d));
      fatcl::CompiledVariant v = fatcl::compile_variant(toolchain, request);
      const fatcl::Variant& info = v.manifest.variants.front();
      fs::create_directories(out_dir);
      fatcl::write_file_atomic(out_dir / info.spirv_file, v.spirv.data(), v.spirv.size() * 4);
      std::string record = v.manifest.dump();
      fatcl::write_file_atomic(out_dir / (info.name + ".json"), record.data(), record.size());
      if (!depfile.empty()) {
        std::string deps = escape_make(fs::absolute(out_dir / info.spirv_file).string()) + ":";
        for (const fs::path& in : v.inputs) deps += " " + escape_make(fs::absolute(in).string());
        deps += "\n";
        fatcl::write_file_atomic(depfile, deps.data(), deps.size());
      }
      std::printf("fatcl-compile: %s: SPIR-V %s, valid under %s, %zu bytes, %zu B local memory\n",
                  info.name.c_str(), info.spirv_version.c_str(), info.target_env.c_str(),
                  info.spirv_size, info.local_mem_bytes);
    } else if (*bundle) {
      fatcl::BundleInput input;
      input.cpp_namespace = cpp_namespace;
      input.source = fatcl::self_contained_source(source, include_dirs);
      for (const fs::path& r : records) {
        fatcl::Manifest m = fatcl::Manifest::parse(fatcl::read_text(r));
        if (m.variants.size() != 1)
          throw fatcl::Error(r.string() + ": not a single-variant record");
        auto words = fatcl::read_spirv(r.parent_path() / m.variants.front().spirv_file);
        input.variants.emplace_back(std::move(m), std::move(words));
      }
      fatcl::Manifest m = fatcl::write_bundle(input, out_dir);
      std::printf("fatcl-compile: %s: %zu variants bundled in %s\n", m.family.c_str(),
                  m.variants.size(), out_dir.string().c_str());
    } else if (*validate) {
      const fatcl::ValidationReport report = fatcl::validate_paths(paths);
      std::fputs((json ? report.to_json() : report.to_text()).c_str(), stdout);
      return report.ok() ? 0 : 1;
    }
  } catch (const fatcl::Error& e) {
    std::fprintf(stderr, "fatcl-compile: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fatcl-compile: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
