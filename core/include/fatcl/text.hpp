// Numbers and versions read out of text that drivers, users and files give:
// strict and bounded (no sscanf, whose out-of-range %d is undefined
// behaviour, no stoul, whose exceptions name nothing).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fatcl {

// "<major>.<minor>" at the start of text (each at most 4 digits), as in
// "1.2" or "SPIR-V_1.2"'s tail; false if it is not there.
bool parse_version(std::string_view text, int* major, int* minor);
// CL_DEVICE_VERSION's "OpenCL <major>.<minor> <anything>"; false otherwise.
bool parse_opencl_version(std::string_view text, int* major, int* minor);
// Digits only (no sign, space or exponent) and a value from lo to hi; none
// otherwise. For counts and sizes given as text (options, environment).
std::optional<std::uint64_t> parse_whole_number(std::string_view text, std::uint64_t lo,
                                                std::uint64_t hi);
// The lines of `text`, without their '\n' (a final '\n' ends the last
// line; it does not start an empty one). Views into `text`.
std::vector<std::string_view> split_lines(std::string_view text);
// A finite decimal number, the whole text ("1.5", "-2", "3e-4"); none otherwise.
std::optional<double> parse_number(std::string_view text);

}  // namespace fatcl
