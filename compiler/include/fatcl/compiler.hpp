// fatcl's offline compiler: OpenCL C -> validated SPIR-V variants, and the
// bundle (manifest + embedding source) that a product links.
//
// The route per variant, chosen so that every module validates:
//   clang-15 -cl-std=CL1.2 -target spir64 -O0 -emit-llvm
//   llvm-spirv-15 --spirv-max-version=1.0
//   SPIRV-Tools validation under the OpenCL environment the module declares.
// Why -O0: llvm-spirv-15 writes basic blocks in LLVM's layout order, and
// SPIR-V requires every block to appear after the blocks that dominate it.
// clang emits blocks in source order, which satisfies that; -O2's loop passes
// leave e.g. an outer-loop latch before the inner loop that dominates it
// (TILE=32: "appears in the binary before its dominator"). -O3 happened to
// validate only because it fully unrolled that inner loop. Drivers optimise
// SPIR-V when they build it, so nothing is lost at run time.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fatcl/embedded.hpp"
#include "fatcl/manifest.hpp"

namespace fatcl {

// The external tools of the route. Names are looked up on PATH unless they
// contain a '/'.
struct Toolchain {
  std::string clang = "clang-15";
  std::string llvm_spirv = "llvm-spirv-15";
  // Cleans the SPIR-V route's -O0 IR (kSpirvPasses) and optimises the PTX
  // route's.
  std::string opt = "opt-15";
  // The PTX route for NVIDIA's OpenCL: clang (-target nvptx64-nvidia-nvcl
  // -O3), linked with libclc's NVPTX library, optimised again with opt so
  // that its built-ins inline, then llc. All three set, or no PTX is made.
  std::string llvm_link;          // "llvm-link-15"
  std::string llc;                // "llc-15"
  std::string libclc_nvptx;       // "/usr/lib/clc/nvptx64--nvidiacl.bc"
  std::string ptx_cpu = "sm_60";  // newest LLVM 15 knows well; drivers JIT it up
  // ptxas (CUDA toolkit) assembles every PTX for ptx_arch and reports its
  // registers, stack frame, spills and shared memory; "": PTX unvalidated.
  std::string ptxas;
  std::string ptx_arch = "sm_90";

  bool makes_ptx() const { return !llvm_link.empty() && !llc.empty() && !libclc_nvptx.empty(); }

  // Version line of each tool (and of the linked SPIRV-Tools library), for
  // the manifest. Throws fatcl::Error naming a tool that does not run.
  std::map<std::string, std::string> versions() const;
};

// What to do with a barrier that only some work-items of a group may reach
// (divergent_barriers): refuse the module (the default), build it with a
// warning, or not look.
enum class BarrierCheck { Refuse, Warn, Off };
// "refuse", "warn" or "off"; throws fatcl::Error naming the three otherwise.
BarrierCheck parse_barrier_check(const std::string& text);

struct VariantRequest {
  std::string family;  // e.g. "matmul_tiled"
  std::string kernel;  // kernel function the module must contain
  std::filesystem::path source;
  std::vector<std::filesystem::path> include_dirs;  // for quoted #includes
  ParamPoint params;                                // e.g. {{"TILE", 16}}
  // Extra clang flags appended after fatcl's own (experiments only: e.g.
  // "-O2" reproduces the invalid TILE=32 module; validation still runs).
  std::vector<std::string> extra_clang_flags;
  std::string spirv_max_version = "1.0";
  // Toolchain::versions(), when already known (a family's variants share it).
  std::map<std::string, std::string> toolchain_versions;
  BarrierCheck barrier_check = BarrierCheck::Refuse;
};

struct CompiledVariant {
  Manifest manifest;  // the family's manifest with just this variant
  std::vector<std::uint32_t> spirv;
  std::string ptx;                            // "" when the toolchain makes no PTX
  std::vector<std::filesystem::path> inputs;  // source and headers read
  std::vector<std::string> warnings;          // e.g. a barrier found under BarrierCheck::Warn
};

// "matmul_tiled_TILE16" for family "matmul_tiled" and {{"TILE", 16}}.
std::string variant_name(const std::string& family, const ParamPoint& params);

// A family's parameter grid: the Cartesian product of `params`, plus the
// explicit `points`, keeping the product's points for which every constraint
// (an integer C expression over the parameters, e.g. "MWG % MDIMC == 0") is
// non-zero. Explicit points were chosen: one that breaks a constraint, names
// other parameters than the rest or repeats is an error.
struct ParamGrid {
  std::vector<std::pair<std::string, std::vector<long long>>> params;
  std::vector<ParamPoint> points;
  std::vector<std::string> constraints;
};
// The points, in order (product first). `dropped` gets how many points of the
// product the constraints removed. Throws fatcl::Error naming the constraint
// or point at fault.
std::vector<ParamPoint> expand_grid(const ParamGrid& grid, std::size_t* dropped = nullptr);
// The value of a constraint at a point; throws fatcl::Error for a syntax
// error, an unknown parameter, division by zero or overflow.
long long evaluate_constraint(const std::string& expression, const ParamPoint& point);
// "MWG=128,NWG=64" or "MWG=128 NWG=64"; throws fatcl::Error if malformed.
ParamPoint parse_point(const std::string& text);

// The OpenCL C source with quoted #includes inlined (each file once, with
// #line markers), so that the source fallback needs no files at run time.
// Fills `inputs` with every file read. Throws fatcl::Error naming a missing
// include.
std::string self_contained_source(const std::filesystem::path& source,
                                  const std::vector<std::filesystem::path>& include_dirs,
                                  std::vector<std::filesystem::path>* inputs = nullptr);

// Compiles, translates and validates one variant. Throws fatcl::Error whose
// message starts with "variant <name>: " and carries the compiler's or the
// validator's own message.
CompiledVariant compile_variant(const Toolchain& toolchain, const VariantRequest& request);

// ptxas -v's report for `kernel` (its "Compiling entry function" block).
// Throws fatcl::Error when the output has no such block or its numbers.
PtxasReport parse_ptxas_report(const std::string& output, const std::string& kernel);

// The .version and .target of PTX text, and whether it has `.entry kernel`;
// throws fatcl::Error naming what is missing.
struct PtxInfo {
  std::string version;  // "5.0"
  std::string target;   // "sm_60"
};
PtxInfo inspect_ptx(const std::string& ptx, const std::string& kernel);

// What fatcl reads off a SPIR-V module.
struct ModuleInfo {
  std::string version;                                       // "1.0"
  std::string target_env;                                    // "opencl1.2", from OpSource
  std::vector<std::string> capabilities;                     // in module order
  std::vector<std::string> entry_points;                     // kernel names
  std::array<std::size_t, 3> reqd_work_group_size{0, 0, 0};  // of `kernel`
  // The Workgroup variables `kernel` uses, itself or through the functions
  // it calls (a module's other kernels declare their own); all the
  // module's where it has no such kernel.
  std::size_t local_mem_bytes = 0;
  std::size_t program_local_mem_bytes = 0;  // of every kernel in the module
};

// What is wrong with the module's header (too short, magic number, version
// word, id bound), or "" if nothing.
std::string module_header_problem(const std::vector<std::uint32_t>& spirv);

// Reads the module with SPIRV-Tools' binary parser; `kernel` selects whose
// LocalSize and __local memory are reported. Throws fatcl::Error (and nothing else) naming what
// is wrong if the words are not a well-formed module or a __local
// variable's size cannot be worked out.
ModuleInfo inspect_module(const std::vector<std::uint32_t>& spirv, const std::string& kernel);

// Barriers that only some work-items of a group may reach: one in a block
// that is control-dependent on a branch whose condition depends on the
// work-item (get_local_id, get_global_id, values computed or stored from
// them), or a call under such a branch of a function that reaches one.
// OpenCL requires every work-item of a group to reach each barrier; a
// kernel that breaks this hangs or miscomputes without a word from the
// driver. Conservative (a value that might vary is taken to), so it can
// name a barrier that is in fact reached by all. One line per finding,
// sorted; empty if none. Throws fatcl::Error if the module does not parse.
std::vector<std::string> divergent_barriers(const std::vector<std::uint32_t>& spirv);

// Validates with SPIRV-Tools under `target_env` (a spirv-val --target-env
// name, e.g. "opencl1.2"); an empty env means the one the module declares.
// Throws fatcl::Error with the validator's messages.
void validate_module(const std::vector<std::uint32_t>& spirv, std::string target_env = "");

// sha256_hex(): fatcl/manifest.hpp.

// Writes the family bundle into `out_dir`, each file whole or not at all:
//   manifest.json, <variant>.spv (and .ptx) for each variant, <family>.embed.cpp and
//   <family>.hpp declaring `const fatcl::EmbeddedFamily& <ns>::<family>()`.
// `variants` are single-variant manifests (as compile_variant returns) with
// their modules; they must agree on family, kernel, flags and toolchain.
struct BundleInput {
  std::vector<CompiledVariant> variants;  // manifest, module, PTX (if any)
  std::string source;                     // self-contained OpenCL C
  std::string cpp_namespace = "fatcl_kernels";
  bool embed_source = true;  // false (NO_SOURCE): no OpenCL C in the bundle
  // Precompiled tiers not embedded ("spirv", "ptx"; TIERS): the SPIR-V is
  // still written beside the manifest and validated, the PTX is dropped.
  std::vector<std::string> tiers_left_out;
  // How to launch the kernel (LAUNCH), checked against every variant and
  // kept in the manifest; none: not described.
  std::optional<LaunchDescription> launch;
};
Manifest write_bundle(const BundleInput& input, const std::filesystem::path& out_dir);

// A whole family: every point of `grid` compiled and validated (`jobs` at a
// time; 0: one per hardware thread) and written as one bundle. Throws
// fatcl::Error listing every variant that failed, each as "variant <name>:
// <reason>", and writes nothing then.
struct FamilyRequest {
  VariantRequest base;  // family, kernel, source, include dirs, flags; params unused
  ParamGrid grid;
  std::string cpp_namespace = "fatcl_kernels";
  unsigned jobs = 0;
  bool embed_source = true;  // false (NO_SOURCE): no OpenCL C in the bundle
  std::vector<std::string> tiers_left_out;  // as BundleInput's
  std::optional<LaunchDescription> launch;   // as BundleInput's
};
struct CompiledFamily {
  Manifest manifest;
  std::vector<std::filesystem::path> inputs;  // source and headers read
  std::size_t dropped = 0;                    // grid points the constraints removed
  std::vector<std::string> warnings;          // "variant <name>: ...", from each variant
  // What the product embeds, per tier ("spirv", "ptx", "source"); a tier
  // left out has none.
  std::map<std::string, std::size_t> embedded_bytes;
  // "embedded: spirv 120.0 KiB, ptx 410.2 KiB, source 12.3 KiB (544.5 KiB);
  // left out on purpose: ptx"
  std::string size_report() const;
};
CompiledFamily compile_family(const Toolchain& toolchain, const FamilyRequest& request,
                              const std::filesystem::path& out_dir);

// Offline validation of kernel bundles (fatcl validate, fatcl-compile
// validate, fatcl_add_validation_test). Each path is a bundle folder
// (manifest.json and its modules), a manifest file, or a SPIR-V module; a
// module with a manifest.json beside it that lists it is checked against
// that entry too. Every module is validated by SPIRV-Tools under the target
// environment its manifest entry declares (or, alone, the one the module
// declares), and its manifest entry is checked against it: size, SHA-256,
// entry point, reqd_work_group_size, __local bytes, SPIR-V version and
// capabilities. Never throws for bad input: every problem is one entry.
struct ValidationProblem {
  std::string file;     // the file at fault
  std::string variant;  // the manifest entry concerned, "" if none
  std::string check;    // what failed: "read", "manifest", "size", "sha256", "spirv-val", ...
  std::string message;  // one line, naming the cause
};
struct ValidatedModule {
  std::string file;
  std::string variant;     // "" for a module checked without a manifest
  std::string target_env;  // the environment it validated under
  std::string spirv_version;
};
struct ValidationReport {
  std::vector<ValidatedModule> valid;  // modules that passed every check
  std::vector<ValidationProblem> problems;
  std::vector<ValidationProblem> warnings;  // found, but not failing (BarrierCheck::Warn)
  bool ok() const { return problems.empty(); }
  // One line per valid module ("ok: ...") and per problem ("<file>: ...").
  std::string to_text() const;
  // {"ok": bool, "valid": [...], "problems": [...]}, two-space indent.
  std::string to_json() const;
};
// `barriers`: a barrier only some work-items may reach (divergent_barriers)
// is a problem ("barrier"), a warning, or not looked for.
ValidationReport validate_paths(const std::vector<std::filesystem::path>& paths,
                                BarrierCheck barriers = BarrierCheck::Refuse);

// What a bundle or a product binary holds (fatcl inspect), as cuobjdump
// lists a CUDA fat binary. A path is a bundle folder, its manifest.json, or
// a binary (a program or library) with families embedded: each manifest in
// its bytes is found and parsed, and each module, PTX text and source found
// by its SHA-256. Never throws for bad input: each problem is a line.
struct InspectedTier {
  std::string tier;     // "spirv", "ptx"
  std::size_t bytes = 0;
  std::string sha256;
  std::string what;     // version, target, capabilities, ptxas's report
  std::string problem;  // "" if present and matching its record
  bool left_out = false;  // not embedded on purpose (TIERS): not looked for
};
struct InspectedVariant {
  std::string name;
  std::vector<InspectedTier> tiers;  // as the manifest records them
};
struct InspectedFamily {
  std::string origin;  // the bundle folder, or the binary and the manifest's offset
  Manifest manifest;
  std::vector<InspectedVariant> variants;  // in manifest order
  std::size_t source_bytes = 0;
  std::map<std::string, std::size_t> tier_bytes;  // "spirv", "ptx", "source" -> bytes
  std::vector<std::string> problems;
  // What was found, for a fatcl::Family to read (fatcl validate --device).
  FamilyBytes bytes;
};
struct InspectReport {
  std::vector<InspectedFamily> families;
  std::vector<std::string> problems;  // paths that could not be read as either
  bool ok() const {
    for (const InspectedFamily& f : families) {
      if (!f.problems.empty()) return false;
    }
    return problems.empty();
  }
  // Per family: origin, toolchain, source, each variant with its tiers, the
  // size per tier; a total over the families.
  std::string to_text() const;
  std::string to_json() const;  // {"ok", "families": [...], "problems"}
};
InspectReport inspect_paths(const std::vector<std::filesystem::path>& paths);

// Read files whole (writes go through core's atomic writer).
std::vector<std::uint32_t> read_spirv(const std::filesystem::path& path);
std::string read_text(const std::filesystem::path& path);

}  // namespace fatcl
