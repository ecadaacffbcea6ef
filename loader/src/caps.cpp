// DeviceCaps: reading a device, and what its IL version lets it take.
#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>
#include <vector>

#include "fatcl/detail/format.hpp"
#include "fatcl/loader.hpp"

namespace fatcl {
namespace {

std::string device_string(const cl::Device& device, cl_device_info what, const char* name) {
  std::size_t size = 0;
  const std::string call = std::string("clGetDeviceInfo(") + name + ")";
  check_cl(clGetDeviceInfo(device(), what, 0, nullptr, &size), call);
  // NVIDIA reports an empty CL_DEVICE_IL_VERSION with size 1 (just the NUL).
  std::string value(size, '\0');
  if (size > 0) check_cl(clGetDeviceInfo(device(), what, size, value.data(), nullptr), call);
  while (!value.empty() && (value.back() == '\0' || value.back() == ' ')) value.pop_back();
  return value;
}

template <typename T>
T device_value(const cl::Device& device, cl_device_info what, const char* name) {
  T value{};
  check_cl(clGetDeviceInfo(device(), what, sizeof value, &value, nullptr),
           std::string("clGetDeviceInfo(") + name + ")");
  return value;
}

// "1.2" -> 102; "" or malformed -> -1 (no sscanf: an out-of-range %d is
// undefined behaviour, and these strings come from drivers).
int version_number(std::string_view text) {
  int major = 0, minor = 0;
  if (!parse_version(text, &major, &minor) || minor > 99) return -1;
  return major * 100 + minor;
}

}  // namespace

DeviceCaps DeviceCaps::query(const cl::Device& device) {
  DeviceCaps caps;
  cl_platform_id platform =
      device_value<cl_platform_id>(device, CL_DEVICE_PLATFORM, "CL_DEVICE_PLATFORM");
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size) == CL_SUCCESS && size) {
    caps.platform_name.resize(size);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, caps.platform_name.data(), nullptr);
    while (!caps.platform_name.empty() && caps.platform_name.back() == '\0') {
      caps.platform_name.pop_back();
    }
  }
  caps.device_name = device_string(device, CL_DEVICE_NAME, "CL_DEVICE_NAME");
  caps.driver_version = device_string(device, CL_DRIVER_VERSION, "CL_DRIVER_VERSION");
  caps.device_version = device_string(device, CL_DEVICE_VERSION, "CL_DEVICE_VERSION");
  if (!parse_opencl_version(caps.device_version, &caps.cl_major, &caps.cl_minor)) {
    throw Error("CL_DEVICE_VERSION \"" + caps.device_version.substr(0, 80) +
                "\" is not \"OpenCL <major>.<minor> ...\"");
  }
  const std::string extensions =
      device_string(device, CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS");
  caps.khr_il_program = (" " + extensions + " ").find(" cl_khr_il_program ") != std::string::npos;
  // CL_DEVICE_IL_VERSION is core in 2.1; CL_DEVICE_IL_VERSION_KHR (the same
  // enum value) comes with the extension. Other devices must not be asked.
  if (caps.il_is_core() || caps.khr_il_program) {
    caps.il_version = device_string(device, CL_DEVICE_IL_VERSION, "CL_DEVICE_IL_VERSION");
  }
  caps.device_type = device_value<cl_device_type>(device, CL_DEVICE_TYPE, "CL_DEVICE_TYPE");
  caps.local_mem_bytes =
      device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE");
  caps.max_mem_alloc_bytes =
      device_value<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
  caps.global_mem_bytes =
      device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE, "CL_DEVICE_GLOBAL_MEM_SIZE");
  caps.compute_units =
      device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS");
  caps.max_work_group_size = device_value<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                                       "CL_DEVICE_MAX_WORK_GROUP_SIZE");
  std::size_t sizes[3] = {0, 0, 0};
  check_cl(clGetDeviceInfo(device(), CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, nullptr),
           "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
  caps.max_work_item_sizes = {sizes[0], sizes[1], sizes[2]};
  caps.vendor = device_string(device, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR");
  caps.max_clock_mhz =
      device_value<cl_uint>(device, CL_DEVICE_MAX_CLOCK_FREQUENCY, "CL_DEVICE_MAX_CLOCK_FREQUENCY");
  caps.native_float_width = device_value<cl_uint>(device, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
                                                  "CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT");
  cl_uint nv_major = 0, nv_minor = 0;
  if ((" " + extensions + " ").find(" cl_nv_device_attribute_query ") != std::string::npos) {
    // CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV / _MINOR_NV (cl_ext.h)
    nv_major = device_value<cl_uint>(device, 0x4000, "CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV");
    nv_minor = device_value<cl_uint>(device, 0x4001, "CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV");
  }
  caps.isa = device_isa(caps.device_name, extensions, nv_major, nv_minor);
  caps.fused_multiply_add = (device_value<cl_device_fp_config>(device, CL_DEVICE_SINGLE_FP_CONFIG,
                                                               "CL_DEVICE_SINGLE_FP_CONFIG") &
                             CL_FP_FMA) != 0;
  return caps;
}

bool DeviceCaps::accepts_spirv(const std::string& version, std::string* why) const {
  auto refuse = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (!il_is_core() && !khr_il_program) {
    return refuse("OpenCL " + std::to_string(cl_major) + "." + std::to_string(cl_minor) +
                  " without cl_khr_il_program takes no IL");
  }
  if (il_version.empty()) {
    return refuse("CL_DEVICE_IL_VERSION is empty: the driver takes no SPIR-V");
  }
  // "SPIR-V_1.2 SPIR-V_1.0 ...": SPIR-V is backward compatible, so the
  // highest listed version bounds what the device takes.
  int best = -1;
  std::istringstream in(il_version);
  for (std::string token; in >> token;) {
    if (token.rfind("SPIR-V_", 0) == 0) best = std::max(best, version_number(token.substr(7)));
  }
  if (best < 0) {
    return refuse("CL_DEVICE_IL_VERSION \"" + il_version.substr(0, 80) +
                  "\" lists no SPIR-V version");
  }
  const int wanted = version_number(version);
  if (wanted < 0) {
    return refuse("the module's SPIR-V version \"" + version.substr(0, 40) + "\" is malformed");
  }
  if (wanted > best) {
    return refuse("the device takes SPIR-V up to " + std::to_string(best / 100) + "." +
                  std::to_string(best % 100) + ", the module is SPIR-V " + version);
  }
  return true;
}

std::string device_isa(std::string_view device_name, std::string_view extensions, unsigned nv_major,
                       unsigned nv_minor) {
  if (nv_major > 0) return "sm_" + std::to_string(nv_major) + std::to_string(nv_minor);
  std::string text = std::string(device_name) + " " + std::string(extensions);
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](std::string_view word) { return text.find(word) != std::string::npos; };
  if (has("avx512")) return "avx512";
  if (has("avx2")) return "avx2";
  // PoCL names the CPU LLVM generates for; LLVM's names without the ISA in
  // them, by their widest vector extension.
  static const std::pair<const char*, const char*> kCpus[] = {{"znver4", "avx512"},
                                                              {"znver5", "avx512"},
                                                              {"cascadelake", "avx512"},
                                                              {"cooperlake", "avx512"},
                                                              {"icelake", "avx512"},
                                                              {"tigerlake", "avx512"},
                                                              {"sapphirerapids", "avx512"},
                                                              {"graniterapids", "avx512"},
                                                              {"emeraldrapids", "avx512"},
                                                              {"rocketlake", "avx512"},
                                                              {"cannonlake", "avx512"},
                                                              {"znver1", "avx2"},
                                                              {"znver2", "avx2"},
                                                              {"znver3", "avx2"},
                                                              {"haswell", "avx2"},
                                                              {"broadwell", "avx2"},
                                                              {"skylake", "avx2"},
                                                              {"alderlake", "avx2"},
                                                              {"raptorlake", "avx2"},
                                                              {"meteorlake", "avx2"},
                                                              {"arrowlake", "avx2"},
                                                              {"lunarlake", "avx2"},
                                                              {"bdver4", "avx2"},
                                                              {"sandybridge", "avx"},
                                                              {"ivybridge", "avx"},
                                                              {"bdver1", "avx"},
                                                              {"bdver2", "avx"},
                                                              {"bdver3", "avx"},
                                                              {"btver2", "avx"},
                                                              {"nehalem", "sse"},
                                                              {"westmere", "sse"},
                                                              {"core2", "sse"},
                                                              {"neoverse", "neon"},
                                                              {"cortex-a", "neon"},
                                                              {"apple-m", "neon"}};
  for (const auto& [cpu, isa] : kCpus) {
    if (has(cpu)) return isa;
  }
  return "";
}

DeviceProfile DeviceCaps::profile() const {
  DeviceProfile p;
  p.platform = platform_name;
  p.device = device_name;
  p.driver = driver_version;
  p.gpu = is_gpu();
  p.vendor = vendor;
  p.isa = isa;
  p.compute_units = compute_units;
  p.max_clock_mhz = max_clock_mhz;
  p.local_mem_bytes = local_mem_bytes;
  p.native_float_width = native_float_width;
  return p;
}

bool same_hardware(const DeviceProfile& a, const DeviceProfile& b) {
  return a.gpu == b.gpu && a.vendor == b.vendor && a.isa == b.isa &&
         a.compute_units == b.compute_units && a.local_mem_bytes == b.local_mem_bytes &&
         a.native_float_width == b.native_float_width;
}

double device_similarity(const DeviceProfile& measured, const DeviceProfile& here,
                         std::string* why) {
  auto say = [&](const std::string& text) {
    if (why) *why = text;
  };
  if (measured.platform != here.platform) {
    say("another platform (" + measured.platform + "): another compiler");
    return 0;
  }
  if (measured.gpu != here.gpu) {
    say(std::string("a ") + (measured.gpu ? "GPU" : "CPU") + ", this device is not");
    return 0;
  }
  if (measured.device == here.device && measured.driver == here.driver &&
      same_hardware(measured, here)) {
    say("this device and driver");
    return 1;
  }
  std::vector<std::string> said;
  double score = 0;
  // The smaller over the larger; a half where either is unknown (a driver
  // that reports no clock).
  auto ratio = [](double a, double b) {
    return a > 0 && b > 0 ? std::min(a, b) / std::max(a, b) : 0.5;
  };
  auto number = [&](const char* what, double weight, double there, double mine) {
    const double r = ratio(there, mine);
    score += weight * r;
    said.push_back(detail::format("%s %.0f here, %.0f there", what, mine, there));
  };
  // A GPU's vendor stands for its architecture; a CPU's compiler generates
  // code by the ISA (Debian's PoCL compiles for "skylake-avx512" on a Zen 4
  // and on an Intel Xeon alike), so there the ISA weighs more.
  const double vendor_weight = here.gpu ? 0.2 : 0.1, isa_weight = 0.55 - vendor_weight;
  if (measured.vendor == here.vendor) {
    score += vendor_weight;
    said.push_back("same vendor");
  } else {
    said.push_back("vendor " + here.vendor + " here, " + measured.vendor + " there");
  }
  if (!measured.isa.empty() && !here.isa.empty()) {
    if (measured.isa == here.isa) score += isa_weight;
    said.push_back(measured.isa == here.isa
                       ? "same ISA (" + here.isa + ")"
                       : "ISA " + here.isa + " here, " + measured.isa + " there");
  } else if (!here.gpu && measured.native_float_width && here.native_float_width) {
    // A CPU that names no ISA: its native vector width stands for it.
    const bool same = measured.native_float_width == here.native_float_width;
    if (same) score += isa_weight;
    said.push_back("native float vector width " + std::to_string(here.native_float_width) +
                   " here, " + std::to_string(measured.native_float_width) + " there");
  } else {
    score += isa_weight / 2;
    said.push_back("ISA not known");
  }
  number("compute units", 0.15, measured.compute_units, here.compute_units);
  number("MHz", 0.1, measured.max_clock_mhz, here.max_clock_mhz);
  number("KiB local memory", 0.1, double(measured.local_mem_bytes) / 1024,
         double(here.local_mem_bytes) / 1024);
  if (measured.driver == here.driver) {
    score += 0.1;
    said.push_back("same driver");
  } else {
    said.push_back("driver " + here.driver + " here, " + measured.driver + " there");
  }
  std::string text;
  for (const std::string& s : said) text += (text.empty() ? "" : ", ") + s;
  say(text);
  // 1 is this device and driver only: another device that reports the same
  // figures (PoCL built for znver1 and for znver3 on one machine) is a
  // neighbour, and the explanation names it.
  return std::min(score, 0.99);
}

std::string DeviceCaps::key() const {
  return platform_name + "|" + device_name + "|" + device_version + "|" + driver_version;
}

std::string DeviceCaps::summary() const {
  std::string spirv = il_version.empty() ? "none" : il_version;
  std::string why;
  if (!accepts_spirv("1.0", &why)) spirv += " (" + why + ")";
  return device_name + " [" + platform_name + ", " + device_version + ", driver " + driver_version +
         "]: " + (is_gpu() ? "GPU" : "CPU") + ", local memory " +
         std::to_string(local_mem_bytes / 1024) +
         " KiB, work-group <= " + std::to_string(max_work_group_size) + " (" +
         std::to_string(max_work_item_sizes[0]) + "x" + std::to_string(max_work_item_sizes[1]) +
         "x" + std::to_string(max_work_item_sizes[2]) + "), " +
         (fused_multiply_add ? "fused" : "no fused") + " multiply-add, SPIR-V intake: " + spirv;
}

}  // namespace fatcl
