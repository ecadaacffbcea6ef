// Where the ICD loader looks for OpenCL drivers and whether each opens, by
// ocl-icd's rules (ocl_icd_loader.c, 2.3.x), so that a driver that vanishes
// silently can be named with the reason.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "fatcl/loader.hpp"

namespace fatcl {
namespace {

bool ends_with_icd(const std::string& name) {
  return name.size() >= 5 && name.compare(name.size() - 4, 4, ".icd") == 0;
}

bool is_folder(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Why dlopen refuses a library the ICD loader did not keep, asked in a child
// process: a driver loaded, closed and loaded again in one process can abort
// (PoCL registers its LLVM options twice), and its constructors must not run
// here. "" where it opens.
std::string dlopen_in_child(const std::string& library) {
  int fds[2];
  if (pipe(fds) != 0) return "could not be checked (pipe failed)";
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "could not be checked (fork failed)";
  }
  if (pid == 0) {
    close(fds[0]);
    const char* why = dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL) ? "" : dlerror();
    if (!why) why = "dlopen failed";
    const ssize_t ignored = write(fds[1], why, std::strlen(why));
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string why;
  char buffer[512];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    why.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return "could not be checked (dlopen ended the checking process)";
  return why;
}

// Checks the library as ocl-icd does: dlopen (RTLD_LAZY | RTLD_LOCAL), its
// ICD entry point, the platforms it offers. Only a library the ICD loader
// holds open is asked in this process.
void try_library(Icd* icd) {
  void* handle = dlopen(icd->library.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (!handle) {
    const std::string why = dlopen_in_child(icd->library);
    icd->opens = why.empty();
    icd->problem = icd->opens ? "opens, but the ICD loader did not keep it (no platform)"
                              : "does not open: " + why;
    return;
  }
  icd->opens = true;
  using GetAddress = void* (*)(const char*);
  using GetPlatforms = cl_int (*)(cl_uint, cl_platform_id*, cl_uint*);
  const auto get_address =
      reinterpret_cast<GetAddress>(dlsym(handle, "clGetExtensionFunctionAddress"));
  void* entry = get_address ? get_address("clIcdGetPlatformIDsKHR") : nullptr;
  if (!entry) entry = dlsym(handle, "clIcdGetPlatformIDsKHR");
  if (!get_address || !entry) {
    icd->problem = std::string("opens, but is not an OpenCL ICD (no ") +
                   (get_address ? "clIcdGetPlatformIDsKHR" : "clGetExtensionFunctionAddress") + ")";
  } else {
    cl_uint count = 0;
    const cl_int err = reinterpret_cast<GetPlatforms>(entry)(0, nullptr, &count);
    if (err != CL_SUCCESS && err != CL_PLATFORM_NOT_FOUND_KHR) {
      icd->problem = "opens, but clIcdGetPlatformIDsKHR fails with " + cl_status_name(err);
    } else {
      icd->platforms = err == CL_SUCCESS ? static_cast<int>(count) : 0;
      if (icd->platforms == 0) icd->problem = "opens, but offers no platform";
    }
  }
  dlclose(handle);  // the ICD loader's own reference keeps it loaded
}

// The library an .icd file names: its first line ("" if it cannot be read).
Icd read_icd_file(const std::string& path) {
  Icd icd;
  icd.icd_file = path;
  std::ifstream in(path);
  if (!in) {
    icd.problem = "cannot be read";
    return icd;
  }
  std::getline(in, icd.library);
  if (icd.library.empty()) {
    icd.problem = "names no library (its first line is empty)";
    return icd;
  }
  try_library(&icd);
  return icd;
}

}  // namespace

IcdSearch find_icds() {
  // The ICD loader loads its drivers first, so that each library it keeps is
  // found loaded here and none is loaded twice.
  cl_uint platforms = 0;
  clGetPlatformIDs(0, nullptr, &platforms);
  IcdSearch out;
  const char* vendors_env = std::getenv("OCL_ICD_VENDORS");
  const char* vendor_path_env = std::getenv("OPENCL_VENDOR_PATH");
  const std::string vendor_path =
      vendor_path_env && *vendor_path_env ? vendor_path_env : "/etc/OpenCL/vendors";
  std::string folder;
  if (!vendors_env || !*vendors_env) {
    folder = vendor_path;
    out.where = (vendor_path_env && *vendor_path_env ? "OPENCL_VENDOR_PATH=" : "") + vendor_path +
                " (OCL_ICD_VENDORS unset)";
  } else if (is_folder(vendors_env)) {
    folder = vendors_env;
    out.where = "OCL_ICD_VENDORS=" + folder + " (a folder)";
  } else if (ends_with_icd(vendors_env)) {
    const std::string name = vendors_env;
    out.where = "OCL_ICD_VENDORS=" + name + " (an .icd file)";
    // A bare name is looked for in the vendors folder first.
    Icd icd = read_icd_file(name.find('/') == std::string::npos ? vendor_path + "/" + name : name);
    if (icd.problem == "cannot be read") icd = read_icd_file(name);
    if (icd.problem == "cannot be read") {
      out.problem = "the .icd file " + name + " does not exist or cannot be read";
    } else {
      out.icds.push_back(std::move(icd));
    }
    return out;
  } else {
    out.where = "OCL_ICD_VENDORS=" + std::string(vendors_env) + " (a library)";
    Icd icd;
    icd.library = vendors_env;
    try_library(&icd);
    out.icds.push_back(std::move(icd));
    return out;
  }
  DIR* dir = opendir(folder.c_str());
  if (!dir) {
    out.problem = "the folder " + folder + " does not exist or cannot be read";
    return out;
  }
  std::vector<std::string> files;
  while (const dirent* entry = readdir(dir)) {
    if (ends_with_icd(entry->d_name)) files.push_back(folder + "/" + entry->d_name);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) out.icds.push_back(read_icd_file(f));
  if (out.icds.empty()) out.problem = "the folder " + folder + " holds no .icd file";
  return out;
}

std::string IcdSearch::to_string(const std::string& indent) const {
  std::string out =
      "ICDs the loader tries (" + where + ")" + (problem.empty() ? "" : ": " + problem);
  for (const Icd& icd : icds) {
    out += "\n" + indent + (icd.icd_file.empty() ? "" : icd.icd_file + " -> ") +
           (icd.library.empty() ? "?" : icd.library) + ": " +
           (icd.problem.empty() ? "opens, " + std::to_string(icd.platforms) + " platform" +
                                      (icd.platforms == 1 ? "" : "s")
                                : icd.problem);
  }
  return out;
}

}  // namespace fatcl
