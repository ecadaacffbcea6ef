// The environment variables the loader reads to change its behaviour
// without code changes, each understood in one place. A value the loader
// does not understand is ignored, never fatal to a product, and said in the
// explanation's notes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fatcl::detail {

// FATCL_SELF_CHECK=1.
bool self_check_from_environment();
// FATCL_CACHE=0 turns the program cache off.
bool cache_off_from_environment();
// FATCL_CACHE_MAX_MB (1 to 1048575), else 512.
std::uint64_t cache_max_mb_from_environment();
// FATCL_TUNE=online: learn the choice on a product's first calls
// (fatcl/online.hpp); "", "off" or unset: no.
bool online_tuning_from_environment();
// The driver settings in the environment that change the code a driver
// generates for the same device, driver and input (Intel's CPU runtime's
// target instruction set and vectoriser, PoCL's work-group method), as
// "|env NAME=value" for each one set, "" for none: part of the program
// cache's key, so that a binary built under one setting is not served
// under another.
std::string codegen_environment();
// One note per variable set to a value that is ignored, saying what was
// expected and what happens instead.
std::vector<std::string> environment_notes();

}  // namespace fatcl::detail
