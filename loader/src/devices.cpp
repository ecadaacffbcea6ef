// Finding OpenCL devices: the platforms the ICD loader lists, and one device
// chosen by platform name and index.
#include "fatcl/loader.hpp"

namespace fatcl {

std::vector<PlatformDevices> list_platforms() {
  std::vector<cl::Platform> platforms;
  const cl_int err = cl::Platform::get(&platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && platforms.empty())) {
    throw Error("no OpenCL platform found; " + find_icds().to_string(), CL_PLATFORM_NOT_FOUND_KHR);
  }
  check_cl(err, "clGetPlatformIDs");
  std::vector<PlatformDevices> out;
  for (const cl::Platform& p : platforms) {
    PlatformDevices entry;
    entry.platform = p;
    check_cl(p.getInfo(CL_PLATFORM_NAME, &entry.name), "clGetPlatformInfo(CL_PLATFORM_NAME)");
    while (!entry.name.empty() && entry.name.back() == '\0') entry.name.pop_back();
    const cl_int d = p.getDevices(CL_DEVICE_TYPE_ALL, &entry.devices);
    if (d == CL_DEVICE_NOT_FOUND) {
      entry.devices.clear();
    } else {
      check_cl(d, "clGetDeviceIDs(" + entry.name + ")");
    }
    out.push_back(std::move(entry));
  }
  return out;
}

void check_context_and_device(const cl::Context& context, const cl::Device& device,
                              const std::string& who) {
  if (!context()) throw Error(who + ": the context is null");
  if (!device()) throw Error(who + ": the device is null");
  std::vector<cl::Device> devices;
  check_cl(context.getInfo(CL_CONTEXT_DEVICES, &devices),
           who + ": clGetContextInfo(CL_CONTEXT_DEVICES)");
  for (const cl::Device& d : devices) {
    if (d() == device()) return;
  }
  throw Error(who + ": the device is not one of the context's devices (the context has " +
              std::to_string(devices.size()) + ")");
}

cl::Device pick_device(const std::string& platform, std::size_t index) {
  std::string seen;
  for (const PlatformDevices& p : list_platforms()) {
    seen += (seen.empty() ? "" : ", ") + p.name + " (" + std::to_string(p.devices.size()) + ")";
    if (p.name.find(platform) == std::string::npos || p.devices.empty()) continue;
    if (index >= p.devices.size()) {
      throw Error("device " + std::to_string(index) + ": the platform " + p.name + " has " +
                  std::to_string(p.devices.size()) + " device(s), numbered from 0");
    }
    return p.devices[index];
  }
  // A driver that does not load may be the one that was wanted.
  std::string unopened;
  for (const Icd& icd : find_icds().icds) {
    if (!icd.opens) {
      unopened += "; " + (icd.icd_file.empty() ? icd.library : icd.icd_file) + " " + icd.problem;
    }
  }
  throw Error("no OpenCL device" +
              (platform.empty() ? std::string() : " on a platform matching \"" + platform + "\"") +
              " (platforms and their devices: " + seen + unopened + ")");
}

cl::Context context_for(const cl::Device& device) {
  if (!device()) throw Error("context_for: the device is null");
  cl_int err = CL_SUCCESS;
  cl::Context context(device, nullptr, nullptr, nullptr, &err);
  check_cl(err, "clCreateContext");
  return context;
}

cl::CommandQueue queue_for(const cl::Context& context, const cl::Device& device,
                           cl_command_queue_properties properties) {
  cl_int err = CL_SUCCESS;
  cl::CommandQueue queue(context, device, properties, &err);
  check_cl(err, "clCreateCommandQueue");
  return queue;
}

}  // namespace fatcl
