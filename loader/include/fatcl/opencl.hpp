// The Khronos C++ bindings as fatcl uses them. Include this instead of
// <CL/opencl.hpp> so that the version macros agree: the bindings target
// OpenCL 3.0 and assume 1.2 at run time, so they work on OpenCL 1.2 drivers
// (Oclgrind) as well as on 3.0 ones. fatcl does not define
// CL_HPP_ENABLE_EXCEPTIONS: it checks status codes itself and throws
// fatcl::Error, so it works whichever way its user compiles the bindings.
//
// Why 1.2 and not 1.1: assuming 1.1, the bindings ask each device's
// platform version before they retain it, and do not check that query
// (opencl.hpp 2023.02, detail::getDevicePlatformVersion): a driver that
// failed clGetDeviceInfo(CL_DEVICE_PLATFORM) there sent the loader a
// pointer from the stack, and fatcl crashed (tests/faults, 2026-12-03).
// Assuming 1.2, the bindings need detail::getContextPlatformVersion, which
// opencl.hpp then leaves out; this header gives it, every query checked
// (0, "before 2.0", where one fails: the queue is then made by
// clCreateCommandQueue).
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#endif

#include <CL/cl.h>

#include <string>
#include <vector>

#include "fatcl/text.hpp"

#if CL_HPP_MINIMUM_OPENCL_VERSION >= 120 && CL_HPP_TARGET_OPENCL_VERSION >= 200
namespace cl {
namespace detail {
// The version of the platform of the context's first device, major in the
// upper 16 bits and minor in the lower; 0 where a query fails.
inline cl_uint getContextPlatformVersion(cl_context context) {
  std::size_t size = 0;
  if (clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &size) != CL_SUCCESS ||
      size < sizeof(cl_device_id)) {
    return 0;
  }
  std::vector<cl_device_id> devices(size / sizeof(cl_device_id));
  if (clGetContextInfo(context, CL_CONTEXT_DEVICES, devices.size() * sizeof(cl_device_id),
                       devices.data(), nullptr) != CL_SUCCESS) {
    return 0;
  }
  cl_platform_id platform = nullptr;
  if (clGetDeviceInfo(devices[0], CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) !=
          CL_SUCCESS ||
      !platform) {
    return 0;
  }
  if (clGetPlatformInfo(platform, CL_PLATFORM_VERSION, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0 || size > 4096) {
    return 0;
  }
  std::string version(size, '\0');
  if (clGetPlatformInfo(platform, CL_PLATFORM_VERSION, size, version.data(), nullptr) !=
      CL_SUCCESS) {
    return 0;
  }
  int major = 0, minor = 0;
  if (!fatcl::parse_opencl_version(version, &major, &minor)) return 0;
  return (cl_uint(major) << 16) | cl_uint(minor);
}
}  // namespace detail
}  // namespace cl
#endif

#include <CL/opencl.hpp>
