// printf-style formatting into a std::string, for the tables and figures
// fatcl prints (bench, tune, the demo). Internal to fatcl's libraries.
#pragma once

#include <string>

namespace fatcl::detail {

// As std::snprintf with the result returned whole, however long.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace fatcl::detail
