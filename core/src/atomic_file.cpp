#include "fatcl/detail/atomic_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fatcl/error.hpp"

namespace fatcl::detail {

namespace fs = std::filesystem;

void write_file_atomic(const fs::path& path, std::string_view text) {
  std::error_code ec;
  if (!path.parent_path().empty()) fs::create_directories(path.parent_path(), ec);
  if (ec) throw Error("cannot create " + path.parent_path().string() + ": " + ec.message());
  std::string tmp = path.string() + ".XXXXXX";
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
