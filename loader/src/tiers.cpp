// The tiers: SPIR-V (clCreateProgramWithIL), PTX (NVIDIA,
// clCreateProgramWithBinary) and OpenCL C source.
#include "tiers.hpp"

#include <cstdint>

#include "fatcl/error.hpp"

namespace fatcl {

const std::vector<Tier>& all_tiers() {
  static const std::vector<Tier> tiers{Tier::SpirV, Tier::Ptx, Tier::Source};
  return tiers;
}

const char* to_string(Tier tier) {
  switch (tier) {
    case Tier::SpirV:
      return "spirv";
    case Tier::Ptx:
      return "ptx";
    case Tier::Source:
      return "source";
  }
  return "?";
}

Tier parse_tier(std::string_view text) {
  for (Tier t : all_tiers()) {
    if (text == to_string(t)) return t;
  }
  throw Error("unknown tier \"" + std::string(text).substr(0, 40) +
              "\" (expected spirv, ptx or source)");
}

namespace detail {
namespace {

using CreateWithILKHR = cl_program(CL_API_CALL*)(cl_context, const void*, std::size_t, cl_int*);

// What is wrong with embedded bytes against their manifest record, or "":
// nothing unchecked reaches a driver.
std::string damage(std::string_view bytes, const std::string& sha256, const std::string& what) {
  if (sha256_hex(bytes.data(), bytes.size()) != sha256) {
    return "the embedded " + what +
           " does not match the SHA-256 its manifest records (damaged or edited after the "
           "build); not handed to the driver";
  }
  return "";
}

std::string spirv_header_problem(std::string_view il, const Variant& v) {
  if (il.size() < 20 || il.size() % 4 != 0) {
    return "the embedded module has " + std::to_string(il.size()) +
           " bytes, not a SPIR-V module's whole 4-byte words after a 20-byte header";
  }
  auto word = [&](std::size_t i) {
    std::uint32_t w = 0;
    for (int b = 3; b >= 0; --b) w = (w << 8) | static_cast<unsigned char>(il[i * 4 + b]);
    return w;
  };
  if (word(0) != 0x07230203u)
    return "the embedded module does not start with SPIR-V's magic number";
  const std::uint32_t version = word(1);
  const std::string declared =
      std::to_string((version >> 16) & 0xff) + "." + std::to_string((version >> 8) & 0xff);
  if (declared != v.spirv_version) {
    return "the embedded module declares SPIR-V " + declared + ", its manifest " + v.spirv_version;
  }
  return "";
}

class SpirVTier final : public TierStrategy {
 public:
  Tier tier() const override { return Tier::SpirV; }
  std::string refusal(const Manifest&, const Variant& v, const DeviceCaps& caps) const override {
    std::string why;
    return caps.accepts_spirv(v.spirv_version, &why) ? "" : why;
  }
  std::string_view input(const Family& family, const Variant& v) const override {
    return family.spirv(v.name);
  }
  std::string built(const Family&, const Variant& v, const std::string&) const override {
    return v.sha256;
  }
  cl_program create(const cl::Context& context, const cl::Device& device, const DeviceCaps& caps,
                    const Family& family, const Variant& v, const std::string&, std::string* how,
                    std::string* failure) const override {
    const std::string_view il = family.spirv(v.name);
    *failure = spirv_header_problem(il, v);
    if (failure->empty()) *failure = damage(il, v.sha256, "module");
    if (!failure->empty()) return nullptr;
    cl_int err = CL_SUCCESS;
    cl_program raw = nullptr;
    if (caps.il_is_core()) {
      raw = clCreateProgramWithIL(context(), il.data(), il.size(), &err);
      *how = "clCreateProgramWithIL";
    } else {
      cl_platform_id platform = nullptr;
      clGetDeviceInfo(device(), CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
      auto create = reinterpret_cast<CreateWithILKHR>(
          clGetExtensionFunctionAddressForPlatform(platform, "clCreateProgramWithILKHR"));
      if (!create) {
        *failure = "cl_khr_il_program is listed but clCreateProgramWithILKHR is not found";
        return nullptr;
      }
      raw = create(context(), il.data(), il.size(), &err);
      *how = "clCreateProgramWithILKHR";
    }
    if (err != CL_SUCCESS || !raw) {
      *failure = *how + " failed: " + cl_status_name(err) + " (" + std::to_string(err) + ")";
      if (raw) clReleaseProgram(raw);
      return nullptr;
    }
    *how = "SPIR-V " + v.spirv_version + " module (" + std::to_string(il.size()) + " B) through " +
           *how;
    return raw;
  }
};

class PtxTier final : public TierStrategy {
 public:
  Tier tier() const override { return Tier::Ptx; }
  std::string refusal(const Manifest&, const Variant& v, const DeviceCaps& caps) const override {
    if (!v.ptx) {
      return "the bundle has no PTX for this variant (built without llvm-link-15, opt-15, llc-15 "
             "and libclc-15)";
    }
    if (!caps.is_nvidia()) {
      return "PTX is taken only by NVIDIA's OpenCL; this platform is " +
             caps.platform_name.substr(0, 80);
    }
    return "";
  }
  std::string_view input(const Family& family, const Variant& v) const override {
    return family.ptx(v.name);
  }
  std::string built(const Family&, const Variant& v, const std::string&) const override {
    return v.ptx ? v.ptx->sha256 : "";
  }
  cl_program create(const cl::Context& context, const cl::Device& device, const DeviceCaps&,
                    const Family& family, const Variant& v, const std::string&, std::string* how,
                    std::string* failure) const override {
    const std::string_view ptx = family.ptx(v.name);
    if (!(*failure = damage(ptx, v.ptx->sha256, "PTX")).empty()) return nullptr;
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(ptx.data());
    const std::size_t size = ptx.size();
    cl_device_id dev = device();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program raw = clCreateProgramWithBinary(context(), 1, &dev, &size, &bytes, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS || !raw) {
      *failure = "clCreateProgramWithBinary refused the PTX: " +
                 cl_status_name(err != CL_SUCCESS ? err : status);
      if (raw) clReleaseProgram(raw);
      return nullptr;
    }
    *how = "PTX " + v.ptx->ptx_version + " for " + v.ptx->target + " (" + std::to_string(size) +
           " B) through clCreateProgramWithBinary";
    return raw;
  }
};

class SourceTier final : public TierStrategy {
 public:
  Tier tier() const override { return Tier::Source; }
  std::string refusal(const Manifest& manifest, const Variant&, const DeviceCaps&) const override {
    return manifest.source_embedded ? ""
                                    : "the OpenCL C source was left out on purpose (NO_SOURCE): "
                                      "precompiled tiers only";
  }
  std::string_view input(const Family& family, const Variant&) const override {
    return family.source();
  }
  std::string built(const Family& family, const Variant&,
                    const std::string& build_options) const override {
    return family.manifest().source_sha256 + " " + build_options;
  }
  std::string build_options(const Family& family, const Variant& v,
                            const DeviceCaps& caps) const override {
    std::string options = "-cl-std=" + family.manifest().language;
    const std::string defines = v.define_options();
    if (!defines.empty()) options += " " + defines;
    for (const DriverQuirk& q : driver_quirks(caps)) {
      if (!q.source_build_options.empty()) options += " " + q.source_build_options;
    }
    return options;
  }
  cl_program create(const cl::Context& context, const cl::Device&, const DeviceCaps&,
                    const Family& family, const Variant&, const std::string& build_options,
                    std::string* how, std::string* failure) const override {
    const std::string_view source = family.source();
    const char* text = source.data();
    const std::size_t length = source.size();
    cl_int err = CL_SUCCESS;
    cl_program raw = clCreateProgramWithSource(context(), 1, &text, &length, &err);
    if (err != CL_SUCCESS || !raw) {
      *failure = "clCreateProgramWithSource failed: " + cl_status_name(err);
      if (raw) clReleaseProgram(raw);
      return nullptr;
    }
    *how = "OpenCL C source with \"" + build_options + "\"";
    return raw;
  }
};

}  // namespace

std::string TierStrategy::build_options(const Family&, const Variant&, const DeviceCaps&) const {
  return "";
}

const TierStrategy& strategy(Tier tier) {
  static const SpirVTier spirv;
  static const PtxTier ptx;
  static const SourceTier source;
  switch (tier) {
    case Tier::SpirV:
      return spirv;
    case Tier::Ptx:
      return ptx;
    case Tier::Source:
      break;
  }
  return source;
}

}  // namespace detail
}  // namespace fatcl
