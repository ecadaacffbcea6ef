// The known-quirk table: driver behaviours measured on the runtimes fatcl is
// tested on, and what fatcl does about each. The loader consults it and the
// explanation shows the rows that apply.
#include "fatcl/loader.hpp"

namespace fatcl {
namespace {

struct QuirkRow {
  const char* platform;  // substring of CL_PLATFORM_NAME
  const char* id;
  const char* breaks;
  const char* fatcl_does;
  const char* source_build_options;
};

const QuirkRow kQuirks[] = {
    {"rusticl", "misreported-kernel-work-group-size",
     "CL_KERNEL_WORK_GROUP_SIZE reads 32 for kernels that run 1024-item work-groups (Mesa 22.3)",
     "a family's trial launch settles it; without one the device limit is used", ""},
    {"rusticl", "loop-limit-65536",
     "llvmpipe stops every work-item silently after 65,535 loop iterations in all, and does not "
     "unroll fatcl's inner loops (Mesa 22.3)",
     "fatcl::Matmul splits K into launches of at most 256", ""},
    {"rusticl", "misreported-kernel-local-mem-size",
     "CL_KERNEL_LOCAL_MEM_SIZE reads twice the __local bytes a kernel declares (Mesa 22.3)",
     "the module's own count (the manifest's local_mem_bytes) is checked against the device", ""},
    {"NVIDIA CUDA", "misreported-kernel-work-group-size",
     "CL_KERNEL_WORK_GROUP_SIZE reads 256 for kernels that run 1024-item work-groups (driver 580)",
     "a family's trial launch settles it; without one the device limit is used", ""},
    {"NVIDIA CUDA", "no-spirv-intake",
     "CL_DEVICE_IL_VERSION is empty and clCreateProgramWithIL fails (driver 580)",
     "the PTX tier is used (clCreateProgramWithBinary), else the source tier", ""},
    {"Oclgrind", "uninitialized-plugin-freeze",
     "the --uninitialized checker aborts on LLVM's freeze instruction, which Oclgrind's own "
     "optimiser emits for loops with guarded prefetches (Oclgrind 21.10)",
     "kernels are built from source with -cl-opt-disable", "-cl-opt-disable"},
};

}  // namespace

std::vector<DriverQuirk> driver_quirks(const DeviceCaps& caps) {
  std::vector<DriverQuirk> out;
  for (const QuirkRow& q : kQuirks) {
    if (caps.platform_name.find(q.platform) != std::string::npos) {
      out.push_back({q.id, q.breaks, q.fatcl_does, q.source_build_options});
    }
  }
  return out;
}

bool has_driver_quirk(const DeviceCaps& caps, std::string_view id) {
  for (const QuirkRow& q : kQuirks) {
    if (id == q.id && caps.platform_name.find(q.platform) != std::string::npos) return true;
  }
  return false;
}

}  // namespace fatcl
