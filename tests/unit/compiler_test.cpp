// The offline compiler: the route, its traps, and the committed copies.
#include "fatcl/compiler.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "error_of.hpp"
#include "fatcl/error.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace fatcl {
namespace {

const fs::path kSourceDir = FATCL_SOURCE_DIR;

bool on_path(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

#define REQUIRE_TOOLCHAIN()                                                            \
  if (!on_path("clang-15") || !on_path("llvm-spirv-15")) {                             \
    GTEST_SKIP() << "clang-15 or llvm-spirv-15 not on PATH (apt-get install clang-15 " \
                    "llvm-spirv-15)";                                                  \
  }

using test::TempDir;

VariantRequest tiled(long long tile) {
  VariantRequest r;
  r.family = "matmul_tiled";
  r.kernel = "matmul_tiled";
  r.source = kSourceDir / "kernels/matmul_tiled.cl";
  r.params = {{"TILE", tile}};
  return r;
}

using test::error_of;

TEST(Compiler, VariantNames) {
  EXPECT_EQ(variant_name("matmul_tiled", {{"TILE", 16}}), "matmul_tiled_TILE16");
  EXPECT_EQ(variant_name("gemm", {{"MWG", 64}, {"NWG", 32}}), "gemm_MWG64_NWG32");
  EXPECT_EQ(variant_name("matmul_naive", {}), "matmul_naive");
}

TEST(Compiler, CompilesAndDescribesAVariant) {
  REQUIRE_TOOLCHAIN();
  CompiledVariant v = compile_variant(Toolchain{}, tiled(16));
  ASSERT_EQ(v.manifest.variants.size(), 1u);
  const Variant& info = v.manifest.variants[0];
  EXPECT_EQ(info.name, "matmul_tiled_TILE16");
  EXPECT_EQ(info.spirv_version, "1.0");
  EXPECT_EQ(info.target_env, "opencl1.2");
  EXPECT_EQ(info.reqd_work_group_size, (std::array<std::size_t, 3>{16, 16, 1}));
  EXPECT_EQ(info.local_mem_bytes, 2u * 16 * 17 * 4);  // two padded 16x17 float tiles
  EXPECT_EQ(info.spirv_size, v.spirv.size() * 4);
  EXPECT_EQ(info.sha256, sha256_hex(v.spirv.data(), info.spirv_size));
  EXPECT_NE(std::find(info.capabilities.begin(), info.capabilities.end(), "Kernel"),
            info.capabilities.end());
  EXPECT_EQ(v.manifest.toolchain.count("clang"), 1u);
  // The same request gives the same bytes: the route is deterministic.
  EXPECT_EQ(compile_variant(Toolchain{}, tiled(16)).spirv, v.spirv);
}

TEST(Compiler, O2RouteIsCaughtByTheValidatorNamingTheVariant) {
  REQUIRE_TOOLCHAIN();
  // The trap fatcl's -O0 route avoids: llvm-spirv-15 keeps LLVM's block
  // order, which after -O2 puts a block before its dominator at TILE=32.
  VariantRequest r = tiled(32);
  r.extra_clang_flags = {"-O2"};
  std::string message = error_of([&] { compile_variant(Toolchain{}, r); });
  EXPECT_EQ(message.rfind("variant matmul_tiled_TILE32: spirv-val (opencl1.2) rejects", 0), 0u)
      << message;
  EXPECT_NE(message.find("before its dominator"), std::string::npos) << message;
}

TEST(Compiler, SpirV14IsInvalidForOpenCL12) {
  REQUIRE_TOOLCHAIN();
  VariantRequest r = tiled(8);
  r.spirv_max_version = "1.4";
  std::string message = error_of([&] { compile_variant(Toolchain{}, r); });
  EXPECT_NE(message.find("variant matmul_tiled_TILE8"), std::string::npos) << message;
  EXPECT_NE(message.find("version"), std::string::npos) << message;
}

TEST(Compiler, CompileErrorsNameTheVariantAndTheLine) {
  REQUIRE_TOOLCHAIN();
  TempDir dir;
  std::ofstream(dir.path / "broken.cl") << "__kernel void broken(__global float* x) {\n"
                                           "#if TILE == 8\n  x[0] = undeclared;\n#endif\n}\n";
  VariantRequest r;
  r.family = "broken";
  r.kernel = "broken";
  r.source = dir.path / "broken.cl";
  r.params = {{"TILE", 4}};
  EXPECT_NO_THROW(compile_variant(Toolchain{}, r));
  r.params = {{"TILE", 8}};
  std::string message = error_of([&] { compile_variant(Toolchain{}, r); });
  EXPECT_EQ(message.rfind("variant broken_TILE8: clang failed", 0), 0u) << message;
  EXPECT_NE(message.find("broken.cl:3"), std::string::npos) << message;
  EXPECT_NE(message.find("undeclared"), std::string::npos) << message;
  r.kernel = "missing";
  r.params = {{"TILE", 4}};
  message = error_of([&] { compile_variant(Toolchain{}, r); });
  EXPECT_NE(message.find("no kernel \"missing\" (it has: broken)"), std::string::npos) << message;
}

TEST(Compiler, MissingToolIsNamed) {
  Toolchain t;
  t.clang = "clang-does-not-exist";
  std::string message = error_of([&] { compile_variant(t, tiled(8)); });
  EXPECT_NE(message.find("clang-does-not-exist"), std::string::npos) << message;
}

TEST(Compiler, QuotedIncludesAreInlinedOnce) {
  TempDir dir;
  fs::create_directories(dir.path / "inc");
  std::ofstream(dir.path / "inc/common.h") << "#define SCALE 2.0f\n";
  std::ofstream(dir.path / "k.cl") << "#include \"common.h\"\n#include \"common.h\"\n"
                                      "__kernel void k(__global float* x) { x[0] = SCALE; }\n";
  std::vector<fs::path> inputs;
  std::string text = self_contained_source(dir.path / "k.cl", {dir.path / "inc"}, &inputs);
  EXPECT_EQ(inputs.size(), 2u);
  EXPECT_EQ(text.find("#include"), std::string::npos) << text;
  EXPECT_EQ(text.find("#define SCALE"), text.rfind("#define SCALE")) << text;
  EXPECT_NE(text.find("#line 1 \"common.h\""), std::string::npos) << text;
  std::ofstream(dir.path / "bad.cl") << "#include \"nowhere.h\"\n";
  std::string message = error_of([&] { self_contained_source(dir.path / "bad.cl", {}); });
  EXPECT_NE(message.find("bad.cl:1: #include \"nowhere.h\" not found"), std::string::npos)
      << message;
}

TEST(Compiler, ValidatorRejectsGarbage) {
  std::vector<std::uint32_t> words = {0x07230203u, 0x00010000u, 0, 100, 0, 0xdeadbeefu};
  EXPECT_THROW(validate_module(words, "opencl1.2"), Error);
  EXPECT_THROW(inspect_module({1, 2, 3}, ""), Error);
  EXPECT_THROW(validate_module(words, "opencl9.9"), Error);
}

// Every committed module validates under its declared environment, and its
// record in the committed manifest matches the file.
TEST(Generated, CommittedModulesAreValid) {
  int modules = 0;
  for (const char* family : {"matmul_tiled", "matmul_naive"}) {
    const fs::path dir = kSourceDir / "generated" / family;
    Manifest m = Manifest::parse(read_text(dir / "manifest.json"));
    for (const Variant& v : m.variants) {
      SCOPED_TRACE(v.name);
      std::vector<std::uint32_t> words = read_spirv(dir / v.spirv_file);
      EXPECT_EQ(sha256_hex(words.data(), words.size() * 4), v.sha256);
      EXPECT_NO_THROW(validate_module(words, v.target_env));
      ModuleInfo info = inspect_module(words, m.kernel);
      EXPECT_EQ(info.reqd_work_group_size, v.reqd_work_group_size);
      EXPECT_EQ(info.local_mem_bytes, v.local_mem_bytes);
      ++modules;
    }
  }
  EXPECT_EQ(modules, 5);
}

// The text without its "toolchain": {...} block: the tools' version lines
// are recorded, not compared (another patch release writes the same modules).
std::string without_toolchain(const std::string& text) {
  return std::regex_replace(text, std::regex("\"toolchain\": \\{[^}]*\\}"), "");
}

// The committed copies are byte-for-byte what the toolchain builds now, but
// for the recorded tool versions.
TEST(Generated, CommittedCopiesAreReproducible) {
  REQUIRE_TOOLCHAIN();
  TempDir out;
  BundleInput input;
  input.source = self_contained_source(kSourceDir / "kernels/matmul_tiled.cl", {});
  input.cpp_namespace = "fatcl::kernels";
  for (long long tile : {4, 8, 16, 32}) {
    CompiledVariant v = compile_variant(Toolchain{}, tiled(tile));
    input.variants.emplace_back(v.manifest, v.spirv);
  }
  write_bundle(input, out.path);
  const fs::path committed = kSourceDir / "generated/matmul_tiled";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(out.path)) {
    SCOPED_TRACE(entry.path().filename().string());
    EXPECT_EQ(without_toolchain(read_text(entry.path())),
              without_toolchain(read_text(committed / entry.path().filename())));
    ++files;
  }
  EXPECT_EQ(files, 4 + 3);  // modules, manifest, .embed.cpp, .hpp
}

// Bundling again after a variant left the grid removes its module: the
// folder agrees with its manifest.
TEST(Bundle, RebundlingRemovesModulesOfDroppedVariants) {
  REQUIRE_TOOLCHAIN();
  TempDir out;
  auto bundle = [&](std::vector<long long> tiles) {
    BundleInput input;
    input.source = self_contained_source(kSourceDir / "kernels/matmul_tiled.cl", {});
    input.cpp_namespace = "fatcl::kernels";
    for (long long tile : tiles) {
      CompiledVariant v = compile_variant(Toolchain{}, tiled(tile));
      input.variants.emplace_back(v.manifest, v.spirv);
    }
    write_bundle(input, out.path);
  };
  bundle({4, 8});
  ASSERT_TRUE(fs::exists(out.path / "matmul_tiled_TILE8.spv"));
  std::ofstream(out.path / "notes.txt") << "not ours to remove";
  bundle({4});
  EXPECT_TRUE(fs::exists(out.path / "matmul_tiled_TILE4.spv"));
  EXPECT_FALSE(fs::exists(out.path / "matmul_tiled_TILE8.spv"));
  EXPECT_TRUE(fs::exists(out.path / "notes.txt"));
}

}  // namespace
}  // namespace fatcl
