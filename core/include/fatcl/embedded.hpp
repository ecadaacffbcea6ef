// What fatcl_add_kernel_variants() embeds into a library for one kernel
// family: the manifest, the self-contained OpenCL C source (for the source
// fallback), the SPIR-V modules and the PTX. Plain data, defined by generated code;
// fatcl::Family (loader.hpp) reads it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace fatcl {

struct EmbeddedModule {
  const char* variant;        // variant name, as in the manifest
  const unsigned char* data;  // SPIR-V words as little-endian bytes, or PTX text
  std::size_t size;           // bytes
};

struct EmbeddedFamily {
  const char* manifest_json;
  std::size_t manifest_size;
  const char* source;  // OpenCL C, quoted #includes inlined
  std::size_t source_size;
  const EmbeddedModule* modules;
  std::size_t module_count;
  // PTX text per variant that has one (NVIDIA); none: nullptr, 0.
  const EmbeddedModule* ptx_modules = nullptr;
  std::size_t ptx_module_count = 0;
};

// A family's bytes read from a bundle folder or found in a binary (fatcl
// inspect, fatcl validate --device): owned copies of what an EmbeddedFamily
// points to. fatcl::Family reads them as it reads an embedded family.
struct FamilyBytes {
  std::string manifest_json;
  std::string source;  // "" where the bundle carries none (NO_SOURCE)
  std::vector<std::pair<std::string, std::string>> spirv;  // variant, module
  std::vector<std::pair<std::string, std::string>> ptx;    // variant, PTX text
};

}  // namespace fatcl
