// Whether the offline compiler's tools are on PATH, and the skip that says
// how to install them.
#pragma once

#include <cstdlib>
#include <string>

namespace fatcl::test {

inline bool on_path(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace fatcl::test

#define REQUIRE_TOOLCHAIN()                                                            \
  if (!::fatcl::test::on_path("clang-15") || !::fatcl::test::on_path("llvm-spirv-15")) { \
    GTEST_SKIP() << "clang-15 or llvm-spirv-15 not on PATH (apt-get install clang-15 " \
                    "llvm-spirv-15)";                                                  \
  }
