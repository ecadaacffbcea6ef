// Synthetic manifests for selection tests: the tiled family's shape without
// a compiler run.
#pragma once

#include <string>
#include <vector>

#include "fatcl/manifest.hpp"

namespace fatcl::test {

inline Variant tiled_variant(std::size_t tile, std::string spirv_version = "1.0") {
  Variant v;
  v.name = "matmul_tiled_TILE" + std::to_string(tile);
  v.params = {{"TILE", static_cast<long long>(tile)}};
  v.spirv_file = v.name + ".spv";
  v.spirv_version = spirv_version;
  v.target_env = "opencl1.2";
  v.capabilities = {"Addresses", "Linkage", "Kernel", "Int64"};
  v.reqd_work_group_size = {tile, tile, 1};
  v.local_mem_bytes = 2 * tile * (tile + 1) * 4;
  v.spirv_size = 20;
  v.sha256 = std::string(64, '0');
  return v;
}

inline Manifest tiled_manifest(const std::vector<std::size_t>& tiles) {
  Manifest m;
  m.generator = "test";
  m.family = "matmul_tiled";
  m.kernel = "matmul_tiled";
  m.source_file = "matmul_tiled.cl";
  m.source_sha256 = std::string(64, '0');
  m.language = "CL1.2";
  m.compile_flags = {"-O0"};
  m.toolchain = {{"clang", "test"}};
  for (std::size_t t : tiles) m.variants.push_back(tiled_variant(t));
  return m;
}

}  // namespace fatcl::test
