// DeviceCaps: reading a device, and what its IL version lets it take.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "fatcl/loader.hpp"

namespace fatcl {
namespace {

std::string device_string(const cl::Device& device, cl_device_info what, const char* name) {
  std::size_t size = 0;
  const std::string call = std::string("clGetDeviceInfo(") + name + ")";
  check_cl(clGetDeviceInfo(device(), what, 0, nullptr, &size), call);
  // NVIDIA reports an empty CL_DEVICE_IL_VERSION with size 1 (just the NUL).
  std::string value(size, '\0');
  if (size > 0) check_cl(clGetDeviceInfo(device(), what, size, value.data(), nullptr), call);
  while (!value.empty() && (value.back() == '\0' || value.back() == ' ')) value.pop_back();
  return value;
}

template <typename T>
T device_value(const cl::Device& device, cl_device_info what, const char* name) {
  T value{};
  check_cl(clGetDeviceInfo(device(), what, sizeof value, &value, nullptr),
           std::string("clGetDeviceInfo(") + name + ")");
  return value;
}

// "1.2" -> 102; "" or malformed -> -1 (no sscanf: an out-of-range %d is
// undefined behaviour, and these strings come from drivers).
int version_number(std::string_view text) {
  int major = 0, minor = 0;
  if (!parse_version(text, &major, &minor) || minor > 99) return -1;
  return major * 100 + minor;
}

}  // namespace

DeviceCaps DeviceCaps::query(const cl::Device& device) {
  DeviceCaps caps;
  cl_platform_id platform =
      device_value<cl_platform_id>(device, CL_DEVICE_PLATFORM, "CL_DEVICE_PLATFORM");
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size) == CL_SUCCESS && size) {
    caps.platform_name.resize(size);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, caps.platform_name.data(), nullptr);
    while (!caps.platform_name.empty() && caps.platform_name.back() == '\0') {
      caps.platform_name.pop_back();
    }
  }
  caps.device_name = device_string(device, CL_DEVICE_NAME, "CL_DEVICE_NAME");
  caps.driver_version = device_string(device, CL_DRIVER_VERSION, "CL_DRIVER_VERSION");
  caps.device_version = device_string(device, CL_DEVICE_VERSION, "CL_DEVICE_VERSION");
  if (!parse_opencl_version(caps.device_version, &caps.cl_major, &caps.cl_minor)) {
    throw Error("CL_DEVICE_VERSION \"" + caps.device_version.substr(0, 80) +
                "\" is not \"OpenCL <major>.<minor> ...\"");
  }
  const std::string extensions =
      device_string(device, CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS");
  caps.khr_il_program = (" " + extensions + " ").find(" cl_khr_il_program ") != std::string::npos;
  // CL_DEVICE_IL_VERSION is core in 2.1; CL_DEVICE_IL_VERSION_KHR (the same
  // enum value) comes with the extension. Other devices must not be asked.
  if (caps.il_is_core() || caps.khr_il_program) {
    caps.il_version = device_string(device, CL_DEVICE_IL_VERSION, "CL_DEVICE_IL_VERSION");
  }
  caps.device_type = device_value<cl_device_type>(device, CL_DEVICE_TYPE, "CL_DEVICE_TYPE");
  caps.local_mem_bytes =
      device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE");
  caps.max_mem_alloc_bytes =
      device_value<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
  caps.global_mem_bytes =
      device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE, "CL_DEVICE_GLOBAL_MEM_SIZE");
  caps.compute_units =
      device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS");
  caps.max_work_group_size = device_value<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                                       "CL_DEVICE_MAX_WORK_GROUP_SIZE");
  std::size_t sizes[3] = {0, 0, 0};
  check_cl(clGetDeviceInfo(device(), CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr),
           "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
  caps.max_work_item_sizes = {sizes[0], sizes[1], sizes[2]};
  caps.fused_multiply_add = (device_value<cl_device_fp_config>(device, CL_DEVICE_SINGLE_FP_CONFIG,
                                                               "CL_DEVICE_SINGLE_FP_CONFIG") &
                             CL_FP_FMA) != 0;
  return caps;
}

bool DeviceCaps::accepts_spirv(const std::string& version, std::string* why) const {
  auto refuse = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (!il_is_core() && !khr_il_program) {
    return refuse("OpenCL " + std::to_string(cl_major) + "." + std::to_string(cl_minor) +
                  " without cl_khr_il_program takes no IL");
  }
  if (il_version.empty()) {
    return refuse("CL_DEVICE_IL_VERSION is empty: the driver takes no SPIR-V");
  }
  // "SPIR-V_1.2 SPIR-V_1.0 ...": SPIR-V is backward compatible, so the
  // highest listed version bounds what the device takes.
  int best = -1;
  std::istringstream in(il_version);
  for (std::string token; in >> token;) {
    if (token.rfind("SPIR-V_", 0) == 0) best = std::max(best, version_number(token.substr(7)));
  }
  if (best < 0) {
    return refuse("CL_DEVICE_IL_VERSION \"" + il_version.substr(0, 80) +
                  "\" lists no SPIR-V version");
  }
  const int wanted = version_number(version);
  if (wanted < 0) {
    return refuse("the module's SPIR-V version \"" + version.substr(0, 40) + "\" is malformed");
  }
  if (wanted > best) {
    return refuse("the device takes SPIR-V up to " + std::to_string(best / 100) + "." +
                  std::to_string(best % 100) + ", the module is SPIR-V " + version);
  }
  return true;
}

std::string DeviceCaps::key() const {
  return platform_name + "|" + device_name + "|" + device_version + "|" + driver_version;
}

std::string DeviceCaps::summary() const {
  std::string spirv = il_version.empty() ? "none" : il_version;
  std::string why;
  if (!accepts_spirv("1.0", &why)) spirv += " (" + why + ")";
  return device_name + " [" + platform_name + ", " + device_version + ", driver " + driver_version +
         "]: " + (is_gpu() ? "GPU" : "CPU") + ", local memory " +
         std::to_string(local_mem_bytes / 1024) +
         " KiB, work-group <= " + std::to_string(max_work_group_size) + " (" +
         std::to_string(max_work_item_sizes[0]) + "x" + std::to_string(max_work_item_sizes[1]) +
         "x" + std::to_string(max_work_item_sizes[2]) + "), " +
         (fused_multiply_add ? "fused" : "no fused") + " multiply-add, SPIR-V intake: " + spirv;
}

}  // namespace fatcl
