// fatcl's one error convention: every public function of fatcl reports
// failure by throwing fatcl::Error, which owns its message and carries the
// OpenCL status code where one applies (0 otherwise). No cl::Error or other
// library exception escapes the public API.
#pragma once

#include <stdexcept>
#include <string>

namespace fatcl {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int cl_code = 0)
      : std::runtime_error(message), cl_code_(cl_code) {}

  // The OpenCL status code (e.g. -59 for CL_INVALID_OPERATION), or 0 when the
  // failure did not come from an OpenCL call.
  int cl_code() const noexcept { return cl_code_; }

 private:
  int cl_code_;
};

// Throws fatcl::Error("<what> failed: <status name>", status) unless status
// is CL_SUCCESS (0).
void check_cl(int status, const std::string& what);

// The symbolic name of an OpenCL status code, e.g. "CL_INVALID_OPERATION".
// Unknown codes give "CL_ERROR(<code>)".
std::string cl_status_name(int code);

}  // namespace fatcl
