// The message of the fatcl::Error that f throws, or "(no error)".
#pragma once

#include <functional>
#include <string>

#include "fatcl/error.hpp"

namespace fatcl::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace fatcl::test
