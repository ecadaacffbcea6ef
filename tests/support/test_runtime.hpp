// The OpenCL runtime a runtime test's ctest entry names by its environment:
//   FATCL_TEST_PLATFORM   substring of the platform name to use (required)
//   FATCL_TEST_NEEDS      a file the runtime needs (e.g. the built PoCL's .icd)
//   FATCL_REQUIRE_RUNTIMES  set: a missing runtime fails instead of skipping
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fatcl/loader.hpp"

namespace fatcl::test {

inline std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct OpenedRuntime {
  std::string missing;  // why the runtime is not there; "" if it is
  cl::Device device;
  cl::Context context;
  cl::CommandQueue queue;
};

// The first device of the platform FATCL_TEST_PLATFORM names, with a
// context and an in-order queue; or why there is none.
inline OpenedRuntime open_runtime_from_env() {
  OpenedRuntime r;
  const std::string wanted = env("FATCL_TEST_PLATFORM");
  if (wanted.empty()) {
    r.missing = "FATCL_TEST_PLATFORM is not set (run through ctest)";
    return r;
  }
  const std::string needs = env("FATCL_TEST_NEEDS");
  if (!needs.empty() && !std::filesystem::exists(needs)) {
    // The scripts in tests/runtimes leave the reason of a failed set-up beside it.
    std::ifstream why(std::filesystem::path(needs).parent_path() / "build-failed.txt");
    std::string reason;
    std::getline(why, reason);
    r.missing = "runtime not installed: " + needs + " is missing (" +
                (reason.empty() ? "set it up with its script in tests/runtimes/" : reason) + ")";
    return r;
  }
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  std::string seen;
  for (const cl::Platform& p : platforms) {
    std::string name;
    p.getInfo(CL_PLATFORM_NAME, &name);
    while (!name.empty() && name.back() == '\0') name.pop_back();
    seen += (seen.empty() ? "" : ", ") + name;
    if (name.find(wanted) == std::string::npos) continue;
    std::vector<cl::Device> devices;
    p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    if (devices.empty()) continue;
    cl_int err = CL_SUCCESS;
    r.device = devices.front();
    r.context = cl::Context(r.device, nullptr, nullptr, nullptr, &err);
    if (err == CL_SUCCESS) r.queue = cl::CommandQueue(r.context, r.device, 0, &err);
    if (err != CL_SUCCESS) r.missing = "cannot open " + name + ": " + cl_status_name(err);
    return r;
  }
  r.missing = "no OpenCL platform \"" + wanted +
              "\" with a device (platforms seen: " + (seen.empty() ? "none" : seen) + "); " +
              find_icds().to_string();
  return r;
}

}  // namespace fatcl::test

// Skips a test whose runtime is missing (fails it under FATCL_REQUIRE_RUNTIMES).
#define FATCL_REQUIRE_RUNTIME(missing)                          \
  do {                                                          \
    if (!(missing).empty()) {                                   \
      if (!fatcl::test::env("FATCL_REQUIRE_RUNTIMES").empty()) { \
        FAIL() << (missing);                                    \
      }                                                         \
      GTEST_SKIP() << (missing);                                \
    }                                                           \
  } while (0)
