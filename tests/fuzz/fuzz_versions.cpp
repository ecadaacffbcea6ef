// libFuzzer: the strings drivers report: CL_DEVICE_VERSION,
// CL_DEVICE_IL_VERSION against a module's SPIR-V version, CL_DRIVER_VERSION
// against the quirk table's ranges, and the summary and key built from them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fatcl/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = text.find('\n');
  const std::string first = text.substr(0, cut);
  const std::string rest = cut == std::string::npos ? "" : text.substr(cut + 1);
  fatcl::DeviceCaps caps;
  caps.device_version = first;
  caps.il_version = rest;
  caps.platform_name = rest;
  caps.device_name = rest;
  caps.driver_version = first;
  if (!fatcl::parse_opencl_version(first, &caps.cl_major, &caps.cl_minor)) {
    caps.cl_major = 3;
    caps.cl_minor = 0;
  }
  std::string why;
  caps.accepts_spirv(first, &why);
  caps.khr_il_program = true;
  caps.accepts_spirv(rest, &why);
  int major = 0, minor = 0;
  fatcl::parse_version(rest, &major, &minor);
  caps.summary();
  caps.key();
  fatcl::driver_quirks(caps);
  fatcl::driver_version_in(first, "22.3", "");
  fatcl::driver_version_in(rest, "", "580.159.04");
  return 0;
}
