// Offline validation (fatcl validate) and module inspection on damaged and
// crafted input: every problem is its own line naming its cause, and nothing
// but fatcl::Error leaves the inspection.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <spirv-tools/libspirv.hpp>

#include "error_of.hpp"
#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace fatcl {
namespace {

using test::error_of;
using test::TempDir;

const fs::path kTiled = fs::path(FATCL_SOURCE_DIR) / "generated" / "matmul_tiled";

// A copy of the committed matmul_tiled bundle to damage.
struct BundleCopy {
  TempDir dir;
  BundleCopy() {
    for (const auto& e : fs::directory_iterator(kTiled)) fs::copy(e.path(), dir.path);
  }
  fs::path operator/(const std::string& name) const { return dir.path / name; }
};

void write_bytes(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// The problems of one check, as "variant: message" lines.
std::vector<std::string> problems_of(const ValidationReport& r, const std::string& check) {
  std::vector<std::string> out;
  for (const ValidationProblem& p : r.problems) {
    if (p.check == check) out.push_back(p.variant + ": " + p.message);
  }
  return out;
}

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Validate, CommittedBundleIsValid) {
  const ValidationReport r = validate_paths({kTiled});
  EXPECT_TRUE(r.ok()) << r.to_text();
  EXPECT_EQ(r.valid.size(), 4u) << r.to_text();
  for (const ValidatedModule& v : r.valid) EXPECT_EQ(v.target_env, "opencl1.2");
}

TEST(Validate, TamperedModuleIsCaughtByItsHash) {
  BundleCopy b;
  std::string bytes = read_text(b / "matmul_tiled_TILE16.spv");
  // A changed constant in the last word keeps the size and still validates.
  bytes[bytes.size() - 8] ^= 0x01;
  write_bytes(b / "matmul_tiled_TILE16.spv", bytes);
  const ValidationReport r = validate_paths({b.dir.path});
  EXPECT_FALSE(r.ok());
  const auto sha = problems_of(r, "sha256");
  ASSERT_EQ(sha.size(), 1u) << r.to_text();
  EXPECT_NE(sha[0].find("matmul_tiled_TILE16: SHA-256"), std::string::npos) << sha[0];
  EXPECT_NE(sha[0].find("changed after the manifest was written"), std::string::npos) << sha[0];
  EXPECT_TRUE(problems_of(r, "size").empty()) << r.to_text();
  EXPECT_EQ(r.valid.size(), 3u) << r.to_text();
}

// The PTX beside each module is checked against its record too: a changed,
// truncated or missing PTX, and one the manifest does not list, are named.
TEST(Validate, DamagedPtxIsNamed) {
  BundleCopy b;
  std::string ptx = read_text(b / "matmul_tiled_TILE16.ptx");
  ptx.replace(ptx.find(".entry matmul_tiled"), 19, ".entry matmul_tilex");
  write_bytes(b / "matmul_tiled_TILE16.ptx", ptx);
  write_bytes(b / "matmul_tiled_TILE8.ptx", read_text(b / "matmul_tiled_TILE8.ptx").substr(0, 100));
  fs::remove(b / "matmul_tiled_TILE4.ptx");
  write_bytes(b / "stray.ptx", ".version 5.0\n");
  const ValidationReport r = validate_paths({b.dir.path});
  EXPECT_FALSE(r.ok());
  const auto lines = problems_of(r, "ptx");
  EXPECT_TRUE(contains(lines, "matmul_tiled_TILE16: the PTX's SHA-256 differs")) << r.to_text();
  EXPECT_TRUE(contains(lines, "matmul_tiled_TILE16: the PTX has no .entry matmul_tiled"))
      << r.to_text();
  EXPECT_TRUE(contains(lines, "matmul_tiled_TILE8: PTX of 100 bytes")) << r.to_text();
  EXPECT_TRUE(contains(problems_of(r, "read"), "matmul_tiled_TILE4: missing")) << r.to_text();
  EXPECT_TRUE(contains(problems_of(r, "manifest"), "not listed in")) << r.to_text();
  EXPECT_EQ(r.valid.size(), 4u) << "the SPIR-V modules are fine: " << r.to_text();
}

TEST(Validate, StaleManifestNamesEveryFieldThatDiffers) {
  BundleCopy b;
  // The TILE32 entry now describes TILE8's module: a manifest from another build.
  fs::copy_file(kTiled / "matmul_tiled_TILE8.spv", b / "matmul_tiled_TILE32.spv",
                fs::copy_options::overwrite_existing);
  const ValidationReport r = validate_paths({b / "manifest.json"});
  EXPECT_FALSE(r.ok());
  const std::string text = r.to_text();
  EXPECT_TRUE(contains(problems_of(r, "sha256"), "matmul_tiled_TILE32: SHA-256")) << text;
  EXPECT_TRUE(contains(problems_of(r, "reqd_work_group_size"),
                       "the module has 8x8x1 (manifest.json says 32x32x1)"))
      << text;
  EXPECT_TRUE(contains(problems_of(r, "local_mem_bytes"), "the module has 576")) << text;
}

TEST(Validate, TruncatedModuleSaysTruncated) {
  BundleCopy b;
  const std::string bytes = read_text(b / "matmul_tiled_TILE4.spv");
  write_bytes(b / "matmul_tiled_TILE4.spv", bytes.substr(0, 1001));
  const ValidationReport r = validate_paths({b.dir.path});
  const std::string text = r.to_text();
  EXPECT_TRUE(contains(problems_of(r, "size"), "truncated: 1001 bytes (manifest.json says " +
                                                   std::to_string(bytes.size()) + ")"))
      << text;
  EXPECT_TRUE(contains(problems_of(r, "spirv"), "not a whole number of 4-byte words")) << text;
  // Cut at a word boundary it is still caught, by the validator this time.
  write_bytes(b / "matmul_tiled_TILE4.spv", bytes.substr(0, 1000));
  const ValidationReport r2 = validate_paths({b.dir.path});
  EXPECT_TRUE(contains(problems_of(r2, "size"), "truncated: 1000 bytes")) << r2.to_text();
  EXPECT_EQ(problems_of(r2, "spirv-val").size(), 1u) << r2.to_text();
}

TEST(Validate, ForeignFilesAreNamedAsSuch) {
  BundleCopy b;
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + std::string(56, '\0');
  write_bytes(b / "matmul_tiled_TILE8.spv", png);
  write_bytes(b / "picture.spv", png);
  const ValidationReport r = validate_paths({b.dir.path});
  const std::string text = r.to_text();
  EXPECT_TRUE(contains(problems_of(r, "spirv"),
                       "matmul_tiled_TILE8: not a SPIR-V module (magic number 0x474e5089"))
      << text;
  EXPECT_TRUE(contains(problems_of(r, "manifest"), ": not listed in")) << text;

  // A foreign JSON file, and a foreign file given as a module.
  write_bytes(b / "package.json", "{\"name\": \"left-pad\"}");
  const ValidationReport m = validate_paths({b / "package.json", b / "picture.spv"});
  EXPECT_TRUE(contains(problems_of(m, "manifest"), "not a fatcl manifest")) << m.to_text();
  EXPECT_TRUE(contains(problems_of(m, "spirv"), "not a SPIR-V module (magic number"))
      << m.to_text();
}

TEST(Validate, MissingFilesAndFoldersAreProblems) {
  BundleCopy b;
  fs::remove(b / "matmul_tiled_TILE4.spv");
  ValidationReport r = validate_paths({b.dir.path, b.dir.path / "nowhere"});
  EXPECT_TRUE(contains(problems_of(r, "read"), "matmul_tiled_TILE4: missing")) << r.to_text();
  EXPECT_TRUE(contains(problems_of(r, "read"), ": no such file or folder")) << r.to_text();
  TempDir empty;
  r = validate_paths({empty.path});
  EXPECT_TRUE(contains(problems_of(r, "manifest"), "no manifest.json")) << r.to_text();
  EXPECT_FALSE(validate_paths({}).ok());
}

// A folder where a module or the manifest should be is one problem saying
// so, not an empty file that is truncated, of another hash and too short.
TEST(Validate, FolderInPlaceOfAFileIsNamedOnce) {
  BundleCopy b;
  fs::remove(b / "matmul_tiled_TILE8.spv");
  fs::create_directory(b / "matmul_tiled_TILE8.spv");
  ValidationReport r = validate_paths({b.dir.path});
  std::size_t about_tile8 = 0;
  for (const ValidationProblem& p : r.problems) about_tile8 += p.variant == "matmul_tiled_TILE8";
  EXPECT_EQ(about_tile8, 1u) << r.to_text();
  EXPECT_TRUE(contains(problems_of(r, "read"), "matmul_tiled_TILE8.spv is a folder, not a file"))
      << r.to_text();
  BundleCopy c;
  fs::remove(c / "manifest.json");
  fs::create_directory(c / "manifest.json");
  r = validate_paths({c.dir.path});
  EXPECT_TRUE(contains(problems_of(r, "read"), "manifest.json is a folder, not a file"))
      << r.to_text();
}

TEST(Validate, LoneModuleUsesTheManifestBesideIt) {
  const ValidationReport r = validate_paths({kTiled / "matmul_tiled_TILE32.spv"});
  ASSERT_TRUE(r.ok()) << r.to_text();
  EXPECT_EQ(r.valid.at(0).variant, "matmul_tiled_TILE32");
  TempDir alone;
  fs::copy_file(kTiled / "matmul_tiled_TILE32.spv", alone.path / "m.spv");
  const ValidationReport a = validate_paths({alone.path / "m.spv"});
  ASSERT_TRUE(a.ok()) << a.to_text();
  EXPECT_EQ(a.valid.at(0).variant, "");
  EXPECT_NE(a.to_text().find("no manifest lists it"), std::string::npos);
}

TEST(Validate, JsonReport) {
  BundleCopy b;
  fs::remove(b / "matmul_tiled_TILE4.spv");
  const std::string json = validate_paths({b.dir.path}).to_json();
  EXPECT_NE(json.find("\"ok\": false"), std::string::npos) << json;
  EXPECT_NE(json.find("\"check\": \"read\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"variant\": \"matmul_tiled_TILE32\""), std::string::npos) << json;
}

std::vector<std::uint32_t> assemble(const std::string& text) {
  spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_0);
  std::vector<std::uint32_t> words;
  EXPECT_TRUE(tools.Assemble(text, &words)) << text;
  return words;
}

const char* kModuleHead =
    "OpCapability Addresses\nOpCapability Kernel\nOpMemoryModel Physical64 OpenCL\n"
    "OpEntryPoint Kernel %f \"k\"\nOpSource OpenCL_C 102000\n";
const char* kModuleTail =
    "%void = OpTypeVoid\n%fn = OpTypeFunction %void\n"
    "%f = OpFunction %void None %fn\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n";

// A __local variable whose type is not defined in the module used to end in
// "map::at"; it is now a sentence naming the id.
TEST(Inspect, CraftedModulesGiveErrorsThatNameTheCause) {
  auto undefined_pointer =
      assemble(std::string(kModuleHead) + kModuleTail + "%v = OpVariable %ptr Workgroup\n");
  // The variable comes after the function: move nothing, the parser takes it.
  std::string message = error_of([&] { inspect_module(undefined_pointer, "k"); });
  EXPECT_NE(message.find("is not a pointer type defined in the module"), std::string::npos)
      << message;

  auto unsized = assemble(std::string(kModuleHead) +
                          "%float = OpTypeFloat 32\n%uint = OpTypeInt 32 0\n"
                          "%arr = OpTypeRuntimeArray %float\n"
                          "%ptr = OpTypePointer Workgroup %arr\n"
                          "%v = OpVariable %ptr Workgroup\n" +
                          kModuleTail);
  message = error_of([&] { inspect_module(unsized, "k"); });
  EXPECT_NE(message.find("cannot be sized"), std::string::npos) << message;

  auto huge = assemble(std::string(kModuleHead) +
                       "%ulong = OpTypeInt 64 0\n%n = OpConstant %ulong 0xffffffffffffff\n"
                       "%a = OpTypeArray %ulong %n\n%b = OpTypeArray %a %n\n"
                       "%ptr = OpTypePointer Workgroup %b\n%v = OpVariable %ptr Workgroup\n" +
                       kModuleTail);
  message = error_of([&] { inspect_module(huge, "k"); });
  EXPECT_NE(message.find("overflows 64 bits"), std::string::npos) << message;

  EXPECT_NE(error_of([&] {
              inspect_module({0x07230203u, 0x00990000u, 0, 5, 0}, "");
            }).find("unknown SPIR-V version word 0x990000"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              inspect_module({0x03022307u, 0x00000100u, 0, 5, 0}, "");
            }).find("big-endian"),
            std::string::npos);
}

// Random damage to a real module: whatever the bytes, inspection either
// succeeds or throws fatcl::Error; nothing else escapes.
TEST(Inspect, DamagedModulesThrowOnlyFatclErrors) {
  const std::string bytes = read_text(kTiled / "matmul_tiled_TILE32.spv");
  std::vector<std::uint32_t> original(bytes.size() / 4);
  std::memcpy(original.data(), bytes.data(), bytes.size());
  std::mt19937 rng(std::random_device{}());
  int errors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::uint32_t> words = original;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      std::uint32_t& w = words[5 + rng() % (words.size() - 5)];
      w = (rng() % 2) ? static_cast<std::uint32_t>(rng()) : (w ^ (1u << (rng() % 32)));
    }
    if (rng() % 8 == 0) words.resize(5 + rng() % (words.size() - 5));
    try {
      inspect_module(words, "matmul_tiled");
    } catch (const Error&) {
      ++errors;
    } catch (const std::exception& e) {
      FAIL() << "damage " << i << " let " << typeid(e).name() << " escape: " << e.what();
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace fatcl
