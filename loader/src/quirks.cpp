// The known-quirk table: driver behaviours measured on the runtimes fatcl is
// tested on, and what fatcl does about each. A row names the platform and
// device it applies to and a range of driver versions (CL_DRIVER_VERSION):
// from the first version known to have it ("" for every earlier one too) up
// to the first version known to be fixed ("" while none is known, so every
// later one). A driver version that cannot be read is taken to be affected:
// every workaround here is safe where it is not needed. The loader consults
// the table and the explanation shows the rows that apply.
#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "fatcl/loader.hpp"

namespace fatcl {
namespace {

struct QuirkRow {
  const char* platform;  // substring of CL_PLATFORM_NAME, "" for any
  const char* device;    // substring of CL_DEVICE_NAME, "" for any
  const char* from;      // first driver version known to have it, "" for all before
  const char* fixed_in;  // first driver version known without it, "" for none known
  const char* measured;  // the driver it was measured on
  const char* id;
  const char* breaks;
  const char* fatcl_does;
  const char* source_build_options;
};

const QuirkRow kQuirks[] = {
    {"rusticl", "", "22.3", "", "Mesa 22.3.6", "misreported-kernel-work-group-size",
     "CL_KERNEL_WORK_GROUP_SIZE reads 32 for kernels that run 1024-item work-groups",
     "a family's trial launch settles it; without one the device limit is used", ""},
    // gallivm's loop limiter (LP_MAX_TGSI_LOOP_ITERATIONS 65535) is in every
    // Mesa release's llvmpipe so far, under rusticl and Clover alike.
    {"", "llvmpipe", "", "", "rusticl, Mesa 22.3.6", "loop-limit-65536",
     "llvmpipe stops every work-item silently after 65,535 loop iterations in all, and does not "
     "unroll fatcl's inner loops",
     "families whose loops run long ask has_driver_quirk(\"loop-limit-65536\") and split "
     "their work into shorter launches",
     ""},
    {"rusticl", "", "22.3", "", "Mesa 22.3.6", "misreported-kernel-local-mem-size",
     "CL_KERNEL_LOCAL_MEM_SIZE reads twice the __local bytes a kernel declares",
     "the module's own count (the manifest's local_mem_bytes) is checked against the device", ""},
    {"rusticl", "", "22.3", "", "Mesa 22.3.6", "zero-profiling-timestamps",
     "profiling event timestamps read zero",
     "fatcl tune and bench time with the host clock around a finished queue", ""},
    {"rusticl", "", "22.3", "", "Mesa 22.3.6", "concurrent-calls-race",
     "OpenCL calls made from several threads at once on one queue (kernels set and enqueued, "
     "buffers made and read, kernels released) give wrong products: four threads calling the "
     "GEMM entry points got a wrong or unwritten C in 5 of 30 runs, 1 of 30 with fatcl's calls "
     "taken in turn, none of 30 with the test's own calls taken in turn too",
     "the GEMM entry points take their calls on such a device one at a time (and ClearCache "
     "waits for them)",
     ""},
    {"NVIDIA CUDA", "", "580", "", "580.159.04", "misreported-kernel-work-group-size",
     "CL_KERNEL_WORK_GROUP_SIZE reads 256 for kernels that run 1024-item work-groups",
     "a family's trial launch settles it; without one the device limit is used", ""},
    {"NVIDIA CUDA", "", "", "", "580.159.04", "no-spirv-intake",
     "CL_DEVICE_IL_VERSION is empty and clCreateProgramWithIL fails",
     "the PTX tier is used (clCreateProgramWithBinary), else the source tier", ""},
    {"Oclgrind", "", "", "", "Oclgrind 21.10", "uninitialized-plugin-freeze",
     "the --uninitialized checker aborts on LLVM's freeze instruction, which Oclgrind's own "
     "optimiser emits for loops with guarded prefetches",
     "kernels are built from source with -cl-opt-disable", "-cl-opt-disable"},
    {"Oclgrind", "", "", "", "Oclgrind 21.10", "kernel-local-mem-counts-the-program",
     "a kernel gets the __local memory of every kernel in its program (CL_KERNEL_LOCAL_MEM_SIZE "
     "reads 33280 B for a blocked 128x128 point, whose kernel declares 16640, and a launch "
     "beyond the device's 32 KiB fails with CL_OUT_OF_RESOURCES)",
     "a variant whose program's __local memory in all (the manifest's "
     "program_local_mem_bytes) exceeds the device's is refused before it is built, and "
     "CL_KERNEL_LOCAL_MEM_SIZE is checked after each build",
     ""},
    {"Oclgrind", "", "", "", "Oclgrind 21.10", "no-noalias-scope-intrinsic",
     "clang emits llvm.experimental.noalias.scope.decl where it inlines a function with "
     "restrict parameters (the blocked family's tile, always_inline), and Oclgrind's interpreter "
     "does not know it: the kernel fails to create",
     "kernels are built with restrict defined away (-Drestrict=): the same kernel without the "
     "no-alias promise",
     "-Drestrict="},
};

// The first run of dot-separated numbers in a driver version ("22.3.6",
// "3.1+debian", "580.159.04", "Oclgrind 21.10"); none if there is no digit
// or a number has more than 9 digits.
std::optional<std::vector<long>> version_numbers(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return std::nullopt;
  std::vector<long> out;
  while (true) {
    long n = 0;
    std::size_t digits = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (++digits > 9) return std::nullopt;
      n = n * 10 + (text[i++] - '0');
    }
    out.push_back(n);
    if (i + 1 < text.size() && text[i] == '.' &&
        std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      ++i;
      continue;
    }
    return out;
  }
}

// a < b, missing components read as 0 ("22.3" == "22.3.0").
bool version_less(const std::vector<long>& a, const std::vector<long>& b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const long x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y;
  }
  return false;
}

std::string range_text(const QuirkRow& q) {
  std::string r = *q.from ? std::string(q.from) + " and later" : std::string("every version");
  if (*q.fixed_in) r += ", before " + std::string(q.fixed_in);
  return r + ", measured on " + q.measured;
}

// Whether the row applies; `note` gets why when the version could not be read.
bool applies(const QuirkRow& q, const DeviceCaps& caps, std::string* note) {
  if (caps.platform_name.find(q.platform) == std::string::npos) return false;
  if (caps.device_name.find(q.device) == std::string::npos) return false;
  const std::optional<bool> in = driver_version_in(caps.driver_version, q.from, q.fixed_in);
  if (!in) {
    if (note)
      *note = "driver version \"" + caps.driver_version.substr(0, 40) +
              "\" not readable, so taken to be affected";
    return true;
  }
  return *in;
}

}  // namespace

std::optional<bool> driver_version_in(std::string_view version, std::string_view from,
                                      std::string_view fixed_in) {
  if (from.empty() && fixed_in.empty()) return true;
  const auto have = version_numbers(version);
  if (!have) return std::nullopt;
  if (!from.empty()) {
    const auto low = version_numbers(from);
    if (!low) throw Error("quirk table: \"" + std::string(from) + "\" is not a version");
    if (version_less(*have, *low)) return false;
  }
  if (!fixed_in.empty()) {
    const auto high = version_numbers(fixed_in);
    if (!high) throw Error("quirk table: \"" + std::string(fixed_in) + "\" is not a version");
    if (!version_less(*have, *high)) return false;
  }
  return true;
}

std::vector<DriverQuirk> driver_quirks(const DeviceCaps& caps) {
  std::vector<DriverQuirk> out;
  for (const QuirkRow& q : kQuirks) {
    std::string note;
    if (applies(q, caps, &note)) {
      out.push_back({q.id, q.breaks, q.fatcl_does, q.source_build_options,
                     range_text(q) + (note.empty() ? "" : "; " + note)});
    }
  }
  return out;
}

bool has_driver_quirk(const DeviceCaps& caps, std::string_view id) {
  for (const QuirkRow& q : kQuirks) {
    if (id == q.id && applies(q, caps, nullptr)) return true;
  }
  return false;
}

}  // namespace fatcl
