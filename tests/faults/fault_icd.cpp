// A fault-injecting OpenCL driver for the tests: an ICD that forwards every
// call to a real one (Debian's PoCL unless FATCL_FAULT_TARGET names another
// ICD library) and fails, or answers oddly, where FATCL_FAULT says.
//
// How it forwards: the ICD loader calls a driver through the dispatch table
// that is the first member of every object the driver hands out. This
// library copies the real driver's table, puts a hook in each entry, and
// points every object the real driver returns (platforms, devices,
// contexts, queues, buffers, programs, kernels, events, samplers) at the
// copy; a hook counts the call, fails it if a rule says so, else calls the
// real entry with the same arguments. The real driver never reads the
// dispatch pointer of its own objects, so nothing is wrapped.
//
// FATCL_FAULT: rules separated by ';'
//   fail:FUNC:N:ERROR    the Nth call (from 1) of FUNC (`*`: of any function,
//                        counted together) returns ERROR (a name such as
//                        CL_OUT_OF_RESOURCES, or a number) without reaching
//                        the driver; a call that returns an object returns
//                        null and sets its errcode_ret
//   lose:N[:ERROR]       from the Nth call of any function on, every call
//                        fails so (CL_DEVICE_NOT_AVAILABLE unless named);
//                        retains and releases still reach the driver (they
//                        count references on the host, and fail only for an
//                        invalid object), so that the process can clean up
//   odd:FUNC:PARAM:KIND  every successful info query of FUNC (clGetDeviceInfo,
//                        clGetPlatformInfo, clGetKernelWorkGroupInfo, ...) for
//                        PARAM (a name such as CL_DEVICE_LOCAL_MEM_SIZE, or a
//                        number) answers oddly: KIND empty (a string of no
//                        characters), unterminated (the string's NUL
//                        replaced), oversize (the size written back larger
//                        than the space asked for), zero, one (the value 0
//                        or 1 in the parameter's width)
// FATCL_FAULT_REPORT: a file that gets, at exit, one line per function
//   called ("clCreateBuffer 12"), then "total N" and "fired K" (how many
//   calls a rule changed), so that a test can sweep every call index.
// FATCL_FAULT_TRACE: a file that gets a line per call as it is made: its
//   number among all calls, the function, its number among that
//   function's calls, and an info query's parameter ("71 clGetDeviceInfo 40
//   0x1002").
// Calls clGetExtensionFunctionAddress* and clSVMFree (which cannot report
// an error) are counted but never failed.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <ocl_icd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "fatcl/error.hpp"
#include "fatcl/text.hpp"

namespace {

struct ParamName {
  const char* name;
  cl_uint value;
};
constexpr ParamName kParams[] = {
    {"CL_DEVICE_NAME", CL_DEVICE_NAME},
    {"CL_DEVICE_VENDOR", CL_DEVICE_VENDOR},
    {"CL_DEVICE_VERSION", CL_DEVICE_VERSION},
    {"CL_DRIVER_VERSION", CL_DRIVER_VERSION},
    {"CL_DEVICE_OPENCL_C_VERSION", CL_DEVICE_OPENCL_C_VERSION},
    {"CL_DEVICE_EXTENSIONS", CL_DEVICE_EXTENSIONS},
    {"CL_DEVICE_IL_VERSION", CL_DEVICE_IL_VERSION},
    {"CL_DEVICE_LOCAL_MEM_SIZE", CL_DEVICE_LOCAL_MEM_SIZE},
    {"CL_DEVICE_GLOBAL_MEM_SIZE", CL_DEVICE_GLOBAL_MEM_SIZE},
    {"CL_DEVICE_MAX_MEM_ALLOC_SIZE", CL_DEVICE_MAX_MEM_ALLOC_SIZE},
    {"CL_DEVICE_MAX_WORK_GROUP_SIZE", CL_DEVICE_MAX_WORK_GROUP_SIZE},
    {"CL_DEVICE_MAX_WORK_ITEM_SIZES", CL_DEVICE_MAX_WORK_ITEM_SIZES},
    {"CL_DEVICE_MAX_COMPUTE_UNITS", CL_DEVICE_MAX_COMPUTE_UNITS},
    {"CL_DEVICE_TYPE", CL_DEVICE_TYPE},
    {"CL_DEVICE_SINGLE_FP_CONFIG", CL_DEVICE_SINGLE_FP_CONFIG},
    {"CL_DEVICE_DOUBLE_FP_CONFIG", CL_DEVICE_DOUBLE_FP_CONFIG},
    {"CL_PLATFORM_NAME", CL_PLATFORM_NAME},
    {"CL_PLATFORM_VERSION", CL_PLATFORM_VERSION},
    {"CL_PLATFORM_VENDOR", CL_PLATFORM_VENDOR},
    {"CL_KERNEL_WORK_GROUP_SIZE", CL_KERNEL_WORK_GROUP_SIZE},
    {"CL_KERNEL_LOCAL_MEM_SIZE", CL_KERNEL_LOCAL_MEM_SIZE},
    {"CL_PROGRAM_BUILD_LOG", CL_PROGRAM_BUILD_LOG},
    {"CL_PROGRAM_BINARY_SIZES", CL_PROGRAM_BINARY_SIZES},
};

enum class Odd { Empty, Unterminated, Oversize, Zero, One };

struct Rule {
  enum Kind { Fail, Lose, OddAnswer } kind;
  std::string function;  // "*" for any
  unsigned long long n = 0;
  cl_int error = CL_SUCCESS;
  cl_uint param = 0;
  Odd odd = Odd::Empty;
};

[[noreturn]] void refuse(const std::string& why) {
  std::fprintf(stderr, "fatcl fault ICD: FATCL_FAULT: %s\n", why.c_str());
  std::exit(70);
}

// A status by its name (fatcl's cl_status_name, every one it names) or
// as a negative number.
cl_int error_of(const std::string& text) {
  for (int code = -1; code >= -1200; --code) {
    if (text == fatcl::cl_status_name(code)) return code;
  }
  const std::optional<std::uint64_t> v =
      text.size() > 1 && text[0] == '-'
          ? fatcl::parse_whole_number(std::string_view(text).substr(1), 1, 1u << 30)
          : std::nullopt;
  if (!v) refuse("\"" + text + "\" is no OpenCL error");
  return -cl_int(*v);
}

cl_uint param_of(const std::string& text) {
  for (const ParamName& p : kParams) {
    if (text == p.name) return p.value;
  }
  char* end = nullptr;
  const unsigned long v = std::strtoul(text.c_str(), &end, 0);
  if (text.empty() || *end != '\0') refuse("\"" + text + "\" is no info parameter");
  return cl_uint(v);
}

std::vector<std::string> split(const std::string& s, char c) {
  std::vector<std::string> out(1);
  for (char x : s) {
    if (x == c) {
      out.emplace_back();
    } else {
      out.back() += x;
    }
  }
  return out;
}

unsigned long long count_of(const std::string& text) {
  const std::optional<std::uint64_t> v = fatcl::parse_whole_number(text, 1, UINT64_MAX);
  if (!v) refuse("\"" + text + "\" is no call number (1 on)");
  return *v;
}

std::vector<Rule> parse_rules(const char* env) {
  std::vector<Rule> rules;
  if (!env || !*env) return rules;
  for (const std::string& text : split(env, ';')) {
    if (text.empty()) continue;
    const std::vector<std::string> f = split(text, ':');
    Rule r{};
    if (f[0] == "fail" && f.size() == 4) {
      r.kind = Rule::Fail, r.function = f[1], r.n = count_of(f[2]), r.error = error_of(f[3]);
    } else if (f[0] == "lose" && (f.size() == 2 || f.size() == 3)) {
      r.kind = Rule::Lose, r.n = count_of(f[1]);
      r.error = f.size() == 3 ? error_of(f[2]) : CL_DEVICE_NOT_AVAILABLE;
    } else if (f[0] == "odd" && f.size() == 4) {
      r.kind = Rule::OddAnswer, r.function = f[1], r.param = param_of(f[2]);
      const std::string& k = f[3];
      r.odd = k == "empty"          ? Odd::Empty
              : k == "unterminated" ? Odd::Unterminated
              : k == "oversize"     ? Odd::Oversize
              : k == "zero"         ? Odd::Zero
              : k == "one"          ? Odd::One
                                    : (refuse("\"" + k + "\" is none of empty, unterminated, "
                                              "oversize, zero, one"),
                                       Odd::Empty);
    } else {
      refuse("\"" + text + "\" is none of fail:FUNC:N:ERROR, lose:N[:ERROR], "
             "odd:FUNC:PARAM:KIND");
    }
    rules.push_back(r);
  }
  return rules;
}

// What the process has seen, and the tables.
struct State {
  std::mutex mutex;
  std::vector<Rule> rules = parse_rules(std::getenv("FATCL_FAULT"));
  std::map<std::string, unsigned long long> calls;
  unsigned long long total = 0, fired = 0;
  std::FILE* trace = nullptr;
  _cl_icd_dispatch real{};   // the driver's own entries
  _cl_icd_dispatch table{};  // the hooks, which objects point at
  void* library = nullptr;

  State() {
    if (const char* t = std::getenv("FATCL_FAULT_TRACE"); t && *t) trace = std::fopen(t, "w");
  }
  ~State() {
    if (trace) std::fclose(trace);
    const char* path = std::getenv("FATCL_FAULT_REPORT");
    if (!path || !*path) return;
    std::ofstream out(path, std::ios::trunc);
    for (const auto& [name, n] : calls) out << name << ' ' << n << '\n';
    out << "total " << total << "\nfired " << fired << '\n';
  }
};
State& state() {
  static State s;
  return s;
}

// Points an object the driver returned at the hooks.
template <typename T>
void adopt(T object) {
  if (object) *reinterpret_cast<_cl_icd_dispatch**>(object) = &state().table;
}

// The verdict for one call: the error to return instead of calling the
// driver (CL_SUCCESS: call it), and the odd answer rules that apply.
struct Verdict {
  cl_int error = CL_SUCCESS;
  std::vector<Rule> odd;
};

Verdict count(const char* name, long long param) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const unsigned long long nth = ++s.calls[name];
  const unsigned long long any = ++s.total;
  if (s.trace) {
    std::fprintf(s.trace, "%llu %s %llu", any, name, nth);
    if (param >= 0) std::fprintf(s.trace, " 0x%llx", param);
    std::fputc('\n', s.trace);
    std::fflush(s.trace);
  }
  const bool exempt = std::strncmp(name, "clGetExtensionFunctionAddress", 29) == 0 ||
                      std::strcmp(name, "clSVMFree") == 0;
  // A lost device fails every call but those that count references on the
  // host: drivers fail a retain or a release only for an invalid object.
  const bool release =
      std::strncmp(name, "clRelease", 9) == 0 || std::strncmp(name, "clRetain", 8) == 0;
  Verdict v;
  for (const Rule& r : s.rules) {
    if (exempt) break;
    if (r.kind == Rule::Fail && v.error == CL_SUCCESS &&
        ((r.function == "*" && r.n == any) || (r.function == name && r.n == nth))) {
      v.error = r.error;
    } else if (r.kind == Rule::Lose && !release && any >= r.n && v.error == CL_SUCCESS) {
      v.error = r.error;
    } else if (r.kind == Rule::OddAnswer && r.function == name) {
      v.odd.push_back(r);
    }
  }
  if (v.error != CL_SUCCESS) ++s.fired;
  return v;
}

// An info query's answer made odd: (param, size, value, size_ret) are the
// query's last four arguments. An empty answer is given instead of the
// driver's (before: `answered` false); the others change what it wrote
// (after: `answered` true). Returns whether a rule applied.
bool make_odd(const std::vector<Rule>& odd, bool answered, cl_uint param, size_t size,
              void* value, size_t* size_ret) {
  bool applied = false;
  for (const Rule& r : odd) {
    if (r.param != param || answered != (r.odd != Odd::Empty)) continue;
    applied = true;
    {
      std::lock_guard<std::mutex> lock(state().mutex);
      ++state().fired;
    }
    switch (r.odd) {
      case Odd::Empty:
        if (value && size > 0) static_cast<char*>(value)[0] = '\0';
        if (size_ret) *size_ret = 1;
        break;
      case Odd::Unterminated: {
        const size_t written = size_ret ? *size_ret : size;
        if (value && written > 0 && written <= size) static_cast<char*>(value)[written - 1] = 'x';
        break;
      }
      case Odd::Oversize:
        if (size_ret) *size_ret = (value ? size : *size_ret) + 4096;
        break;
      case Odd::Zero:
        if (value) std::memset(value, 0, size);
        break;
      case Odd::One:
        if (value) {
          std::memset(value, 0, size);
          if (size == sizeof(cl_uint)) *static_cast<cl_uint*>(value) = 1;
          if (size == sizeof(cl_ulong)) *static_cast<cl_ulong*>(value) = 1;
        }
        break;
    }
  }
  return applied;
}

template <typename T>
constexpr bool is_handle =
    std::is_same_v<T, cl_context> || std::is_same_v<T, cl_command_queue> ||
    std::is_same_v<T, cl_mem> || std::is_same_v<T, cl_program> || std::is_same_v<T, cl_kernel> ||
    std::is_same_v<T, cl_event> || std::is_same_v<T, cl_sampler> ||
    std::is_same_v<T, cl_device_id> || std::is_same_v<T, cl_platform_id>;

// errcode_ret (and clCreateProgramWithBinary's binary_status) get the error.
template <typename A>
void set_error(A a, cl_int error) {
  if constexpr (std::is_same_v<A, cl_int*>) {
    if (a) *a = error;
  }
}
// An event a call hands back.
template <typename A>
void adopt_out(A a) {
  if constexpr (std::is_same_v<A, cl_event*>) {
    if (a) adopt(*a);
  }
}

template <typename T>
struct Hook;
template <typename R, typename... A>
struct Hook<R(CL_API_CALL*)(A...)> {
  // Member: the entry in the dispatch table; Name: its function's name.
  template <R(CL_API_CALL* _cl_icd_dispatch::*Member)(A...), const char* Name>
  static R CL_API_CALL call(A... a) {
    const Verdict v = count(Name, info_param(a...));
    if (v.error != CL_SUCCESS) {
      if constexpr (std::is_same_v<R, cl_int>) {
        return v.error;
      } else if constexpr (!std::is_void_v<R>) {
        (set_error(a, v.error), ...);
        return R{};
      }
    }
    if constexpr (std::is_void_v<R>) {
      (state().real.*Member)(a...);
    } else {
      if constexpr (std::is_same_v<R, cl_int>) {
        if (!v.odd.empty() && info_query(v.odd, false, a...)) return CL_SUCCESS;
      }
      R r = (state().real.*Member)(a...);
      if constexpr (is_handle<R>) adopt(r);
      (adopt_out(a), ...);
      if constexpr (std::is_same_v<R, cl_int>) {
        if (r == CL_SUCCESS) adopt_listed(Name, a...);
        if (r == CL_SUCCESS && !v.odd.empty()) info_query(v.odd, true, a...);
      }
      return r;
    }
  }

  // An info query's last four arguments, (param_name, size, value,
  // size_ret); none for another call.
  struct InfoArgs {
    cl_uint param;
    size_t size;
    void* value;
    size_t* size_ret;
  };
  template <typename... B>
  static std::optional<InfoArgs> info_args(B... b) {
    constexpr std::size_t n = sizeof...(B);
    if constexpr (n >= 4) {
      auto t = std::make_tuple(b...);
      using P = std::tuple_element_t<n - 4, decltype(t)>;
      using S = std::tuple_element_t<n - 3, decltype(t)>;
      using V = std::tuple_element_t<n - 2, decltype(t)>;
      using SR = std::tuple_element_t<n - 1, decltype(t)>;
      if constexpr (std::is_integral_v<P> && std::is_same_v<S, size_t> &&
                    std::is_same_v<V, void*> && std::is_same_v<SR, size_t*>) {
        return InfoArgs{cl_uint(std::get<n - 4>(t)), std::get<n - 3>(t), std::get<n - 2>(t),
                        std::get<n - 1>(t)};
      }
    }
    return std::nullopt;
  }

  // An info query's parameter (for the trace), else -1.
  template <typename... B>
  static long long info_param(B... b) {
    const std::optional<InfoArgs> i = info_args(b...);
    return i ? static_cast<long long>(i->param) : -1;
  }

  // An info query answered oddly where a rule says so (make_odd).
  template <typename... B>
  static bool info_query(const std::vector<Rule>& odd, bool answered, B... b) {
    const std::optional<InfoArgs> i = info_args(b...);
    return i && make_odd(odd, answered, i->param, i->size, i->value, i->size_ret);
  }

  // The objects a call lists in an array it fills: clGetDeviceIDs'
  // devices, clCreateSubDevices' and clCreateKernelsInProgram's.
  template <typename... B>
  static void adopt_listed(const char* name, B... b) {
    auto t = std::make_tuple(b...);
    if constexpr (sizeof...(B) == 5) {
      // clGetDeviceIDs(platform, type, num_entries, devices, num_devices)
      // and clCreateSubDevices(device, properties, num_devices, out_devices,
      // num_devices_ret)
      using D = std::tuple_element_t<3, decltype(t)>;
      using N = std::tuple_element_t<4, decltype(t)>;
      if constexpr (std::is_same_v<D, cl_device_id*> && std::is_same_v<N, cl_uint*>) {
        cl_device_id* out = std::get<3>(t);
        cl_uint listed = std::get<2>(t);
        if (cl_uint* count = std::get<4>(t)) {
          listed = std::min(listed, *count);
        } else if (std::strcmp(name, "clGetDeviceIDs") == 0) {
          cl_uint found = 0;
          if (state().real.clGetDeviceIDs(reinterpret_cast<cl_platform_id>(std::get<0>(t)),
                                          cl_device_type(std::get<1>(t)), 0, nullptr,
                                          &found) != CL_SUCCESS) {
            found = 0;
          }
          listed = std::min(listed, found);
        } else {
          listed = 0;  // how many it wrote is not known: left to the driver's table
        }
        for (cl_uint i = 0; out && i < listed; ++i) adopt(out[i]);
      }
    }
    if constexpr (sizeof...(B) == 4) {
      // clCreateKernelsInProgram(program, num_kernels, kernels, num_kernels_ret)
      using K = std::tuple_element_t<2, decltype(t)>;
      using N = std::tuple_element_t<3, decltype(t)>;
      if constexpr (std::is_same_v<K, cl_kernel*> && std::is_same_v<N, cl_uint*>) {
        cl_kernel* out = std::get<2>(t);
        cl_uint listed = std::get<1>(t);
        if (cl_uint* count = std::get<3>(t)) listed = std::min(listed, *count);
        for (cl_uint i = 0; out && i < listed; ++i) adopt(out[i]);
      }
    }
  }
};

// Every entry of the table that has a name in ocl-icd's header; entries it
// lists as unknown keep the driver's own pointer.
#define FATCL_FAULT_ENTRIES(X)                                                                  \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)                \
  X(clCreateContext) X(clUnloadCompiler)                                                        \
  X(clCreateContextFromType) X(clRetainContext) X(clReleaseContext) X(clGetContextInfo)         \
  X(clCreateCommandQueue) X(clRetainCommandQueue) X(clReleaseCommandQueue)                      \
  X(clGetCommandQueueInfo) X(clCreateBuffer) X(clCreateImage2D) X(clCreateImage3D)              \
  X(clRetainMemObject) X(clReleaseMemObject) X(clGetSupportedImageFormats)                      \
  X(clGetMemObjectInfo) X(clGetImageInfo) X(clCreateSampler) X(clRetainSampler)                 \
  X(clReleaseSampler) X(clGetSamplerInfo) X(clCreateProgramWithSource)                          \
  X(clCreateProgramWithBinary) X(clRetainProgram) X(clReleaseProgram) X(clBuildProgram)         \
  X(clGetProgramInfo) X(clGetProgramBuildInfo) X(clCreateKernel) X(clCreateKernelsInProgram)    \
  X(clRetainKernel) X(clReleaseKernel) X(clSetKernelArg) X(clGetKernelInfo)                     \
  X(clGetKernelWorkGroupInfo) X(clWaitForEvents) X(clGetEventInfo) X(clRetainEvent)             \
  X(clReleaseEvent) X(clGetEventProfilingInfo) X(clFlush) X(clFinish) X(clEnqueueReadBuffer)    \
  X(clEnqueueWriteBuffer) X(clEnqueueCopyBuffer) X(clEnqueueReadImage) X(clEnqueueWriteImage)   \
  X(clEnqueueCopyImage) X(clEnqueueCopyImageToBuffer) X(clEnqueueCopyBufferToImage)             \
  X(clEnqueueMapBuffer) X(clEnqueueMapImage) X(clEnqueueUnmapMemObject)                         \
  X(clEnqueueNDRangeKernel) X(clEnqueueTask) X(clEnqueueNativeKernel) X(clEnqueueMarker)        \
  X(clEnqueueWaitForEvents) X(clEnqueueBarrier) X(clGetExtensionFunctionAddress)                \
  X(clSetEventCallback) X(clCreateSubBuffer) X(clSetMemObjectDestructorCallback)                \
  X(clCreateUserEvent) X(clSetUserEventStatus) X(clEnqueueReadBufferRect)                       \
  X(clEnqueueWriteBufferRect) X(clEnqueueCopyBufferRect) X(clCreateSubDevices)                  \
  X(clRetainDevice) X(clReleaseDevice) X(clCreateImage) X(clCreateProgramWithBuiltInKernels)    \
  X(clCompileProgram) X(clLinkProgram) X(clUnloadPlatformCompiler) X(clGetKernelArgInfo)        \
  X(clEnqueueFillBuffer) X(clEnqueueFillImage) X(clEnqueueMigrateMemObjects)                    \
  X(clEnqueueMarkerWithWaitList) X(clEnqueueBarrierWithWaitList)                                \
  X(clGetExtensionFunctionAddressForPlatform) X(clCreateCommandQueueWithProperties)             \
  X(clCreatePipe) X(clGetPipeInfo) X(clSVMAlloc) X(clSVMFree) X(clEnqueueSVMFree)               \
  X(clEnqueueSVMMemcpy) X(clEnqueueSVMMemFill) X(clEnqueueSVMMap) X(clEnqueueSVMUnmap)          \
  X(clCreateSamplerWithProperties) X(clSetKernelArgSVMPointer) X(clSetKernelExecInfo)           \
  X(clCloneKernel) X(clCreateProgramWithIL) X(clEnqueueSVMMigrateMem)                           \
  X(clGetDeviceAndHostTimer) X(clGetHostTimer) X(clGetKernelSubGroupInfo)                       \
  X(clSetDefaultDeviceCommandQueue) X(clSetProgramReleaseCallback)                              \
  X(clSetProgramSpecializationConstant) X(clCreateBufferWithProperties)                         \
  X(clCreateImageWithProperties) X(clSetContextDestructorCallback)

#define FATCL_FAULT_NAME(f) constexpr char name_##f[] = #f;
FATCL_FAULT_ENTRIES(FATCL_FAULT_NAME)
#undef FATCL_FAULT_NAME

// The real driver, opened once; its table copied and hooked.
bool open_real() {
  State& s = state();
  if (s.library) return true;
  std::string path;
  if (const char* t = std::getenv("FATCL_FAULT_TARGET"); t && *t) {
    path = t;
  } else {
    std::ifstream icd("/etc/OpenCL/vendors/pocl.icd");
    std::getline(icd, path);
  }
  s.library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!s.library) {
    std::fprintf(stderr, "fatcl fault ICD: cannot open the real driver \"%s\": %s\n",
                 path.c_str(), dlerror());
    return false;
  }
  return true;
}

using GetPlatforms = cl_int(CL_API_CALL*)(cl_uint, cl_platform_id*, cl_uint*);

GetPlatforms real_get_platforms() {
  if (!open_real()) return nullptr;
  auto address = reinterpret_cast<void* (*)(const char*)>(
      dlsym(state().library, "clGetExtensionFunctionAddress"));
  void* f = address ? address("clIcdGetPlatformIDsKHR") : nullptr;
  if (!f) f = dlsym(state().library, "clIcdGetPlatformIDsKHR");
  return reinterpret_cast<GetPlatforms>(f);
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries,
                                                       cl_platform_id* platforms,
                                                       cl_uint* num_platforms) {
  const GetPlatforms get = real_get_platforms();
  if (!get) return CL_PLATFORM_NOT_FOUND_KHR;
  State& s = state();
  if (num_entries == 0 && platforms) return CL_INVALID_VALUE;
  std::vector<cl_platform_id> all(16);
  cl_uint n = 0;
  const cl_int err = get(cl_uint(all.size()), all.data(), &n);
  if (err != CL_SUCCESS) return err;
  n = std::min<cl_uint>(n, cl_uint(all.size()));
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (n > 0 && !s.real.clGetPlatformIDs && !s.real.clGetDeviceInfo) {
      s.real = **reinterpret_cast<_cl_icd_dispatch**>(all[0]);
      s.table = s.real;
#define FATCL_FAULT_HOOK(f)                                                                 \
  s.table.f = &Hook<decltype(s.table.f)>::template call<&_cl_icd_dispatch::f, name_##f>;
      FATCL_FAULT_ENTRIES(FATCL_FAULT_HOOK)
#undef FATCL_FAULT_HOOK
    }
  }
  for (cl_uint i = 0; i < n; ++i) adopt(all[i]);
  if (num_platforms) *num_platforms = n;
  for (cl_uint i = 0; platforms && i < num_entries && i < n; ++i) platforms[i] = all[i];
  return CL_SUCCESS;
}

CL_API_ENTRY void* CL_API_CALL clGetExtensionFunctionAddress(const char* name) {
  if (name && std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0) {
    return reinterpret_cast<void*>(&clIcdGetPlatformIDsKHR);
  }
  if (!open_real()) return nullptr;
  auto real = reinterpret_cast<void* (*)(const char*)>(
      dlsym(state().library, "clGetExtensionFunctionAddress"));
  return real ? real(name) : nullptr;
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform,
                                                  cl_platform_info param_name,
                                                  size_t param_value_size, void* param_value,
                                                  size_t* param_value_size_ret) {
  // The ICD loader asks for the suffix through the library's own symbol.
  if (!state().real.clGetPlatformInfo) return CL_INVALID_PLATFORM;
  return state().table.clGetPlatformInfo(platform, param_name, param_value_size, param_value,
                                         param_value_size_ret);
}

}  // extern "C"
