// What fatcl knows of a device and its driver: the capabilities it reads
// (DeviceCaps), the platforms and ICDs there are, picking a device, and the
// driver quirks it works around.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fatcl/opencl.hpp"

namespace fatcl {

struct DeviceProfile;

// What the loader needs to know about a device. query() reads it from the
// driver; tests fill it by hand to describe synthetic devices.
struct DeviceCaps {
  std::string platform_name;
  std::string device_name;
  std::string driver_version;  // CL_DRIVER_VERSION
  std::string device_version;  // CL_DEVICE_VERSION, e.g. "OpenCL 3.0 CUDA"
  int cl_major = 1;            // parsed from device_version
  int cl_minor = 2;
  std::string il_version;         // CL_DEVICE_IL_VERSION as reported; may be ""
  bool khr_il_program = false;    // cl_khr_il_program among the extensions
  std::uint64_t device_type = 0;  // CL_DEVICE_TYPE bits
  std::uint64_t local_mem_bytes = 0;
  cl_uint compute_units = 0;  // CL_DEVICE_MAX_COMPUTE_UNITS
  std::size_t max_work_group_size = 0;
  std::array<std::size_t, 3> max_work_item_sizes{0, 0, 0};
  // CL_FP_FMA in CL_DEVICE_SINGLE_FP_CONFIG: fma() on floats is one
  // instruction, not an emulation.
  bool fused_multiply_add = false;
  std::uint64_t max_mem_alloc_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::uint64_t global_mem_bytes = 0;     // CL_DEVICE_GLOBAL_MEM_SIZE
  std::string vendor;                     // CL_DEVICE_VENDOR
  cl_uint max_clock_mhz = 0;              // CL_DEVICE_MAX_CLOCK_FREQUENCY
  cl_uint native_float_width = 0;         // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT
  // The instruction set the device's code is generated for, as far as it
  // says: a CPU's widest vector extension ("avx512", "avx2", "avx", "sse",
  // "neon") from the device name (PoCL names LLVM's CPU, e.g.
  // "pthread-znver1-...") and the extensions, an NVIDIA GPU's compute
  // capability ("sm_90", cl_nv_device_attribute_query); "" where it does not.
  std::string isa;

  // CL_DEVICE_TYPE_GPU or CL_DEVICE_TYPE_ACCELERATOR: wide parallel hardware
  // with fast __local memory, where staged, register-blocked shapes pay.
  bool is_gpu() const {
    return (device_type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) != 0;
  }

  // NVIDIA's OpenCL, which takes PTX as a program binary.
  bool is_nvidia() const { return platform_name.find("NVIDIA") != std::string::npos; }

  // OpenCL 2.1 or later: clCreateProgramWithIL and CL_DEVICE_IL_VERSION are
  // core (before that they come with cl_khr_il_program).
  bool il_is_core() const { return cl_major * 100 + cl_minor >= 201; }

  // Reads the device. Throws fatcl::Error if a query fails.
  static DeviceCaps query(const cl::Device& device);

  // Whether programs can be created from a SPIR-V module of `version`
  // ("1.0"): the device must be OpenCL 2.1+ or have cl_khr_il_program, and
  // list a SPIR-V version at least as high in its IL version. If not, `why`
  // gets the reason.
  bool accepts_spirv(const std::string& version, std::string* why = nullptr) const;

  // Identifies device and driver; trial launches are remembered under it.
  std::string key() const;
  // What a tuning entry keeps of the device it was measured on, to find the
  // most similar measured device for one never measured (device_similarity).
  DeviceProfile profile() const;
  // One line: name, platform, version, driver, limits, SPIR-V intake.
  std::string summary() const;
};

// What a device reports that bears on which variant runs fastest on it: kept
// with each tuning entry (the device it was measured on), compared with a
// device that has no entry of its own.
struct DeviceProfile {
  std::string platform;  // CL_PLATFORM_NAME: the compiler that makes the code
  std::string device;    // CL_DEVICE_NAME
  std::string driver;    // CL_DRIVER_VERSION
  bool gpu = false;      // DeviceCaps::is_gpu()
  std::string vendor;
  std::string isa;  // DeviceCaps::isa
  unsigned compute_units = 0;
  unsigned max_clock_mhz = 0;
  std::uint64_t local_mem_bytes = 0;
  unsigned native_float_width = 0;  // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT
};
// The ISA a device's name and extensions name (DeviceCaps::isa); `nv_major`
// and `nv_minor`: NVIDIA's compute capability, 0 where not reported.
std::string device_isa(std::string_view device_name, std::string_view extensions,
                       unsigned nv_major = 0, unsigned nv_minor = 0);
// Whether two profiles describe the same hardware under the same name: the
// figures a device name does not pin down (Intel's CPU runtime calls every
// EPYC "AMD EPYC"; PoCL names the LLVM CPU it compiles for, which a build can
// set on another CPU) agree: device type, vendor, ISA, compute units, local
// memory and native float vector width. The clock is left out: a machine
// reports another one from boot to boot.
bool same_hardware(const DeviceProfile& a, const DeviceProfile& b);
// How alike two devices are for tuning, in [0, 1]: 0 across platforms (a
// different compiler) or device types; else the weighted agreement of
// vendor (0.2, on a CPU 0.1), ISA (0.35, on a CPU 0.45: a CPU's compiler
// generates code by its ISA, whoever made the CPU; DeviceCaps::isa, else
// for CPUs the native float vector width; half where neither says),
// compute units (0.15), clock (0.1), local memory (0.1) and driver version
// (0.1), each number by the ratio of the smaller to the larger (a half
// where either reports none). 1 for the same device and driver on the same
// hardware (same_hardware). `why` (may be null) gets the figures, e.g.
// "same vendor, ISA avx2 here, avx512 there, 2 and 2 compute units, ...".
double device_similarity(const DeviceProfile& measured, const DeviceProfile& here,
                         std::string* why = nullptr);
// Below this, a measured device's entries do not carry to another device:
// e.g. another vector ISA (at most 0.65, on a CPU 0.55), where Zen 4's
// AVX-512 ranking ran at 0.21 of the fastest variant on a Zen 1.
constexpr double kSimilarEnough = 0.75;

// The OpenCL platforms the ICD loader lists, each with its devices.
struct PlatformDevices {
  cl::Platform platform;
  std::string name;                 // CL_PLATFORM_NAME
  std::vector<cl::Device> devices;  // empty when the platform has none
};
// Throws fatcl::Error if there is no platform (naming every ICD the loader
// would try and why each gave none, find_icds()) or a query fails.
std::vector<PlatformDevices> list_platforms();

// One installable client driver the ICD loader would try, and whether its
// library opens: a driver whose library does not load (a dependency
// missing, a wrong path) gives no platform, and the ICD loader says nothing.
struct Icd {
  std::string icd_file;  // the .icd file that names the library; "" where OCL_ICD_VENDORS does
  std::string library;   // the name the loader hands to dlopen
  bool opens = false;    // dlopen takes the library (it may still be no ICD)
  std::string problem;   // "" where it opens and is an ICD; else why not (dlerror's words)
  int platforms = 0;     // what its clIcdGetPlatformIDsKHR counts, where it opens
};
// Where the ICD loader looks and what it finds there, by ocl-icd's rules (the
// loader Debian ships): OCL_ICD_VENDORS names a folder of .icd files, one
// .icd file (a bare name is looked for in the vendors folder first) or one
// library; unset or empty, the folder OPENCL_VENDOR_PATH names, else
// /etc/OpenCL/vendors. Each .icd file's first line is a library.
struct IcdSearch {
  std::string where;    // e.g. "OCL_ICD_VENDORS=/x/intel-cpu.icd (an .icd file)"
  std::string problem;  // "" unless the place itself is missing, unreadable or empty
  std::vector<Icd> icds;
  // "ICDs (<where>): <file> -> <library>: opens, 1 platform; ..." on one
  // line per ICD, each prefixed by `indent`.
  std::string to_string(const std::string& indent = "  ") const;
};
// Opens each library as the ICD loader does (dlopen, RTLD_LAZY | RTLD_LOCAL)
// and closes it again; never throws.
IcdSearch find_icds();
// Device `index` of the first platform whose name contains `platform` ("":
// any) and that has a device. Throws fatcl::Error naming the platforms seen
// when there is none, or the number of devices when `index` is out of range.
cl::Device pick_device(const std::string& platform = "", std::size_t index = 0);
// A context of the one device, and an in-order queue on it: how fatcl's
// tools and tests make theirs. Throw fatcl::Error with the OpenCL code.
cl::Context context_for(const cl::Device& device);
cl::CommandQueue queue_for(const cl::Context& context, const cl::Device& device,
                           cl_command_queue_properties properties = 0);
// What load() and Matmul check before anything else: throws fatcl::Error,
// starting with `who`, if the context or the device is null or the device
// is not one of the context's devices.
void check_context_and_device(const cl::Context& context, const cl::Device& device,
                              const std::string& who);

// A driver behaviour fatcl knows of and works around.
struct DriverQuirk {
  std::string id;                    // e.g. "misreported-kernel-work-group-size"
  std::string breaks;                // what the driver gets wrong
  std::string fatcl_does;            // what fatcl does about it
  std::string source_build_options;  // added when building from source, "" for none
  std::string versions;              // the driver versions it applies to, in words
};
// The known quirks that apply to a device (by platform, device name and
// driver version; loader/src/quirks.cpp).
std::vector<DriverQuirk> driver_quirks(const DeviceCaps& caps);
// Whether the quirk of that id applies to the device.
bool has_driver_quirk(const DeviceCaps& caps, std::string_view id);
// Whether a driver version (CL_DRIVER_VERSION: its first run of numbers, as
// in "22.3.6", "3.1+debian" or "Oclgrind 21.10") lies in [from, fixed_in),
// comparing number by number; an empty bound is open. None when the version
// has no number to compare (the quirk table then takes the driver to be
// affected). Throws fatcl::Error if a bound is not a version.
std::optional<bool> driver_version_in(std::string_view version, std::string_view from,
                                      std::string_view fixed_in);

}  // namespace fatcl
