// The Khronos C++ bindings as fatcl uses them. Include this instead of
// <CL/opencl.hpp> so that the version macros agree: the bindings target
// OpenCL 3.0 but only assume 1.1 at run time, so they work on OpenCL 1.2
// drivers (Oclgrind) as well as on 3.0 ones. (A minimum of 120 with a target
// of 200 or more does not compile with opencl.hpp 2023.02.) fatcl does not
// define CL_HPP_ENABLE_EXCEPTIONS: it checks status codes itself and throws
// fatcl::Error, so it works whichever way its user compiles the bindings.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
#define CL_HPP_MINIMUM_OPENCL_VERSION 110
#endif
#include <CL/opencl.hpp>
