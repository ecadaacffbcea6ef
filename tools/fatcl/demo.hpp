// The fatcl tool's commands, called by main.cpp.
#pragma once

#include <cstddef>
#include <string>

namespace fatcl::tool {

struct DemoOptions {
  std::size_t m = 1024, n = 1024, k = 1024;
  int repetitions = 3;
  std::string platform;  // substring of the platform name; "" = first with a device
  int device = 0;        // index within that platform
  std::string variant;   // force a variant
  std::string tier;      // force a tier
  bool clblast = true;
};

// Lists platforms and devices with what fatcl reads off them. Returns 0.
int list_devices();
// Runs the demo; returns 0 if every checked product matched the reference.
int run_demo(const DemoOptions& options);

}  // namespace fatcl::tool
