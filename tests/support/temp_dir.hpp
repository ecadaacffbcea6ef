// A temporary folder under /tmp, removed with everything in it at scope exit.
#pragma once

#include <stdlib.h>

#include <filesystem>

namespace fatcl::test {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char name[] = "/tmp/fatcl-test-XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace fatcl::test
