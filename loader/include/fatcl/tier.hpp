// The ways fatcl turns a variant into a program, in the order it tries them.
#pragma once

#include <string_view>
#include <vector>

namespace fatcl {

// How a variant is turned into a program: its SPIR-V module through
// clCreateProgramWithIL(KHR), its PTX through clCreateProgramWithBinary
// (NVIDIA's OpenCL), or its OpenCL C source with its -D parameters. Each
// tier is a strategy (loader/src/tiers.cpp); they are tried in this order.
enum class Tier { SpirV, Ptx, Source };
const char* to_string(Tier tier);  // "spirv" / "ptx" / "source"
// Parses "spirv", "ptx" or "source"; throws fatcl::Error otherwise.
Tier parse_tier(std::string_view text);
// Every tier, in the order the loader tries them.
const std::vector<Tier>& all_tiers();

}  // namespace fatcl
