// A consumer of fatcl: its own kernel family built with
// fatcl_add_kernel_variants(), plus the bundled SGEMM. Exits 0 when both
// embedded families read back as expected; no OpenCL device needed.
#include <fatcl/loader.hpp>
#include <fatcl/matmul.hpp>
#include <iostream>

#include "saxpy.hpp"

int main() {
  try {
    fatcl::Family saxpy(fatcl_kernels::saxpy());
    const fatcl::Manifest& m = saxpy.manifest();
    std::cout << m.family << ":";
    for (const fatcl::Variant& v : m.variants) std::cout << " " << v.name;
    std::cout << "\n";
    bool ok = m.variants.size() == 6 && m.variants[5].name == "saxpy_WPT4_VW4" &&
              saxpy.source().find("#define SAXPY") != std::string_view::npos &&
              saxpy.spirv("saxpy_WPT2_VW1").size() == m.variant("saxpy_WPT2_VW1").spirv_size;
    ok = ok && fatcl::matmul_family(fatcl::MatmulKernel::Tiled).manifest().variants.size() == 4;
    std::cout << (ok ? "consumer OK" : "consumer FAILED") << "\n";
    return ok ? 0 : 1;
  } catch (const fatcl::Error& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
}
