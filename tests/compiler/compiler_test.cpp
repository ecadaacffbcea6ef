// The offline compiler: the route, its traps, and the committed copies.
#include "fatcl/compiler.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "error_of.hpp"
#include "fatcl/error.hpp"
#include "fatcl/loader.hpp"
#include "temp_dir.hpp"
#include "toolchain.hpp"

namespace fs = std::filesystem;

namespace fatcl {
namespace {

const fs::path kSourceDir = FATCL_SOURCE_DIR;

using test::TempDir;

// The toolchain with the PTX route, as the build found it.
Toolchain ptx_toolchain() {
  Toolchain t;
#ifdef FATCL_LLVM_LINK
  t.llvm_link = FATCL_LLVM_LINK;
  t.opt = FATCL_OPT;
  t.llc = FATCL_LLC;
  t.libclc_nvptx = FATCL_LIBCLC_NVPTX;
  t.ptxas = FATCL_PTXAS;
#endif
  return t;
}

#define REQUIRE_PTX_ROUTE()                                                                 \
  REQUIRE_TOOLCHAIN();                                                                      \
  if (!ptx_toolchain().makes_ptx()) {                                                       \
    GTEST_SKIP() << "no PTX route: the build found no llvm-link-15, opt-15, llc-15 or "     \
                    "libclc-15's nvptx64--nvidiacl.bc (apt-get install llvm-15 libclc-15)"; \
  }

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

// A module with two kernels that each declare their own __local tiles (the
// blocked family's product and its split product): the variant's __local
// memory is its kernel's, not the module's sum (which kept the 128 x 256
// points off the H200's 48 KiB).
TEST(Compiler, LocalMemoryIsTheKernelsOwn) {
  REQUIRE_TOOLCHAIN();
  VariantRequest r;
  r.family = "matmul_blocked";
  r.kernel = "matmul_blocked";
  r.source = kSourceDir / "kernels/matmul_blocked.cl";
  r.params = {{"MWG", 64}, {"NWG", 64}, {"KWG", 16}, {"MDIMC", 8}, {"NDIMC", 8}, {"VWM", 4},
              {"VWN", 4},  {"SA", 1},   {"SB", 1},   {"KWI", 2},   {"PF", 1},    {"FMA", 0},
              {"VWA", 1},  {"DB", 0}};
  const CompiledVariant v = compile_variant(Toolchain{}, r);
  const Variant& info = v.manifest.variants.front();
  // A: 16 x (64 + 4) floats; B: 16 x 64 floats.
  EXPECT_EQ(info.local_mem_bytes, 16u * 68 * 4 + 16u * 64 * 4);
  const ModuleInfo split = inspect_module(v.spirv, "matmul_blocked_split");
  EXPECT_EQ(split.local_mem_bytes, info.local_mem_bytes);
  EXPECT_EQ(inspect_module(v.spirv, "no_such_kernel").local_mem_bytes, 2 * info.local_mem_bytes);
  // Double-buffered: two slices of each.
  r.params.back().second = 1;
  EXPECT_EQ(compile_variant(Toolchain{}, r).manifest.variants.front().local_mem_bytes,
            2 * info.local_mem_bytes);
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

// A helper written `inline` without `static` (OpenCL C 1.2 follows C99: no
// definition is emitted) leaves the module calling a function it imports:
// refused at build time, naming the function, where drivers failed to link
// it at run time. With `static` the same kernel builds.
TEST(Compiler, AModuleThatImportsAFunctionIsRefused) {
  REQUIRE_TOOLCHAIN();
  TempDir dir;
  for (const char* storage : {"inline", "static inline"}) {
    std::ofstream(dir.path / "helper.cl", std::ios::trunc)
        << storage << " float twice(float x) { return 2.0f * x; }\n"
        << "__kernel void helper(__global float* a) { a[0] = twice(a[0]); }\n";
    VariantRequest r;
    r.family = "helper";
    r.kernel = "helper";
    r.source = dir.path / "helper.cl";
    const std::string message = error_of([&] { compile_variant(Toolchain{}, r); });
    if (std::string(storage) == "inline") {
      EXPECT_NE(message.find("imports the function \"twice\""), std::string::npos) << message;
    } else {
      EXPECT_EQ(message, "(no error)");
    }
  }
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

// Names that become file names, C++ names and tool arguments are checked
// before any tool runs (the toolchain here has no clang at all), and nothing
// is written.
TEST(Compiler, RequestsThatCannotBecomeFilesOrCppNamesAreRefusedFirst) {
  Toolchain t;
  t.clang = "clang-does-not-exist";
  TempDir out;
  auto refusal = [&](auto change) {
    FamilyRequest r;
    r.base = tiled(8);
    r.grid.params = {{"TILE", {8}}};
    Toolchain tc = t;
    change(r, tc);
    return error_of([&] { compile_family(tc, r, out.path / "bundle"); });
  };
  EXPECT_NE(refusal([](FamilyRequest& r, Toolchain&) {
              r.base.family = "bad name";
            }).find("family \"bad name\" is not a name of letters, digits and _"),
            std::string::npos);
  EXPECT_NE(refusal([](FamilyRequest& r, Toolchain&) {
              r.base.kernel = "9lives";
            }).find("kernel \"9lives\" is not a name"),
            std::string::npos);
  EXPECT_NE(refusal([](FamilyRequest& r, Toolchain&) {
              r.cpp_namespace = "::a";
            }).find("namespace \"::a\" is not a C++ namespace"),
            std::string::npos);
  EXPECT_NE(refusal([](FamilyRequest& r, Toolchain&) {
              r.cpp_namespace = "a b::c";
            }).find("is not a C++ namespace"),
            std::string::npos);
  EXPECT_NE(refusal([](FamilyRequest&, Toolchain& tc) {
              tc.ptx_arch = "sm_9'0";
            }).find("PTX architecture \"sm_9'0\" is not of the form sm_90"),
            std::string::npos);
  EXPECT_NE(refusal([](FamilyRequest& r, Toolchain&) {
              r.base.source = "/dev/null";
            }).find("source /dev/null is not a file"),
            std::string::npos);
  // A good request gets as far as the missing clang.
  EXPECT_NE(refusal([](FamilyRequest& r, Toolchain&) {
              r.cpp_namespace = "a::b_2";
            }).find("clang-does-not-exist"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(out.path / "bundle"));
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

// The text without its "toolchain": {...} and "ptxas": {...} blocks: the
// tools' version lines and ptxas's report are recorded, not compared
// (another patch release writes the same modules; ptxas may be missing).
std::string without_toolchain(const std::string& text) {
  return std::regex_replace(std::regex_replace(text, std::regex("\"toolchain\": \\{[^}]*\\}"), ""),
                            std::regex("\"ptxas\": \\{[^}]*\\}"), "");
}

// The committed copies are byte-for-byte what the toolchain builds now, but
// for the recorded tool versions.
TEST(Generated, CommittedCopiesAreReproducible) {
  REQUIRE_PTX_ROUTE();
  TempDir out;
  BundleInput input;
  input.source = self_contained_source(kSourceDir / "kernels/matmul_tiled.cl", {});
  input.cpp_namespace = "fatcl::kernels";
  for (long long tile : {4, 8, 16, 32}) {
    CompiledVariant v = compile_variant(ptx_toolchain(), tiled(tile));
    input.variants.push_back(v);
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
  EXPECT_EQ(files, 4 + 4 + 3);  // modules, PTX, manifest, .embed.cpp, .hpp
}

// The PTX route: optimised PTX with the kernel as its entry, recorded in the
// manifest with ptxas's report where ptxas is found, and embedded.
TEST(Compiler, PtxRouteRecordsAndEmbedsEachVariantsPtx) {
  REQUIRE_PTX_ROUTE();
  const Toolchain t = ptx_toolchain();
  CompiledVariant v = compile_variant(t, tiled(16));
  const Variant& info = v.manifest.variants.front();
  ASSERT_TRUE(info.ptx);
  EXPECT_EQ(info.ptx->file, "matmul_tiled_TILE16.ptx");
  EXPECT_EQ(info.ptx->target, "sm_60");
  EXPECT_EQ(info.ptx->size, v.ptx.size());
  EXPECT_EQ(info.ptx->sha256, sha256_hex(v.ptx.data(), v.ptx.size()));
  EXPECT_NE(v.ptx.find(".entry matmul_tiled"), std::string::npos);
  // Its reqd_work_group_size, which bounds the registers the driver's JIT
  // may give a work-item.
  EXPECT_NE(v.ptx.find(".reqntid 16, 16, 1"), std::string::npos);
  EXPECT_EQ(v.ptx.find("call.uni"), std::string::npos) << "libclc's built-ins are inlined";
  if (!t.ptxas.empty()) {
    ASSERT_TRUE(info.ptx->ptxas);
    EXPECT_EQ(info.ptx->ptxas->arch, "sm_90");
    EXPECT_GT(info.ptx->ptxas->registers, 0u);
    EXPECT_EQ(info.ptx->ptxas->shared_bytes, info.local_mem_bytes)
        << "the __local memory the SPIR-V module declares";
  }
  TempDir out;
  BundleInput input;
  input.source = self_contained_source(kSourceDir / "kernels/matmul_tiled.cl", {});
  input.variants.push_back(v);
  write_bundle(input, out.path);
  EXPECT_TRUE(fs::exists(out.path / "matmul_tiled_TILE16.ptx"));
  const std::string cpp = read_text(out.path / "matmul_tiled.embed.cpp");
  EXPECT_NE(cpp.find("kPtxModules"), std::string::npos);
  // A record whose PTX does not match is refused.
  input.variants.front().ptx += "\n";
  EXPECT_NE(error_of([&] { write_bundle(input, out.path); }).find("the PTX of matmul_tiled_TILE16"),
            std::string::npos);
}

// TIERS: a bundle that leaves precompiled tiers out embeds no code for them,
// and says so; its SPIR-V is still written beside the manifest (validated),
// its PTX is not; the family it embeds loads without them.
TEST(Compiler, TiersLeftOutAreNotEmbeddedAndTheManifestSaysSo) {
  REQUIRE_PTX_ROUTE();
  CompiledVariant v = compile_variant(ptx_toolchain(), tiled(16));
  TempDir out;
  BundleInput input;
  input.source = self_contained_source(kSourceDir / "kernels/matmul_tiled.cl", {});
  input.variants.push_back(v);
  input.tiers_left_out = {"spirv", "ptx"};
  const Manifest m = write_bundle(input, out.path);
  EXPECT_TRUE(m.leaves_out("spirv"));
  EXPECT_TRUE(m.leaves_out("ptx"));
  EXPECT_FALSE(m.leaves_out("source"));
  EXPECT_FALSE(m.variants.front().ptx);
  EXPECT_TRUE(fs::exists(out.path / "matmul_tiled_TILE16.spv"));
  EXPECT_FALSE(fs::exists(out.path / "matmul_tiled_TILE16.ptx"));
  const std::string cpp = read_text(out.path / "matmul_tiled.embed.cpp");
  EXPECT_EQ(cpp.find("kModule0"), std::string::npos);
  EXPECT_EQ(cpp.find("kPtx"), std::string::npos);
  EXPECT_NE(cpp.find("\"tiers_left_out\": [\n    \"ptx\",\n    \"spirv\"\n  ]"),
            std::string::npos);
  EXPECT_TRUE(validate_paths({out.path}).ok()) << validate_paths({out.path}).to_text();
  const InspectReport inspected = inspect_paths({out.path});
  ASSERT_EQ(inspected.families.size(), 1u);
  EXPECT_TRUE(inspected.ok()) << inspected.to_text();
  EXPECT_NE(inspected.to_text().find("left out of the product on purpose (TIERS)"),
            std::string::npos)
      << inspected.to_text();
  EXPECT_NE(inspected.to_text().find("ptx: left out on purpose (TIERS)"), std::string::npos);
  EXPECT_EQ(inspected.families[0].tier_bytes.count("spirv"), 0u);
  // Read back as a product embeds it: no modules, and the loader's plan
  // offers only the source, saying why not the rest.
  const Family family(std::make_shared<const FamilyBytes>(inspected.families[0].bytes));
  DeviceCaps caps;
  caps.platform_name = "NVIDIA CUDA";
  caps.device_version = "OpenCL 3.0 CUDA";
  caps.cl_major = 3;
  caps.cl_minor = 0;
  caps.il_version = "SPIR-V_1.2";
  caps.local_mem_bytes = 48 * 1024;
  caps.max_work_group_size = 1024;
  caps.max_work_item_sizes = {1024, 1024, 64};
  const Plan p = plan(family.manifest(), caps);
  ASSERT_EQ(p.chain.size(), 1u);
  EXPECT_EQ(p.chain[0].tier, Tier::Source);
  std::string reasons;
  for (const Step& s : p.rejected) reasons += s.reason + "\n";
  EXPECT_NE(reasons.find("the SPIR-V was left out of the bundle on purpose"), std::string::npos);
  EXPECT_NE(reasons.find("the PTX was left out of the bundle on purpose"), std::string::npos);
  EXPECT_TRUE(family.damaged().empty());
  input.tiers_left_out = {"source"};
  EXPECT_NE(error_of([&] { write_bundle(input, out.path); })
                .find("\"source\" is not a precompiled tier to leave out"),
            std::string::npos);
}

// PTX that ptxas rejects fails the build naming the variant and quoting
// ptxas: here a kernel that uses more shared memory than sm_90 has. Where
// the build has no ptxas, the same PTX is recorded as unvalidated.
TEST(Compiler, PtxThatPtxasRejectsFailsNamingTheVariant) {
  REQUIRE_PTX_ROUTE();
  TempDir dir;
  std::ofstream(dir.path / "huge.cl")
      << "kernel void huge(global float* x) {\n"
         "  local float big[64 * 1024];\n"  // 256 KiB of shared memory
         "  big[get_local_id(0)] = x[get_global_id(0)];\n"
         "  barrier(CLK_LOCAL_MEM_FENCE);\n"
         "  x[get_global_id(0)] = big[get_local_size(0) - 1 - get_local_id(0)];\n"
         "}\n";
  VariantRequest r;
  r.family = "huge";
  r.kernel = "huge";
  r.source = dir.path / "huge.cl";
  r.params = {{"N", 1}};
  if (ptx_toolchain().ptxas.empty()) {
    const CompiledVariant v = compile_variant(ptx_toolchain(), r);
    ASSERT_TRUE(v.manifest.variants.front().ptx);
    EXPECT_FALSE(v.manifest.variants.front().ptx->ptxas) << "no ptxas: recorded as unvalidated";
    return;
  }
  const std::string message = error_of([&] { compile_variant(ptx_toolchain(), r); });
  EXPECT_EQ(message.rfind("variant huge_N1: ptxas -arch=sm_90 rejected the PTX", 0), 0u) << message;
  EXPECT_NE(message.find("shared"), std::string::npos) << message;
}

// ptxas -v's report is read for the kernel's own block, not a helper's.
TEST(Compiler, PtxasReportIsReadForTheKernel) {
  const std::string out =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "    24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 254 registers, used 1 barriers, 24 bytes cumulative stack size, "
      "16640 bytes smem\n"
      "ptxas info    : Function properties for _Z7barrierj\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
  const PtxasReport r = parse_ptxas_report(out, "k");
  EXPECT_EQ(r.arch, "sm_90");
  EXPECT_EQ(r.registers, 254u);
  EXPECT_EQ(r.stack_frame_bytes, 24u);
  EXPECT_EQ(r.spill_store_bytes, 16u);
  EXPECT_EQ(r.spill_load_bytes, 8u);
  EXPECT_EQ(r.shared_bytes, 16640u);
  const std::string no_smem = std::regex_replace(out, std::regex(", 16640 bytes smem"), "");
  EXPECT_EQ(parse_ptxas_report(no_smem, "k").shared_bytes, 0u);
  EXPECT_NE(error_of([&] { parse_ptxas_report(out, "other"); }).find("'other'"), std::string::npos);
  EXPECT_NE(error_of([] { inspect_ptx(".version 5.0\n.target sm_60\n", "k"); }).find("no .entry k"),
            std::string::npos);
  EXPECT_NE(error_of([] { inspect_ptx(".target sm_60\n.entry k(", "k"); }).find(".version"),
            std::string::npos);
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
      input.variants.push_back(v);
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
