// The PTX route of one variant, for NVIDIA's OpenCL.
#pragma once

#include <filesystem>
#include <string>

#include "fatcl/compiler.hpp"

namespace fatcl::detail {

struct PtxBuild {
  std::string text;  // the PTX
  PtxModule module;  // its manifest record
};

// Compiles the self-contained source `cl` (in the scratch folder `dir`) for
// the variant's parameters, as OpenCL C `language` (e.g. "CL1.2", what the
// SPIR-V route uses too), to PTX and, with ptxas, assembles it for
// toolchain.ptx_arch. Throws fatcl::Error naming the failing step and, for
// PTX that ptxas rejects, what ptxas said.
PtxBuild compile_ptx(const Toolchain& toolchain, const VariantRequest& request,
                     const std::string& language, const std::string& variant,
                     const std::filesystem::path& cl, const std::filesystem::path& dir);

}  // namespace fatcl::detail
