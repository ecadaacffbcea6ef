// The tiers: SPIR-V (clCreateProgramWithIL), PTX (NVIDIA,
// clCreateProgramWithBinary) and OpenCL C source.
#include "tiers.hpp"


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

class SpirVTier final : public TierStrategy {
 public:
  Tier tier() const override { return Tier::SpirV; }
  std::string refusal(const Manifest& manifest, const Variant& v,
                      const DeviceCaps& caps) const override {
    if (manifest.leaves_out("spirv")) {
      return "the SPIR-V was left out of the bundle on purpose (TIERS without spirv)";
    }
    std::string why;
    return caps.accepts_spirv(v.spirv_version, &why) ? "" : why;
  }
  std::string_view input(const Family& family, const Variant& v) const override {
    return family.spirv(v.name);
  }
  std::string built(const Family&, const Variant& v, const std::string&) const override {
    return v.sha256;
  }
  std::string handed(const Family& family, const Variant& v, const DeviceCaps& caps,
                     const std::string&) const override {
    return "SPIR-V " + v.spirv_version + " module (" + std::to_string(family.spirv(v.name).size()) +
           " B) through " + (caps.il_is_core() ? "clCreateProgramWithIL" : "clCreateProgramWithILKHR");
  }
  cl_program create(const cl::Context& context, const cl::Device& device, const DeviceCaps& caps,
                    const Family& family, const Variant& v, const std::string& options,
                    std::string* how, std::string* failure) const override {
    const std::string_view il = family.spirv(v.name);
    const char* call = caps.il_is_core() ? "clCreateProgramWithIL" : "clCreateProgramWithILKHR";
    cl_int err = CL_SUCCESS;
    cl_program raw = nullptr;
    if (caps.il_is_core()) {
      raw = clCreateProgramWithIL(context(), il.data(), il.size(), &err);
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
    }
    if (err != CL_SUCCESS || !raw) {
      *failure = std::string(call) + " failed: " + cl_status_name(err) + " (" +
                 std::to_string(err) + ")";
      if (raw) clReleaseProgram(raw);
      return nullptr;
    }
    *how = handed(family, v, caps, options);
    return raw;
  }
};

class PtxTier final : public TierStrategy {
 public:
  Tier tier() const override { return Tier::Ptx; }
  std::string refusal(const Manifest& manifest, const Variant& v,
                      const DeviceCaps& caps) const override {
    if (manifest.leaves_out("ptx")) {
      return "the PTX was left out of the bundle on purpose (TIERS without ptx)";
    }
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
  std::string handed(const Family& family, const Variant& v, const DeviceCaps&,
                     const std::string&) const override {
    return "PTX " + v.ptx->ptx_version + " for " + v.ptx->target + " (" +
           std::to_string(family.ptx(v.name).size()) + " B) through clCreateProgramWithBinary";
  }
  cl_program create(const cl::Context& context, const cl::Device& device, const DeviceCaps& caps,
                    const Family& family, const Variant& v, const std::string& options,
                    std::string* how, std::string* failure) const override {
    const std::string_view ptx = family.ptx(v.name);
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
    *how = handed(family, v, caps, options);
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
    return family.source_sha256() + " " + build_options;
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
  std::string handed(const Family&, const Variant&, const DeviceCaps&,
                     const std::string& build_options) const override {
    return "OpenCL C source with \"" + build_options + "\"";
  }
  cl_program create(const cl::Context& context, const cl::Device&, const DeviceCaps& caps,
                    const Family& family, const Variant& v, const std::string& build_options,
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
    *how = handed(family, v, caps, build_options);
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
