// A file-fault injector for the tests, loaded with LD_PRELOAD: it fails
// the Nth call of one file function on files under a folder with a chosen
// errno, or lets the folder's disk fill after so many bytes, the way SQLite's
// test VFS fails each I/O call in turn (src/test_vfs.c). fatcl's writers
// (the program cache, the store, fatcl-compile's bundle) must answer each
// such failure with an error naming its cause, leave no partial entry and
// no temporary file, and keep the previous file readable.
//
//   FATCL_IO_FAULT_UNDER=DIR   only files under DIR count (absolute; unset:
//                              nothing counts and nothing fails)
//   FATCL_IO_FAULT=RULE        fail:CALL:N:ERRNO  the Nth call (from 1) of CALL
//                                fails with ERRNO (ENOSPC, EIO, EDQUOT, EROFS,
//                                EACCES); CALL: write, fsync, rename, mkstemp,
//                                close, create (an open that may create), any
//                              full:BYTES  the disk holds BYTES more: the write
//                                that crosses it is short, later ones ENOSPC
//   FATCL_IO_FAULT_REPORT=FILE at exit: one "CALL COUNT" line per function
//                              counted, "bytes N" written, and
//                              "injected CALL N ERRNO" if it did
//
// The calls intercepted are the C library's entry points a program reaches
// through the dynamic linker (write, fsync, fdatasync, close, rename,
// renameat, mkstemp, mkostemp, open, openat); calls the C library makes
// internally (fwrite's own write) are not seen.
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

constexpr const char* kCalls[] = {"write", "fsync", "rename", "mkstemp", "close", "create"};
constexpr int kCallCount = sizeof kCalls / sizeof kCalls[0];
enum Call { kWrite, kFsync, kRename, kMkstemp, kClose, kCreate };

struct Errno {
  const char* name;
  int value;
};
constexpr Errno kErrnos[] = {
    {"ENOSPC", ENOSPC}, {"EIO", EIO}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS}, {"EACCES", EACCES}};

struct Config {
  std::string under;       // with a trailing '/'
  int call = -1;           // -1: any; with `fail`
  long index = 0;          // the call to fail, from 1; 0: none
  int error = 0;
  long long full = -1;     // bytes the disk still holds; -1: no limit
  std::string report;
  std::string bad;         // why the rule was not understood
};

std::mutex mutex;
std::atomic<long long> written{0};
long counts[kCallCount] = {};
long any_count = 0;
std::string injected;

[[noreturn]] void refuse(const std::string& why) {
  std::fprintf(stderr, "fault_io: %s\n", why.c_str());
  std::_Exit(125);
}

Config read_config() {
  Config c;
  if (const char* u = std::getenv("FATCL_IO_FAULT_UNDER"); u && *u) {
    c.under = u;
    if (c.under.back() != '/') c.under += '/';
  }
  if (const char* r = std::getenv("FATCL_IO_FAULT_REPORT"); r && *r) c.report = r;
  const char* rule = std::getenv("FATCL_IO_FAULT");
  if (!rule || !*rule) return c;
  const std::string text = rule;
  auto number = [&](const std::string& s) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end || errno || v < 0) refuse("not a count: \"" + s + "\" in " + text);
    return v;
  };
  if (text.rfind("full:", 0) == 0) {
    c.full = number(text.substr(5));
    return c;
  }
  if (text.rfind("fail:", 0) != 0) refuse("FATCL_IO_FAULT is fail:CALL:N:ERRNO or full:BYTES");
  const std::size_t a = text.find(':', 5), b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos) refuse("FATCL_IO_FAULT is fail:CALL:N:ERRNO, not " + text);
  const std::string call = text.substr(5, a - 5), err = text.substr(b + 1);
  if (call != "any") {
    for (int i = 0; i < kCallCount; ++i) {
      if (call == kCalls[i]) c.call = i;
    }
    if (c.call < 0) refuse("unknown call \"" + call + "\" in " + text);
  }
  c.index = static_cast<long>(number(text.substr(a + 1, b - a - 1)));
  for (const Errno& e : kErrnos) {
    if (err == e.name) c.error = e.value;
  }
  if (!c.error) refuse("unknown errno \"" + err + "\" in " + text);
  return c;
}

// Never destroyed: the report at exit still reads it.
const Config& config() {
  static const Config* c = new Config(read_config());
  return *c;
}

bool under(const std::string& path) {
  const std::string& dir = config().under;
  return !dir.empty() && path.compare(0, dir.size(), dir) == 0;
}

std::string absolute(const char* path) {
  if (!path) return "";
  if (path[0] == '/') return path;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + path : std::string(path);
}

bool fd_under(int fd) {
  if (config().under.empty()) return false;
  char link[64], target[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = 0;
  return under(target);
}

// Counts a call on a file under the folder; true (with errno set) if this
// one is to fail.
bool should_fail(Call call) {
  std::lock_guard<std::mutex> lock(mutex);
  const long nth = ++counts[call];
  const long any = ++any_count;
  const Config& c = config();
  if (!c.index || !injected.empty()) return false;
  if ((c.call == call && nth == c.index) || (c.call < 0 && any == c.index)) {
    const char* name = "?";
    for (const Errno& e : kErrnos) {
      if (e.value == c.error) name = e.name;
    }
    injected = std::string(kCalls[call]) + " " + std::to_string(c.call < 0 ? any : nth) + " " +
               name;
    errno = c.error;
    return true;
  }
  return false;
}

template <typename F>
F real(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) refuse(std::string("no next ") + name);
  return reinterpret_cast<F>(f);
}

struct Report {
  ~Report() {
    const Config& c = config();
    if (c.report.empty()) return;
    FILE* out = std::fopen(c.report.c_str(), "w");
    if (!out) return;
    std::lock_guard<std::mutex> lock(mutex);
    for (int i = 0; i < kCallCount; ++i) {
      if (counts[i]) std::fprintf(out, "%s %ld\n", kCalls[i], counts[i]);
    }
    std::fprintf(out, "bytes %lld\n", written.load());
    if (!injected.empty()) std::fprintf(out, "injected %s\n", injected.c_str());
    std::fclose(out);
  }
} report;

// Whether open's flags may create a file (and so carry a mode).
bool creates(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

}  // namespace

extern "C" {

ssize_t write(int fd, const void* data, size_t size) {
  static auto next = real<ssize_t (*)(int, const void*, size_t)>("write");
  if (!fd_under(fd)) return next(fd, data, size);
  if (should_fail(kWrite)) return -1;
  const long long full = config().full;
  const long long before = written.fetch_add(static_cast<long long>(size));
  if (full >= 0) {
    if (before >= full) {
      errno = ENOSPC;
      return -1;
    }
    if (before + static_cast<long long>(size) > full) size = static_cast<size_t>(full - before);
  }
  return next(fd, data, size);
}

int fsync(int fd) {
  static auto next = real<int (*)(int)>("fsync");
  if (fd_under(fd) && should_fail(kFsync)) return -1;
  return next(fd);
}

int fdatasync(int fd) {
  static auto next = real<int (*)(int)>("fdatasync");
  if (fd_under(fd) && should_fail(kFsync)) return -1;
  return next(fd);
}

int close(int fd) {
  static auto next = real<int (*)(int)>("close");
  // Linux closes the descriptor even when close reports an error.
  const bool fail = fd_under(fd) && should_fail(kClose);
  const int saved = errno;
  const int r = next(fd);
  if (fail) {
    errno = saved;
    return -1;
  }
  return r;
}

int rename(const char* from, const char* to) {
  static auto next = real<int (*)(const char*, const char*)>("rename");
  if ((under(absolute(to)) || under(absolute(from))) && should_fail(kRename)) return -1;
  return next(from, to);
}

int renameat(int from_dir, const char* from, int to_dir, const char* to) {
  static auto next = real<int (*)(int, const char*, int, const char*)>("renameat");
  const bool counted = (from_dir == AT_FDCWD && under(absolute(from))) ||
                       (to_dir == AT_FDCWD && under(absolute(to)));
  if (counted && should_fail(kRename)) return -1;
  return next(from_dir, from, to_dir, to);
}

int mkstemp(char* path) {
  static auto next = real<int (*)(char*)>("mkstemp");
  if (under(absolute(path)) && should_fail(kMkstemp)) return -1;
  return next(path);
}

int mkstemp64(char* path) {
  static auto next = real<int (*)(char*)>("mkstemp64");
  if (under(absolute(path)) && should_fail(kMkstemp)) return -1;
  return next(path);
}

int mkostemp(char* path, int flags) {
  static auto next = real<int (*)(char*, int)>("mkostemp");
  if (under(absolute(path)) && should_fail(kMkstemp)) return -1;
  return next(path, flags);
}

// open, open64 and openat carry a mode (their variadic argument) where the
// flags may create a file; such an open under the folder is counted.
int open(const char* path, int flags, ...) {
  static auto next = real<int (*)(const char*, int, ...)>("open");
  va_list args;
  va_start(args, flags);
  const mode_t mode = creates(flags) ? static_cast<mode_t>(va_arg(args, int)) : 0;
  va_end(args);
  if (creates(flags) && under(absolute(path)) && should_fail(kCreate)) return -1;
  return next(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = creates(flags) ? static_cast<mode_t>(va_arg(args, int)) : 0;
  va_end(args);
  return open(path, flags, mode);  // the same call on a 64-bit system
}

int openat(int dir, const char* path, int flags, ...) {
  static auto next = real<int (*)(int, const char*, int, ...)>("openat");
  va_list args;
  va_start(args, flags);
  const mode_t mode = creates(flags) ? static_cast<mode_t>(va_arg(args, int)) : 0;
  va_end(args);
  if (creates(flags) && dir == AT_FDCWD && under(absolute(path)) && should_fail(kCreate)) {
    return -1;
  }
  return next(dir, path, flags, mode);
}

}  // extern "C"
