// An ICD library that cannot open: it needs libfatcl_test_missing.so, which
// is built into a folder its runpath does not name (tests/CMakeLists.txt),
// as Intel's runtime needs libimf.so from a wheel pip did not install.
#include <CL/cl.h>

extern "C" int fatcl_test_missing_function();

extern "C" cl_int clIcdGetPlatformIDsKHR(cl_uint, cl_platform_id*, cl_uint* count) {
  if (count) *count = static_cast<cl_uint>(fatcl_test_missing_function());
  return CL_SUCCESS;
}
