#include "fatcl/vendor_blas.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fatcl/detail/format.hpp"
#include "fatcl/error.hpp"

namespace fatcl {
namespace {

// A library opened for as long as a VendorGemm uses it.
struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
};

// Opens the first of `names` that opens; `why` gets the dynamic linker's
// reason for the last one otherwise.
std::shared_ptr<Library> open_library(const std::vector<const char*>& names, std::string* why) {
  auto lib = std::make_shared<Library>();
  for (const char* name : names) {
    lib->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib->handle) return lib;
    const char* error = dlerror();
    *why = error ? error : std::string(name) + " does not open";
  }
  return nullptr;
}

template <typename F>
bool symbol(const Library& lib, const char* name, F* out, std::string* why) {
  *out = reinterpret_cast<F>(dlsym(lib.handle, name));
  if (!*out) *why = std::string("no ") + name + " in the library";
  return *out != nullptr;
}

// --- OpenBLAS: cblas_sgemm on the host --------------------------------------

constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111;
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                            int, float, float*, int);
using OpenblasThreads = int (*)();
using OpenblasConfig = char* (*)();
using OpenblasCore = char* (*)();

// OpenBLAS built for every x86 core (DYNAMIC_ARCH, as Debian ships it) picks
// its kernels when it loads, by the CPU's family and model; a model newer
// than the library falls back to SSE3 kernels. Debian's 0.3.21 took an
// Intel Xeon of family 6, model 207 (AVX-512) for a Prescott: 38 GFLOP/s
// at 2048^3 on 2 cores, 245 with its SkylakeX kernels. A bar six times too
// low says nothing, so where the detected core is one of those older ones
// and the CPU has AVX2 (or AVX-512), the library is opened again with the
// kernels the CPU can run (OPENBLAS_CORETYPE, as a user would set it), and
// the name says so. A user's own OPENBLAS_CORETYPE is kept.
const char* openblas_core_for_this_cpu(const std::string& detected) {
  static const char* const kOlder[] = {
      "prescott",   "core2",       "penryn",    "dunnington",  "nehalem", "atom",
      "banias",     "katmai",      "opteron",   "barcelona",   "bobcat",  "bulldozer",
      "piledriver", "steamroller", "excavator", "sandybridge", "nano"};
  std::string lower;
  for (char c : detected) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool older = false;
  for (const char* name : kOlder) older = older || lower.rfind(name, 0) == 0;
  if (!older || std::getenv("OPENBLAS_CORETYPE")) return nullptr;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

std::optional<VendorGemm> openblas(std::string* why) {
  const std::vector<const char*> names{"libopenblas.so.0", "libopenblas.so"};
  std::shared_ptr<Library> lib = open_library(names, why);
  if (!lib) return std::nullopt;
  // The core's name is optional (older builds lack it): its absence is no
  // failure, so it is looked up without `why`.
  auto core = reinterpret_cast<OpenblasCore>(dlsym(lib->handle, "openblas_get_corename"));
  std::string kernels;
  if (core) {
    kernels = core();
    if (const char* better = openblas_core_for_this_cpu(kernels)) {
      // Closed (its threads stopped), then opened with the variable set
      // for as long as it loads.
      lib.reset();
      setenv("OPENBLAS_CORETYPE", better, 1);
      lib = open_library(names, why);
      unsetenv("OPENBLAS_CORETYPE");
      if (!lib) return std::nullopt;
      if (!symbol(*lib, "openblas_get_corename", &core, why)) return std::nullopt;
      kernels = std::string(core()) + " kernels, OPENBLAS_CORETYPE set: it detected " + kernels;
    }
  }
  CblasSgemm sgemm = nullptr;
  OpenblasThreads threads = nullptr;
  OpenblasConfig config = nullptr;
  if (!symbol(*lib, "cblas_sgemm", &sgemm, why) ||
      !symbol(*lib, "openblas_get_num_threads", &threads, why) ||
      !symbol(*lib, "openblas_get_config", &config, why)) {
    return std::nullopt;
  }
  // "OpenBLAS 0.3.21 NO_AFFINITY Zen MAX_THREADS=64": its first two words.
  std::string version = config();
  const std::size_t second = version.find(' ', version.find(' ') + 1);
  version = version.substr(0, second);
  struct State {
    std::vector<float> a, b, c;
    int m = 0, n = 0, k = 0;
  };
  auto state = std::make_shared<State>();
  VendorGemm g;
  g.name = version + " (cblas_sgemm, " + std::to_string(threads()) + " threads" +
           (kernels.empty() ? "" : ", " + kernels) + ")";
  g.prepare = [state](const float* a, const float* b, std::size_t m, std::size_t n,
                      std::size_t k) {
    state->a.assign(a, a + m * k);
    state->b.assign(b, b + k * n);
    state->c.assign(m * n, 0.0f);
    state->m = static_cast<int>(m);
    state->n = static_cast<int>(n);
    state->k = static_cast<int>(k);
    return std::string();
  };
  g.run = [lib, sgemm, state] {
    sgemm(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, state->m, state->n, state->k, 1.0f,
          state->a.data(), state->k, state->b.data(), state->n, 0.0f, state->c.data(), state->n);
    return std::string();
  };
  g.result = [state](float* c) {
    std::memcpy(c, state->c.data(), state->c.size() * sizeof(float));
    return std::string();
  };
  return g;
}

// --- cuBLAS: cublasSgemm on the CUDA device of the same PCI bus -------------

// The few declarations of the CUDA runtime and cuBLAS it calls (their ABI:
// statuses are ints, handles pointers), so that fatcl builds without CUDA.
using CudaMalloc = int (*)(void**, std::size_t);
using CudaFree = int (*)(void*);
using CudaMemcpy = int (*)(void*, const void*, std::size_t, int);
using CudaSynchronize = int (*)();
using CudaSetDevice = int (*)(int);
using CudaDeviceCount = int (*)(int*);
using CudaAttribute = int (*)(int*, int, int);
using CudaVersion = int (*)(int*);
using CudaErrorName = const char* (*)(int);
using CublasCreate = int (*)(void**);
using CublasDestroy = int (*)(void*);
using CublasSetMath = int (*)(void*, int);
using CublasVersion = int (*)(void*, int*);
using CublasSgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int,
                            const float*, int, const float*, float*, int);
constexpr int kHostToDevice = 1, kDeviceToHost = 2;
constexpr int kAttrPciBus = 33, kAttrPciDevice = 34, kAttrPciDomain = 50;
constexpr int kCublasOpN = 0, kCublasDefaultMath = 0;  // FP32, no TF32
// cl_nv_device_attribute_query
constexpr cl_device_info kClPciBusNv = 0x4008, kClPciSlotNv = 0x4009, kClPciDomainNv = 0x400A;

struct Cuda {
  std::shared_ptr<Library> runtime, blas;
  CudaMalloc malloc = nullptr;
  CudaFree free = nullptr;
  CudaMemcpy memcpy = nullptr;
  CudaSynchronize synchronize = nullptr;
  CudaErrorName error_name = nullptr;
  CublasDestroy destroy = nullptr;
  CublasSgemm sgemm = nullptr;
  void* handle = nullptr;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  int m = 0, n = 0, k = 0;
  void release_buffers() {
    for (float** p : {&a, &b, &c}) {
      if (*p) free(*p);
      *p = nullptr;
    }
  }
  ~Cuda() {
    release_buffers();
    if (handle) destroy(handle);
  }
  std::string status(const char* call, int s) const {
    if (s == 0) return "";
    const char* name = error_name ? error_name(s) : nullptr;
    return std::string(call) + " failed: " + (name ? name : "status " + std::to_string(s));
  }
};

// The CUDA device whose PCI domain, bus and slot are the OpenCL device's
// (-1 where none is); 0 where the driver does not say them.
int cuda_device_of(const cl::Device& device, CudaDeviceCount count, CudaAttribute attribute) {
  cl_uint bus = 0, slot = 0, domain = 0;
  if (clGetDeviceInfo(device(), kClPciBusNv, sizeof bus, &bus, nullptr) != CL_SUCCESS ||
      clGetDeviceInfo(device(), kClPciSlotNv, sizeof slot, &slot, nullptr) != CL_SUCCESS) {
    return 0;
  }
  clGetDeviceInfo(device(), kClPciDomainNv, sizeof domain, &domain, nullptr);
  int devices = 0;
  if (count(&devices) != 0) return -1;
  for (int d = 0; d < devices; ++d) {
    int b = -1, s = -1, dom = 0;
    attribute(&b, kAttrPciBus, d);
    attribute(&s, kAttrPciDevice, d);
    attribute(&dom, kAttrPciDomain, d);
    if (b == int(bus) && s == int(slot) && dom == int(domain)) return d;
  }
  return -1;
}

std::optional<VendorGemm> cublas(const cl::Device& device, std::string* why) {
  auto cuda = std::make_shared<Cuda>();
  cuda->runtime = open_library({"libcudart.so.13", "libcudart.so.12", "libcudart.so"}, why);
  if (!cuda->runtime) return std::nullopt;
  cuda->blas = open_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, why);
  if (!cuda->blas) return std::nullopt;
  CudaSetDevice set_device = nullptr;
  CudaDeviceCount count = nullptr;
  CudaAttribute attribute = nullptr;
  CudaVersion runtime_version = nullptr;
  CublasCreate create = nullptr;
  CublasSetMath set_math = nullptr;
  CublasVersion blas_version = nullptr;
  const Library& rt = *cuda->runtime;
  const Library& bl = *cuda->blas;
  if (!symbol(rt, "cudaMalloc", &cuda->malloc, why) || !symbol(rt, "cudaFree", &cuda->free, why) ||
      !symbol(rt, "cudaMemcpy", &cuda->memcpy, why) ||
      !symbol(rt, "cudaDeviceSynchronize", &cuda->synchronize, why) ||
      !symbol(rt, "cudaGetErrorName", &cuda->error_name, why) ||
      !symbol(rt, "cudaSetDevice", &set_device, why) ||
      !symbol(rt, "cudaGetDeviceCount", &count, why) ||
      !symbol(rt, "cudaDeviceGetAttribute", &attribute, why) ||
      !symbol(rt, "cudaRuntimeGetVersion", &runtime_version, why) ||
      !symbol(bl, "cublasCreate_v2", &create, why) ||
      !symbol(bl, "cublasDestroy_v2", &cuda->destroy, why) ||
      !symbol(bl, "cublasSetMathMode", &set_math, why) ||
      !symbol(bl, "cublasGetVersion_v2", &blas_version, why) ||
      !symbol(bl, "cublasSgemm_v2", &cuda->sgemm, why)) {
    return std::nullopt;
  }
  const int d = cuda_device_of(device, count, attribute);
  if (d < 0) {
    *why = "no CUDA device has the OpenCL device's PCI bus";
    return std::nullopt;
  }
  std::string failed = cuda->status("cudaSetDevice", set_device(d));
  if (failed.empty()) failed = cuda->status("cublasCreate", create(&cuda->handle));
  if (failed.empty()) {
    failed = cuda->status("cublasSetMathMode", set_math(cuda->handle, kCublasDefaultMath));
  }
  int version = 0;
  if (failed.empty()) failed = cuda->status("cublasGetVersion", blas_version(cuda->handle, &version));
  if (!failed.empty()) {
    *why = failed;
    return std::nullopt;
  }
  VendorGemm g;
  g.name = detail::format("cuBLAS %d.%d.%d (cublasSgemm, CUDA device %d)", version / 10000,
                          version / 100 % 100, version % 100, d);
  g.prepare = [cuda](const float* a, const float* b, std::size_t m, std::size_t n,
                     std::size_t k) {
    cuda->release_buffers();
    cuda->m = static_cast<int>(m);
    cuda->n = static_cast<int>(n);
    cuda->k = static_cast<int>(k);
    const std::size_t bytes[3] = {m * k * 4, k * n * 4, m * n * 4};
    float** buffers[3] = {&cuda->a, &cuda->b, &cuda->c};
    for (int i = 0; i < 3; ++i) {
      const std::string f =
          cuda->status("cudaMalloc", cuda->malloc(reinterpret_cast<void**>(buffers[i]), bytes[i]));
      if (!f.empty()) return f + " (" + std::to_string(bytes[i]) + " B)";
    }
    std::string f = cuda->status("cudaMemcpy (A)", cuda->memcpy(cuda->a, a, bytes[0], kHostToDevice));
    if (f.empty()) f = cuda->status("cudaMemcpy (B)", cuda->memcpy(cuda->b, b, bytes[1], kHostToDevice));
    return f;
  };
  g.run = [cuda] {
    // Row-major C = A * B is column-major C^T = B^T * A^T.
    const float one = 1, zero = 0;
    std::string f = cuda->status(
        "cublasSgemm", cuda->sgemm(cuda->handle, kCublasOpN, kCublasOpN, cuda->n, cuda->m, cuda->k,
                                   &one, cuda->b, cuda->n, cuda->a, cuda->k, &zero, cuda->c,
                                   cuda->n));
    if (f.empty()) f = cuda->status("cudaDeviceSynchronize", cuda->synchronize());
    return f;
  };
  g.result = [cuda](float* c) {
    return cuda->status("cudaMemcpy (C)",
                        cuda->memcpy(c, cuda->c, std::size_t(cuda->m) * cuda->n * 4, kDeviceToHost));
  };
  return g;
}

}  // namespace

std::optional<VendorGemm> find_vendor_gemm(const cl::Device& device, std::string* why_not) {
  std::string why;
  const DeviceCaps caps = DeviceCaps::query(device);
  std::optional<VendorGemm> found;
  if (caps.is_nvidia()) {
    found = cublas(device, &why);
  } else if (caps.device_type & CL_DEVICE_TYPE_CPU) {
    found = openblas(&why);
  } else {
    why = "no vendor BLAS for a " + caps.vendor + " device on " + caps.platform_name;
  }
  if (!found && why_not) *why_not = why;
  return found;
}

std::string run_vendor_gemm_into(const VendorGemm& vendor, const cl::CommandQueue& queue,
                                 const cl::Buffer& c, std::size_t count) {
  std::vector<float> host(count);
  std::string failed = vendor.run();
  if (failed.empty()) failed = vendor.result(host.data());
  if (failed.empty()) {
    const cl_int s = queue.enqueueWriteBuffer(c, CL_TRUE, 0, count * sizeof(float), host.data());
    if (s != CL_SUCCESS) failed = "writing the vendor's C back failed: " + cl_status_name(s);
  }
  return failed;
}

}  // namespace fatcl
