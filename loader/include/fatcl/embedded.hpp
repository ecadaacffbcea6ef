// What fatcl_add_kernel_variants() embeds into a library for one kernel
// family: the manifest, the self-contained OpenCL C source (for the source
// fallback) and the SPIR-V modules. Plain data, defined by generated code;
// fatcl::Family (loader.hpp) reads it.
#pragma once

#include <cstddef>

namespace fatcl {

struct EmbeddedModule {
  const char* variant;        // variant name, as in the manifest
  const unsigned char* data;  // SPIR-V words as little-endian bytes
  std::size_t size;           // bytes
};

struct EmbeddedFamily {
  const char* manifest_json;
  std::size_t manifest_size;
  const char* source;  // OpenCL C, quoted #includes inlined
  std::size_t source_size;
  const EmbeddedModule* modules;
  std::size_t module_count;
};

}  // namespace fatcl
