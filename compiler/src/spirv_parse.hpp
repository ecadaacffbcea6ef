// Walking a SPIR-V module with SPIRV-Tools' binary parser, for the readers
// of modules in the compiler (spirv_module.cpp, uniformity.cpp).
#pragma once

#include <cstdint>
#include <spirv-tools/libspirv.h>
#include <vector>

namespace fatcl::detail {

// Calls `on_instruction(user, ...)` for each instruction of `spirv` in
// order. Throws fatcl::Error("SPIRV-Tools cannot parse the module: ... (word
// N)") if the words are not a well-formed module.
void parse_spirv(const std::vector<std::uint32_t>& spirv, void* user,
                 spv_parsed_instruction_fn_t on_instruction);

}  // namespace fatcl::detail
