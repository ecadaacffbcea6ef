#include "fatcl/error.hpp"

namespace fatcl {

void check_cl(int status, const std::string& what) {
  if (status != 0) throw Error(what + " failed: " + cl_status_name(status), status);
}

// One case per OpenCL status code: a table, long for that reason only.
std::string cl_status_name(int code) {
  switch (code) {
    case 0:
      return "CL_SUCCESS";
    case -1:
      return "CL_DEVICE_NOT_FOUND";
    case -2:
      return "CL_DEVICE_NOT_AVAILABLE";
    case -3:
      return "CL_COMPILER_NOT_AVAILABLE";
    case -4:
      return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5:
      return "CL_OUT_OF_RESOURCES";
    case -6:
      return "CL_OUT_OF_HOST_MEMORY";
    case -11:
      return "CL_BUILD_PROGRAM_FAILURE";
    case -30:
      return "CL_INVALID_VALUE";
    case -32:
      return "CL_INVALID_PLATFORM";
    case -33:
      return "CL_INVALID_DEVICE";
    case -34:
      return "CL_INVALID_CONTEXT";
    case -36:
      return "CL_INVALID_COMMAND_QUEUE";
    case -38:
      return "CL_INVALID_MEM_OBJECT";
    case -42:
      return "CL_INVALID_BINARY";
    case -43:
      return "CL_INVALID_BUILD_OPTIONS";
    case -44:
      return "CL_INVALID_PROGRAM";
    case -45:
      return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46:
      return "CL_INVALID_KERNEL_NAME";
    case -48:
      return "CL_INVALID_KERNEL";
    case -49:
      return "CL_INVALID_ARG_INDEX";
    case -50:
      return "CL_INVALID_ARG_VALUE";
    case -51:
      return "CL_INVALID_ARG_SIZE";
    case -52:
      return "CL_INVALID_KERNEL_ARGS";
    case -53:
      return "CL_INVALID_WORK_DIMENSION";
    case -54:
      return "CL_INVALID_WORK_GROUP_SIZE";
    case -55:
      return "CL_INVALID_WORK_ITEM_SIZE";
    case -56:
      return "CL_INVALID_GLOBAL_OFFSET";
    case -59:
      return "CL_INVALID_OPERATION";
    case -61:
      return "CL_INVALID_BUFFER_SIZE";
    case -63:
      return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_ERROR(" + std::to_string(code) + ")";
  }
}

}  // namespace fatcl
