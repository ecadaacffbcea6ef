#include "fatcl/detail/atomic_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fatcl/error.hpp"

namespace fatcl::detail {

namespace fs = std::filesystem;

namespace {

constexpr char kTemporarySuffix[] = ".XXXXXX";  // mkstemp's: six characters after a dot

}  // namespace

std::string atomic_target(std::string_view name) {
  const std::size_t suffix = sizeof kTemporarySuffix - 1;
  if (name.size() <= suffix || name[name.size() - suffix] != '.') return "";
  return std::string(name.substr(0, name.size() - suffix));
}

bool stale_temporary(const fs::directory_entry& entry) {
  std::error_code ec;
  return !atomic_target(entry.path().filename().string()).empty() &&
         entry.last_write_time(ec) < fs::file_time_type::clock::now() - std::chrono::hours(1) &&
         !ec;
}

void write_file_atomic(const fs::path& path, std::string_view text) {
  std::error_code ec;
  if (!path.parent_path().empty()) fs::create_directories(path.parent_path(), ec);
  if (ec) throw Error("cannot create " + path.parent_path().string() + ": " + ec.message());
  std::string tmp = path.string() + kTemporarySuffix;
  const int fd = mkstemp(tmp.data());
  if (fd < 0)
    throw Error("cannot create a temporary file beside " + path.string() + ": " +
                std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("cannot write " + tmp + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::fchmod(fd, 0644) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot finish " + tmp + ": " + std::strerror(e));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path.string() + ": " + std::strerror(e));
  }
}

}  // namespace fatcl::detail
