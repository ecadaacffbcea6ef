#include "fatcl/detail/process.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "fatcl/error.hpp"

extern char** environ;

namespace fatcl::detail {

ProcessResult run_process(const std::vector<std::string>& argv) {
  ProcessResult result;
  int fds[2];
  if (pipe(fds) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.output = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    // posix_spawnp reports a missing program as exit 127 from the child.
    if (result.exit_code == 127 && result.output.empty()) {
      result.output = "cannot run " + argv[0] + ": not found on PATH";
    }
  }
  return result;
}

namespace {

std::string tail_lines(const std::string& text, std::size_t max_lines = 30) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  std::size_t start = lines.size() > max_lines ? lines.size() - max_lines : 0;
  for (std::size_t i = start; i < lines.size(); ++i) out += "  " + lines[i] + "\n";
  return out;
}

}  // namespace

ProcessResult run_tool(const std::vector<std::string>& argv, const std::string& what) {
  ProcessResult r = run_process(argv);
  if (r.exit_code != 0) {
    std::string cmd;
    for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw Error(what + " failed (exit " + std::to_string(r.exit_code) + "): " + cmd + "\n" +
                tail_lines(r.output));
  }
  return r;
}

}  // namespace fatcl::detail
