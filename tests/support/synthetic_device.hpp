// A device described by hand, for tests of plan(), quirks and rankings
// that run without OpenCL.
#pragma once

#include <cstdint>
#include <string>

#include "fatcl/loader.hpp"

namespace fatcl::test {

// OpenCL major.minor, `il` as CL_DEVICE_IL_VERSION, local memory in KiB and
// the work-group limit (also each work-item dimension's).
inline DeviceCaps device(std::uint64_t local_kib, std::size_t max_group, int major, int minor,
                         std::string il, bool khr_il = false) {
  DeviceCaps caps;
  caps.platform_name = "synthetic";
  caps.device_name = "device";
  caps.device_version = "OpenCL " + std::to_string(major) + "." + std::to_string(minor);
  caps.driver_version = "1";
  caps.cl_major = major;
  caps.cl_minor = minor;
  caps.il_version = std::move(il);
  caps.khr_il_program = khr_il;
  caps.local_mem_bytes = local_kib * 1024;
  caps.max_work_group_size = max_group;
  caps.max_work_item_sizes = {max_group, max_group, max_group};
  return caps;
}

}  // namespace fatcl::test
