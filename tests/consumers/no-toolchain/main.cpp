// Reads back the bundled families built from the committed copies.
#include <fatcl/matmul.hpp>
#include <iostream>

int main() {
  try {
    const fatcl::Family& tiled = fatcl::matmul_family(fatcl::MatmulKernel::Tiled);
    const fatcl::Family& naive = fatcl::matmul_family(fatcl::MatmulKernel::Naive);
    bool ok = tiled.manifest().variants.size() == 4 && naive.manifest().variants.size() == 1 &&
              tiled.spirv("matmul_tiled_TILE32").size() ==
                  tiled.manifest().variant("matmul_tiled_TILE32").spirv_size &&
              tiled.source().find("__kernel") != std::string_view::npos;
    std::cout << (ok ? "consumer OK" : "consumer FAILED") << "\n";
    return ok ? 0 : 1;
  } catch (const fatcl::Error& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
}
