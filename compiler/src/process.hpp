// Runs an external tool and captures what it prints.
#pragma once

#include <string>
#include <vector>

namespace fatcl::detail {

struct ProcessResult {
  int exit_code = -1;  // -1: could not start or killed by a signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (looked up on PATH) with argv, without a shell.
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace fatcl::detail
