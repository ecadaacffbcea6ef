// The manifest of a kernel family: what fatcl-compile built for each variant
// of one OpenCL C kernel. Written at build time by the compiler, embedded in
// the product next to the SPIR-V modules and the OpenCL C source, and read by
// the loader to choose a variant for a device.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fatcl/launch_description.hpp"

namespace fatcl {

// Compile-time parameters in declaration order, e.g. {{"TILE", 16}}.
using ParamPoint = std::vector<std::pair<std::string, long long>>;

// One compile-time parameter point of a family, compiled to one SPIR-V module.
// What ptxas -v said about a PTX module's kernel for one architecture.
struct PtxasReport {
  std::string arch;  // "sm_90"
  std::size_t registers = 0;
  std::size_t stack_frame_bytes = 0;
  std::size_t spill_store_bytes = 0;
  std::size_t spill_load_bytes = 0;
  std::size_t shared_bytes = 0;  // static __local memory (smem)
};

// A variant's PTX, for NVIDIA's OpenCL (clCreateProgramWithBinary).
struct PtxModule {
  std::string file;         // beside the manifest, "<variant>.ptx"
  std::string target;       // .target, e.g. "sm_60"
  std::string ptx_version;  // .version, e.g. "5.0"
  std::size_t size = 0;     // bytes
  std::string sha256;       // of the PTX text, lower-case hex
  // ptxas's report; none when the build had no ptxas (the PTX is unvalidated).
  std::optional<PtxasReport> ptxas;
};

struct Variant {
  std::string name;  // e.g. "matmul_tiled_TILE16"
  ParamPoint params;
  std::string spirv_file;                 // file name of the module beside the manifest
  std::string spirv_version;              // "1.0": the version word of the module
  std::string target_env;                 // SPIRV-Tools environment it validated under
  std::vector<std::string> capabilities;  // OpCapability names
  std::array<std::size_t, 3> reqd_work_group_size{0, 0, 0};  // 0s: none
  std::size_t local_mem_bytes = 0;                           // __local memory the kernel declares
  // __local memory of every kernel in the module, what a driver that gives
  // each kernel its whole program's (Oclgrind) counts; 0 where a manifest
  // does not record it.
  std::size_t program_local_mem_bytes = 0;
  std::size_t spirv_size = 0;                                // bytes of the module
  std::string sha256;                                        // of the module, lower-case hex
  std::optional<PtxModule> ptx;  // none: built without libclc's NVPTX library

  // Work-items in the required work-group (product of reqd_work_group_size),
  // 0 when the kernel leaves the work-group size open.
  std::size_t work_group_items() const;
  // Value of a compile-time parameter; throws fatcl::Error if it is absent.
  long long param(std::string_view key) const;
  // "-DTILE=16 ..." for building the OpenCL C source of this variant.
  std::string define_options() const;
};

struct Manifest {
  // The file format: "format": "fatcl-manifest", "format_version": 1.
  static constexpr const char* kFormat = "fatcl-manifest";
  static constexpr std::size_t kFormatVersion = 1;

  std::string generator;      // "fatcl-compile <version>"
  std::string family;         // e.g. "matmul_tiled"
  std::string kernel;         // kernel function name inside the module
  std::string source_file;    // file name of the OpenCL C source
  std::string source_sha256;  // of the (self-contained) source compiled
  // false: the bundle embeds no OpenCL C (NO_SOURCE): precompiled tiers only.
  bool source_embedded = true;
  // The precompiled tiers the product chose not to embed ("ptx", "spirv";
  // fatcl_add_kernel_variants' TIERS): their modules are still built and
  // validated, and the manifest keeps their records, but the embedded
  // family carries no code for them.
  std::vector<std::string> tiers_left_out;
  std::string language;                          // "CL1.2": the -cl-std the variants use
  std::vector<std::string> compile_flags;        // clang flags, no -D
  std::map<std::string, std::string> toolchain;  // tool -> version line
  std::vector<Variant> variants;
  // How to launch the kernel (fatcl_add_kernel_variants' LAUNCH), checked
  // against every variant when the bundle was built; none: not described.
  std::optional<LaunchDescription> launch;

  // Parses manifest JSON strictly (format version, types, ranges, array
  // lengths, unique names); throws fatcl::Error naming the variant and
  // field at fault and the cause.
  static Manifest parse(std::string_view json);
  // Deterministic JSON text (sorted keys, two-space indent, final newline).
  std::string dump() const;
  // Whether the bundle leaves out the tier "spirv", "ptx" or "source" on purpose.
  bool leaves_out(std::string_view tier) const;
  // The variant of that name; throws fatcl::Error if there is none.
  const Variant& variant(std::string_view name) const;
};

// A C identifier (letters, digits and _, not starting with a digit): what
// family, kernel, variant and parameter names must be, since they become
// file names, -D options and C++ names.
bool is_identifier(std::string_view s);

// Lower-case hex SHA-256 of bytes (OpenSSL), as manifests record them.
std::string sha256_hex(const void* data, std::size_t size);

}  // namespace fatcl
