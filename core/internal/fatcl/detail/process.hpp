// Runs an external tool and captures what it prints (fatcl-compile's tools,
// fatcl bench --startup's fresh processes).
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

// run_process, throwing fatcl::Error when the tool fails: "<what> failed
// (exit N): <command>" and the last lines it printed.
ProcessResult run_tool(const std::vector<std::string>& argv, const std::string& what);

}  // namespace fatcl::detail
