// fatcl bench --startup (startup.cpp).
#pragma once

#include <cstddef>
#include <string>

namespace fatcl::tool {

// Cold and warm start of each tier, each in a fresh process; prints a table
// or one JSON document.
int run_startup(const std::string& platform, std::size_t device, bool json);
// The fresh process: builds the automatic choice in `tier`, computes a
// small product, prints one FATCL-STARTUP line.
int run_startup_child(const std::string& platform, std::size_t device, const std::string& tier);

}  // namespace fatcl::tool
