// Reading numbers and versions out of text that drivers, users and files
// give: strict, bounded, never undefined behaviour (no sscanf, no stoul).
#include "fatcl/text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fatcl/detail/format.hpp"

namespace fatcl {
namespace {

// A decimal number of at most 4 digits at the start of `text`; -1 if none.
int small_number(std::string_view& text) {
  int value = 0;
  std::size_t digits = 0;
  while (digits < text.size() && digits < 5 && text[digits] >= '0' && text[digits] <= '9') {
    value = value * 10 + (text[digits] - '0');
    ++digits;
  }
  if (digits == 0 || digits > 4) return -1;
  text.remove_prefix(digits);
  return value;
}

}  // namespace

bool parse_version(std::string_view text, int* major, int* minor) {
  const int a = small_number(text);
  if (a < 0 || text.empty() || text[0] != '.') return false;
  text.remove_prefix(1);
  const int b = small_number(text);
  if (b < 0) return false;
  *major = a;
  *minor = b;
  return true;
}

bool parse_opencl_version(std::string_view text, int* major, int* minor) {
  const std::string_view prefix = "OpenCL ";
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return parse_version(text, major, minor);
}

std::optional<std::uint64_t> parse_whole_number(std::string_view text, std::uint64_t lo,
                                                std::uint64_t hi) {
  // At most 19 digits: every such number fits in 64 bits.
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + std::uint64_t(c - '0');
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

namespace detail {

std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (n < 0) return "";
  if (static_cast<std::size_t>(n) < sizeof buf)
    return std::string(buf, static_cast<std::size_t>(n));
  std::string out(static_cast<std::size_t>(n) + 1, '\0');
  va_start(args, fmt);
  std::vsnprintf(out.data(), out.size(), fmt, args);
  va_end(args);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace detail
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

std::optional<double> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 64 || std::isspace(static_cast<unsigned char>(text[0]))) {
    return std::nullopt;
  }
  const std::string copy(text);  // strtod reads a NUL-terminated string
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace fatcl
