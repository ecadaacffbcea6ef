// Bad input of every kind fatcl takes, each answered with an fatcl::Error (or
// a CLI exit status) whose message names the cause, short enough to read,
// and nothing half done: manifests, embedded families, the modules handed to
// drivers, calls into the API, and command lines. Classes and counts are
// summarised at the end (docs/RELIABILITY.md).
//   FATCL_TEST_PLATFORM   runtime for the API and module cases (e.g. PoCL)
//   FATCL_COMMAND         the fatcl command for the command-line cases
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "fatcl/error.hpp"
#include "fatcl/loader.hpp"
#include "fatcl/matmul.hpp"
#include "fatcl/store.hpp"
#include "test_manifests.hpp"

namespace fatcl {
namespace {

using nlohmann::json;

std::map<std::string, int>& tally() {
  static std::map<std::string, int> t;
  return t;
}

// A message must name its cause and stay short even when the input is huge.
void expect_message(const std::string& cls, const std::string& message, const std::string& cause) {
  ++tally()[cls];
  EXPECT_NE(message.find(cause), std::string::npos) << "expected \"" << cause << "\" in:\n"
                                                    << message.substr(0, 2000);
  EXPECT_LT(message.size(), 4000u) << "a message of " << message.size() << " characters";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("NOT A fatcl::Error: ") + e.what();
  }
  return "(no error)";
}

// ---------------------------------------------------------------- manifests

json base_manifest() { return json::parse(test::tiled_manifest({8, 16}).dump()); }

struct ManifestCase {
  const char* name;
  std::function<std::string()> text;
  const char* cause;
};

std::string with(const std::function<void(json&)>& change) {
  json j = base_manifest();
  change(j);
  return j.dump();
}

json& v0(json& j) { return j["variants"][0]; }

const std::vector<ManifestCase>& manifest_cases() {
  static const std::vector<ManifestCase> cases = {
      {"not_json", [] { return std::string("{\"format\": "); }, "not valid JSON"},
      {"empty", [] { return std::string(); }, "not valid JSON"},
      // Found by fuzz_manifest: nlohmann throws out_of_range, not parse_error.
      {"number_overflow", [] { return std::string("{\"format\": 2e4692}"); }, "number overflow"},
      {"top_level_array", [] { return std::string("[1, 2]"); }, "not a JSON object"},
      {"no_format", [] { return with([](json& j) { j.erase("format"); }); },
       "not a fatcl manifest"},
      {"foreign_format", [] { return with([](json& j) { j["format"] = "clblast-db"; }); },
       "not a fatcl manifest"},
      {"future_format", [] { return with([](json& j) { j["format_version"] = 2; }); },
       "format version 2, newer than"},
      {"float_format_version", [] { return with([](json& j) { j["format_version"] = 1.5; }); },
       "not a whole number"},
      {"float_size", [] { return with([](json& j) { v0(j)["local_mem_bytes"] = 576.5; }); },
       "\"local_mem_bytes\" is 576.5, not a whole number"},
      {"negative_size", [] { return with([](json& j) { v0(j)["local_mem_bytes"] = -1; }); },
       "\"local_mem_bytes\" is negative"},
      {"huge_size",
       [] { return with([](json& j) { v0(j)["local_mem_bytes"] = std::uint64_t(1) << 40; }); },
       "more than the"},
      {"size_as_string", [] { return with([](json& j) { v0(j)["spirv_size"] = "20"; }); },
       "\"spirv_size\" is a string, not a number"},
      {"group_of_four",
       [] { return with([](json& j) {
              v0(j)["reqd_work_group_size"] = {8, 8, 1, 1};
            }); },
       "not an array of 3 sizes (it has 4)"},
      {"group_side_2_32",
       [] {
         return with([](json& j) {
           v0(j)["reqd_work_group_size"] = {std::uint64_t(1) << 32, 1, 1};
         });
       },
       "reqd_work_group_size[0]"},
      {"group_product",
       [] { return with([](json& j) {
              v0(j)["reqd_work_group_size"] = {1024, 1024, 2};
            }); },
       "2097152 work-items per group"},
      {"group_mixed_zero",
       [] { return with([](json& j) {
              v0(j)["reqd_work_group_size"] = {0, 8, 1};
            }); },
       "mixes 0 (none) with sizes"},
      {"duplicate_names",
       [] { return with([](json& j) { j["variants"][1]["name"] = v0(j)["name"]; }); },
       "listed twice"},
      {"duplicate_files",
       [] { return with([](json& j) { j["variants"][1]["spirv_file"] = v0(j)["spirv_file"]; }); },
       "names a module file another variant names too"},
      {"path_in_file",
       [] { return with([](json& j) { v0(j)["spirv_file"] = "../../etc/passwd"; }); },
       "not a file name beside the manifest"},
      {"name_with_space", [] { return with([](json& j) { v0(j)["name"] = "a b"; }); },
       "not a name of letters, digits and _"},
      {"empty_name", [] { return with([](json& j) { v0(j)["name"] = ""; }); },
       "not a name of letters, digits and _"},
      {"ten_mb_name",
       [] { return with([](json& j) { v0(j)["name"] = std::string(10 << 20, 'x'); }); },
       "characters long, more than 200"},
      {"bad_sha", [] { return with([](json& j) { v0(j)["sha256"] = "xyz"; }); }, "not a SHA-256"},
      {"odd_module_size", [] { return with([](json& j) { v0(j)["spirv_size"] = 22; }); },
       "not the size of a SPIR-V module"},
      {"param_not_pair",
       [] { return with([](json& j) { v0(j)["params"] = json::array({json::array({"TILE"})}); }); },
       "not [\"NAME\", integer]"},
      {"param_twice",
       [] {
         return with([](json& j) {
           v0(j)["params"] = json::array({json::array({"TILE", 8}), json::array({"TILE", 8})});
         });
       },
       "parameter TILE twice"},
      {"param_float",
       [] {
         return with([](json& j) { v0(j)["params"] = json::array({json::array({"TILE", 8.5})}); });
       },
       "not [\"NAME\", integer]"},
      {"spirv_version_2", [] { return with([](json& j) { v0(j)["spirv_version"] = "2.0"; }); },
       "not a SPIR-V version"},
      {"no_variants", [] { return with([](json& j) { j["variants"] = json::array(); }); },
       "lists no variants"},
      {"variants_object", [] { return with([](json& j) { j["variants"] = json::object(); }); },
       "field \"variants\" is object, not an array of variants"},
      {"variant_not_object", [] { return with([](json& j) { j["variants"][0] = 7; }); },
       "variants[0]: is not a JSON object"},
      {"ptx_negative_size",
       [] {
         return with([](json& j) {
           v0(j)["ptx"] = {{"file", "a.ptx"},
                           {"target", "sm_60"},
                           {"ptx_version", "5.0"},
                           {"size", -1},
                           {"sha256", std::string(64, '0')},
                           {"ptxas", json::object()}};
         });
       },
       "\"size\" is negative"},
      {"ptxas_not_object",
       [] {
         return with([](json& j) {
           v0(j)["ptx"] = {{"file", "a.ptx"},
                           {"target", "sm_60"},
                           {"ptx_version", "5.0"},
                           {"size", 5},
                           {"sha256", std::string(64, '0')},
                           {"ptxas", 3}};
         });
       },
       "\"ptxas\" is not an object"},
      {"flag_not_string", [] { return with([](json& j) {
                                 j["compile_flags"] = {"-O0", 3};
                               }); },
       "\"compile_flags\" holds a non-string"},
      {"toolchain_number", [] { return with([](json& j) { j["toolchain"]["clang"] = 15; }); },
       "toolchain entry \"clang\" is not a string"},
      {"kernel_punctuation", [] { return with([](json& j) { j["kernel"] = "k();"; }); },
       "\"kernel\" is \"k();\""},
      {"embedded_flag_string", [] { return with([](json& j) { j["source_embedded"] = "no"; }); },
       "not true/false"},
  };
  return cases;
}

class BadManifest : public testing::TestWithParam<ManifestCase> {};

TEST_P(BadManifest, NamesTheCause) {
  const std::string message = error_of([] { Manifest::parse(GetParam().text()); });
  expect_message("manifest", message, GetParam().cause);
  EXPECT_EQ(message.rfind("manifest: ", 0), 0u) << message.substr(0, 300);
}

INSTANTIATE_TEST_SUITE_P(Cases, BadManifest, testing::ValuesIn(manifest_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------- embedded families

struct Embedded {
  std::string json = test::tiled_manifest({8}).dump();
  std::string bytes = std::string(20, '\0');
  EmbeddedModule module{"matmul_tiled_TILE8", reinterpret_cast<const unsigned char*>(bytes.data()),
                        20};
  EmbeddedFamily family() const { return {json.c_str(), json.size(), "", 0, &module, 1}; }
};

TEST(BadFamily, NullVariantName) {
  Embedded e;
  e.module.variant = nullptr;
  expect_message("family", error_of([&] { Family f(e.family()); }), "has a null variant name");
}

TEST(BadFamily, NullModuleData) {
  Embedded e;
  e.module.data = nullptr;
  expect_message("family", error_of([&] { Family f(e.family()); }), "has a null data pointer");
}

TEST(BadFamily, NullManifest) {
  Embedded e;
  EmbeddedFamily f = e.family();
  f.manifest_json = nullptr;
  expect_message("family", error_of([&] { Family g(f); }), "the manifest is null");
}

TEST(BadFamily, NullModuleTable) {
  Embedded e;
  EmbeddedFamily f = e.family();
  f.modules = nullptr;
  expect_message("family", error_of([&] { Family g(f); }), "their table is null");
}

TEST(BadFamily, NullSourceWithASize) {
  Embedded e;
  EmbeddedFamily f = e.family();
  f.source = nullptr;
  f.source_size = 10;
  expect_message("family", error_of([&] { Family g(f); }), "the source is null");
}

TEST(BadFamily, TwoModulesForOneVariant) {
  Embedded e;
  EmbeddedModule two[2] = {e.module, e.module};
  EmbeddedFamily f = e.family();
  f.modules = two;
  f.module_count = 2;
  expect_message("family", error_of([&] { Family g(f); }), "two embedded modules for");
}

TEST(BadFamily, ModuleOfAnotherSize) {
  Embedded e;
  e.module.size = 16;
  expect_message("family", error_of([&] { Family f(e.family()); }),
                 "has 16 B, the manifest says 20");
}

TEST(BadFamily, ModuleMissing) {
  Embedded e;
  e.module.variant = "matmul_tiled_TILE9";
  expect_message("family", error_of([&] { Family f(e.family()); }),
                 "no embedded module for matmul_tiled_TILE8");
}

TEST(BadFamily, PtxWithoutRecord) {
  Embedded e;
  EmbeddedFamily f = e.family();
  static const char text[] = "ptx";
  EmbeddedModule ptx{"matmul_tiled_TILE8", reinterpret_cast<const unsigned char*>(text), 3};
  f.ptx_modules = &ptx;
  f.ptx_module_count = 1;
  expect_message("family", error_of([&] { Family g(f); }), "lists without PTX");
}

TEST(BadFamily, ManifestErrorSaysItIsTheEmbeddedOne) {
  Embedded e;
  e.json = "{}";
  expect_message("family", error_of([&] { Family f(e.family()); }),
                 "embedded family: manifest: not a fatcl manifest");
}

// ------------------------------------------- modules handed to a driver, calls

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct Device {
  std::string missing;
  cl::Device device;
  cl::Context context;
  cl::CommandQueue queue;
};

Device& device() {
  static Device d = [] {
    Device out;
    const std::string platform = env("FATCL_TEST_PLATFORM");
    if (platform.empty()) {
      out.missing = "FATCL_TEST_PLATFORM is not set (run through ctest)";
      return out;
    }
    try {
      out.device = pick_device(platform);
      out.context = cl::Context(out.device);
      out.queue = cl::CommandQueue(out.context, out.device);
    } catch (const Error& e) {
      out.missing = std::string("runtime not available: ") + e.what();
    }
    return out;
  }();
  return d;
}

#define REQUIRE_DEVICE()                                                    \
  if (!device().missing.empty()) {                                          \
    if (!env("FATCL_REQUIRE_RUNTIMES").empty()) FAIL() << device().missing; \
    GTEST_SKIP() << device().missing;                                       \
  }

// The bundled tiled family with one variant's module replaced by `bytes`
// and recorded as `recorded_sha` (the bytes' own hash: only the driver or
// the header check can object), without its source.
struct Tampered {
  Manifest m;
  std::string json;
  std::string bytes;
  std::vector<EmbeddedModule> modules;
  Tampered(std::string replacement, bool record_true_hash) : bytes(std::move(replacement)) {
    const Family& tiled = matmul_family(MatmulKernel::Tiled);
    m = tiled.manifest();
    m.source_embedded = false;
    for (Variant& v : m.variants) {
      v.ptx.reset();
      v.spirv_size = bytes.size();
      if (record_true_hash) v.sha256 = sha256_hex(bytes.data(), bytes.size());
      modules.push_back(
          {v.name.c_str(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
    }
    json = m.dump();
  }
  EmbeddedFamily family() const {
    return {json.c_str(), json.size(), "", 0, modules.data(), modules.size()};
  }
};

std::string load_error(const EmbeddedFamily& embedded) {
  return error_of([&] {
    const Family f(embedded);
    LoadOptions o;
    o.variant = "matmul_tiled_TILE8";
    o.use_tuning = false;
    load(device().context, device().device, f, o);
  });
}

bool takes_spirv() { return DeviceCaps::query(device().device).accepts_spirv("1.0"); }

TEST(BadModule, BytesThatDoNotMatchTheirHashAreNotHandedToTheDriver) {
  REQUIRE_DEVICE();
  const std::string_view good = matmul_family(MatmulKernel::Tiled).spirv("matmul_tiled_TILE8");
  std::string changed(good);
  changed[changed.size() - 8] ^= 1;
  const std::string message = load_error(Tampered(changed, false).family());
  expect_message("module", message,
                 "does not match the SHA-256 its manifest records");
}

TEST(BadModule, BadMagicNumberIsCaughtBeforeTheDriver) {
  REQUIRE_DEVICE();
  std::string bytes(matmul_family(MatmulKernel::Tiled).spirv("matmul_tiled_TILE8"));
  bytes[0] = 0x42;
  const std::string message = load_error(Tampered(bytes, true).family());
  expect_message("module", message,
                 "does not start with SPIR-V's magic number");
}

TEST(BadModule, VersionWordAgainstTheManifest) {
  REQUIRE_DEVICE();
  std::string bytes(matmul_family(MatmulKernel::Tiled).spirv("matmul_tiled_TILE8"));
  bytes[5] = 4;  // version word 0x00010400: SPIR-V 1.4; the manifest says 1.0
  const std::string message = load_error(Tampered(bytes, true).family());
  expect_message("module", message, "declares SPIR-V 1.4, its manifest 1.0");
}

TEST(BadModule, AModuleOfAnotherKernelIsRefusedByTheDriverWithItsStatus) {
  REQUIRE_DEVICE();
  const std::string bytes(matmul_family(MatmulKernel::Naive).spirv("matmul_naive"));
  const std::string message = load_error(Tampered(bytes, true).family());
  expect_message("module", message, takes_spirv() ? "CL_" : "left out on purpose (NO_SOURCE)");
}

// The bundled tiled family's manifest and modules (no PTX), copied to be
// damaged, embedded with a source of the caller's.
struct TiledCopy {
  const Family& tiled = matmul_family(MatmulKernel::Tiled);
  Manifest m = tiled.manifest();
  std::vector<EmbeddedModule> modules;
  std::string json;
  TiledCopy() {
    for (Variant& v : m.variants) {
      v.ptx.reset();
      const std::string_view bytes = tiled.spirv(v.name);
      modules.push_back({v.name.c_str(), reinterpret_cast<const unsigned char*>(bytes.data()),
                         bytes.size()});
    }
  }
  EmbeddedFamily embedded(std::string_view source) {
    json = m.dump();
    return {json.c_str(), json.size(), source.data(), source.size(), modules.data(),
            modules.size()};
  }
};

// Every embedded module is checked at the family's first use, whatever tier
// the device takes: a truncated module is named where the source is built.
TEST(BadModule, ADamagedModuleIsNamedWhereTheSourceIsBuilt) {
  REQUIRE_DEVICE();
  TiledCopy copy;
  Manifest& m = copy.m;
  m.variants[1].spirv_size -= 8;  // truncated by two words
  copy.modules[1].size -= 8;
  const Family f(copy.embedded(copy.tiled.source()));
  LoadOptions o;
  o.tier = Tier::Source;
  o.variant = m.variants[1].name;
  o.use_tuning = false;
  o.store = std::make_shared<Store>();
  const LoadedKernel k = load(device().context, device().device, f, o);
  const std::string said = k.explanation.to_string();
  expect_message("module", said,
                 "the bundle of matmul_tiled is damaged: 1 embedded module(s) do not match their "
                 "manifest records; " +
                     m.variants[1].name + " [spirv]: the embedded module does not match");
}

// A damaged source is refused before the driver, and its failure is not
// remembered against the genuine source: a build verdict is keyed by the
// bytes built.
TEST(BadModule, ADamagedSourceIsRefusedAndTheGenuineOneStillLoads) {
  REQUIRE_DEVICE();
  TiledCopy copy;
  Manifest& m = copy.m;
  std::string source(copy.tiled.source());
  source.replace(source.find("__kernel"), 8, "__kernol");  // would not compile
  const Family damaged(copy.embedded(source));
  const Family genuine(copy.embedded(copy.tiled.source()));
  LoadOptions o;
  o.tier = Tier::Source;
  o.variant = "matmul_tiled_TILE8";
  o.use_tuning = false;
  o.store = std::make_shared<Store>();
  expect_message("module",
                 error_of([&] { load(device().context, device().device, damaged, o); }),
                 "the embedded OpenCL C source does not match the SHA-256 its manifest records");
  EXPECT_NE(damaged.source_sha256(), m.source_sha256);
  EXPECT_EQ(genuine.source_sha256(), m.source_sha256);
  const LoadedKernel k = load(device().context, device().device, genuine, o);
  EXPECT_EQ(k.tier, Tier::Source);
}

// Calls into the API with what cannot work.
struct Call {
  cl::Buffer a, b, c;
  Matmul matmul{device().context, device().device};
  Call() {
    a = cl::Buffer(device().context, CL_MEM_READ_WRITE, 64 * 4);
    b = cl::Buffer(device().context, CL_MEM_READ_WRITE, 64 * 4);
    c = cl::Buffer(device().context, CL_MEM_READ_WRITE, 64 * 4);
  }
  std::string enqueue(const cl::Buffer& a_, const cl::Buffer& b_, const cl::Buffer& c_,
                      std::size_t m = 8, std::size_t n = 8, std::size_t k = 8) {
    return error_of([&] { matmul.enqueue(device().queue, a_, b_, c_, m, n, k); });
  }
};

TEST(BadCall, BufferOfAnotherContext) {
  REQUIRE_DEVICE();
  Call call;
  const cl::Context other(device().device);
  const cl::Buffer foreign(other, CL_MEM_READ_WRITE, 64 * 4);
  expect_message("call", call.enqueue(foreign, call.b, call.c),
                 "buffer A belongs to another context");
}

TEST(BadCall, ReadOnlyResult) {
  REQUIRE_DEVICE();
  Call call;
  const cl::Buffer read_only(device().context, CL_MEM_READ_ONLY, 64 * 4);
  expect_message("call", call.enqueue(call.a, call.b, read_only), "buffer C is CL_MEM_READ_ONLY");
}

TEST(BadCall, WriteOnlyInput) {
  REQUIRE_DEVICE();
  Call call;
  const cl::Buffer write_only(device().context, CL_MEM_WRITE_ONLY, 64 * 4);
  expect_message("call", call.enqueue(call.a, write_only, call.c), "buffer B is CL_MEM_WRITE_ONLY");
}

TEST(BadCall, BufferTooSmall) {
  REQUIRE_DEVICE();
  Call call;
  expect_message("call", call.enqueue(call.a, call.b, call.c, 9, 8, 8), "buffer A has 256 B");
}

TEST(BadCall, ZeroSize) {
  REQUIRE_DEVICE();
  Call call;
  expect_message("call", call.enqueue(call.a, call.b, call.c, 8, 0, 8), "N = 0 is outside");
}

TEST(BadCall, SizeBeyondInt) {
  REQUIRE_DEVICE();
  Call call;
  expect_message("call", call.enqueue(call.a, call.b, call.c, 8, 8, std::size_t(1) << 40),
                 "K = 1099511627776 is outside");
}

TEST(BadCall, QueueOfAnotherContext) {
  REQUIRE_DEVICE();
  Call call;
  const cl::Context other(device().device);
  const cl::CommandQueue queue(other, device().device);
  expect_message("call",
                 error_of([&] { call.matmul.enqueue(queue, call.a, call.b, call.c, 8, 8, 8); }),
                 "the queue belongs to another context");
}

TEST(BadCall, NullBuffer) {
  REQUIRE_DEVICE();
  Call call;
  expect_message("call", call.enqueue(call.a, cl::Buffer(), call.c), "buffer B is null");
}

TEST(BadCall, NullQueue) {
  REQUIRE_DEVICE();
  Call call;
  expect_message("call", error_of([&] {
                   call.matmul.enqueue(cl::CommandQueue(), call.a, call.b, call.c, 8, 8, 8);
                 }),
                 "the queue is null");
}

TEST(BadCall, NullContextOrDevice) {
  REQUIRE_DEVICE();
  expect_message("call", error_of([] { Matmul m(cl::Context(), device().device); }),
                 "the context is null");
  expect_message("call", error_of([] { Matmul m(device().context, cl::Device()); }),
                 "the device is null");
  const Family& tiled = matmul_family(MatmulKernel::Tiled);
  expect_message("call", error_of([&] { load(cl::Context(), device().device, tiled); }),
                 "the context is null");
}

TEST(BadCall, DeviceOutsideTheContext) {
  REQUIRE_DEVICE();
  // Another device's id: a sub-device of this one (CPU runtimes partition),
  // else a device of another platform.
  std::vector<cl::Device> others;
  std::vector<cl_device_partition_property> kinds;
  device().device.getInfo(CL_DEVICE_PARTITION_PROPERTIES, &kinds);
  // (Only where the device lists the partition: rusticl's ICD entry for
  // clCreateSubDevices is a null pointer.)
  if (std::find(kinds.begin(), kinds.end(), CL_DEVICE_PARTITION_EQUALLY) != kinds.end()) {
    const cl_device_partition_property halves[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    device().device.createSubDevices(halves, &others);
  }
  if (others.empty()) {
    std::vector<cl::Platform> platforms;
    cl::Platform::get(&platforms);
    for (const cl::Platform& p : platforms) {
      std::vector<cl::Device> devices;
      if (p.getDevices(CL_DEVICE_TYPE_ALL, &devices) != CL_SUCCESS) continue;
      for (const cl::Device& d : devices) {
        if (d() != device().device()) others.push_back(d);
      }
    }
  }
  if (others.empty()) GTEST_SKIP() << "no sub-device and no other device to try";
  expect_message("call", error_of([&] { Matmul m(device().context, others.front()); }),
                 "Matmul: the device is not one of the context's devices");
}

TEST(BadCall, UnknownVariant) {
  REQUIRE_DEVICE();
  MatmulOptions o;
  o.variant = "matmul_tiled_TILE7";
  expect_message("call", error_of([&] { Matmul m(device().context, device().device, o); }),
                 "has a variant \"matmul_tiled_TILE7\"");
}

TEST(BadCall, VariantOfAnotherFamily) {
  REQUIRE_DEVICE();
  MatmulOptions o;
  o.kernel = MatmulKernel::Naive;
  o.variant = "matmul_tiled_TILE8";
  expect_message(
      "call", error_of([&] { Matmul m(device().context, device().device, o); }),
      "variant matmul_tiled_TILE8 is of the tiled family, the options ask for the naive one");
}

TEST(BadCall, TooManyKSplits) {
  REQUIRE_DEVICE();
  MatmulOptions o;
  o.k_splits = kMatmulMaxKSplits + 1;
  expect_message("call", error_of([&] { Matmul m(device().context, device().device, o); }),
                 "MatmulOptions: k_splits = 65 is above kMatmulMaxKSplits (64)");
}

TEST(BadCall, UnknownTier) {
  expect_message("call", error_of([] { parse_tier("cubin"); }),
                 "unknown tier \"cubin\" (expected spirv, ptx or source)");
}

// -------------------------------------------------------------- environment

// Variables a product's user sets without code changes: a value fatcl does
// not understand is ignored (never fatal to the product), and the
// explanation's notes say which, what was expected and what happens instead.
struct EnvironmentCase {
  const char* name;
  const char* variable;
  const char* value;
  const char* cause;
};

class BadEnvironment : public testing::TestWithParam<EnvironmentCase> {};

TEST_P(BadEnvironment, IsIgnoredWithANote) {
  REQUIRE_DEVICE();
  const EnvironmentCase& c = GetParam();
  const char* before = std::getenv(c.variable);
  const std::string saved = before ? before : "";
  setenv(c.variable, c.value, 1);
  std::string note = "(no note about " + std::string(c.variable) + ")";
  const std::string error = error_of([&] {
    MatmulOptions o;
    o.store = std::make_shared<Store>();
    Matmul m(device().context, device().device, o);
    for (const std::string& n : m.loaded().explanation.notes) {
      if (n.find(c.variable) != std::string::npos) note = n;
    }
  });
  if (before) {
    setenv(c.variable, saved.c_str(), 1);
  } else {
    unsetenv(c.variable);
  }
  EXPECT_EQ(error, "(no error)");
  expect_message("environment", note, c.cause);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadEnvironment,
    testing::Values(EnvironmentCase{"self_check_word", "FATCL_SELF_CHECK", "banana",
                                    "FATCL_SELF_CHECK=\"banana\" ignored: expected 1"},
                    EnvironmentCase{"cache_switch_word", "FATCL_CACHE", "maybe",
                                    "FATCL_CACHE=\"maybe\" ignored: expected 0"},
                    EnvironmentCase{"cache_size_negative", "FATCL_CACHE_MAX_MB", "-3",
                                    "FATCL_CACHE_MAX_MB=\"-3\" ignored: expected a whole number"},
                    EnvironmentCase{"cache_size_huge", "FATCL_CACHE_MAX_MB", "99999999999",
                                    "the cache keeps at most 512 MiB"},
                    EnvironmentCase{"self_check_unprintable", "FATCL_SELF_CHECK", "\x01\x7f",
                                    "FATCL_SELF_CHECK=\"??\" ignored"}),
    [](const testing::TestParamInfo<EnvironmentCase>& info) { return info.param.name; });

TEST(BadEnvironment, TuningDatabaseThatIsAFolder) {
  const std::string dir = testing::TempDir() + "fatcl-tuning-folder";
  std::filesystem::create_directories(dir);
  const Store store(dir);
  expect_message("environment", store.why_not_used(), "it is a folder, not a store file");
}

// ------------------------------------------------------------- command lines

struct CommandLineCase {
  const char* name;
  std::string args;
  const char* cause;
};

const std::vector<CommandLineCase>& command_line_cases() {
  static const std::vector<CommandLineCase> cases = {
      {"demo_negative_size", "demo --size -5", "--size"},
      {"demo_huge_size", "demo --size 999999999", "--size"},
      {"demo_size_word", "demo --size big", "--size: \"big\" is not a whole number"},
      {"demo_too_big_for_any_device", "demo -m 1048576 -n 1048576 -k 1048576 --no-clblast",
       "1048576x1048576x1048576: A needs 4096.0 GiB, more than"},
      {"demo_negative_device", "demo --device -1 --size 8", "--device: \"-1\" is not a whole"},
      {"bench_negative_top", "bench --top -1 --sizes 8", "--top: \"-1\" is not a whole number"},
      {"tune_negative_device", "tune --device -2", "--device: \"-2\" is not a whole number"},
      {"demo_reps_zero", "demo --reps 0", "--reps"},
      {"bench_reps_zero", "bench --reps 0", "--reps"},
      {"bench_zero_size", "bench --sizes 0 --no-clblast", "0"},
      {"bench_half_shape", "bench --sizes 4x --no-clblast", "4x"},
      {"bench_bad_tier", "bench --sizes 8 --tier cubin --no-clblast", "cubin"},
      {"tune_bad_budget", "tune --budget soon", "budget \"soon\""},
      {"tune_reps_low", "tune --reps 2", "--reps"},
      {"tune_unknown_family", "tune --families fastest --no-save",
       "no bundled matmul family is called \"fastest\""},
      {"tune_merge_missing_file",
       "tune --database /tmp/fatcl-bad-input-store.json --merge "
       "/no/such/export.json",
       "--merge: cannot read /no/such/export.json"},
      {"tune_merge_not_a_store",
       "tune --database /tmp/fatcl-bad-input-store.json --merge "
       "/etc/hostname",
       "store /etc/hostname is not JSON"},
      {"tune_export_into_a_folder", "tune --database /tmp/fatcl-bad-input-store.json --export /tmp",
       "the export file /tmp is left as found: it is a folder"},
      {"demo_bad_tier", "demo --tier cubin --size 8", "unknown tier \"cubin\""},
      {"demo_unknown_variant", "demo --variant matmul_tiled_TILE7 --size 8", "matmul_tiled_TILE7"},
      {"demo_no_platform", "demo --platform no-such-platform --size 8", "no-such-platform"},
      {"demo_device_index", "demo --device 99 --size 8", "99"},
      {"validate_missing", "validate /no/such/bundle", "no such file or folder"},
      {"cache_unknown_action", "cache frobnicate", "frobnicate"},
      {"unknown_verb", "frobnicate", "unknown verb \"frobnicate\""},
      {"long_verb", std::string(100000, 'v'), "unknown verb"},
  };
  return cases;
}

class BadCommandLine : public testing::TestWithParam<CommandLineCase> {};

TEST_P(BadCommandLine, ExitsWithTheCause) {
  const std::string command = env("FATCL_COMMAND");
  if (command.empty()) GTEST_SKIP() << "FATCL_COMMAND is not set (run through ctest)";
  FILE* p = popen((command + " " + GetParam().args + " 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by a signal: " << out.substr(0, 2000);
  EXPECT_NE(WEXITSTATUS(status), 0) << out.substr(0, 2000);
  EXPECT_LT(WEXITSTATUS(status), 126) << "not a crash (134 abort, 139 segfault): " << out;
  expect_message("command line", out, GetParam().cause);
}

INSTANTIATE_TEST_SUITE_P(Cases, BadCommandLine, testing::ValuesIn(command_line_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The classes and how many cases each ran (docs/RELIABILITY.md).
class Tally : public testing::Environment {
 public:
  void TearDown() override {
    int total = 0;
    for (const auto& [cls, n] : tally()) {
      std::printf("bad input: %-13s %d cases\n", cls.c_str(), n);
      total += n;
    }
    std::printf("bad input: %-13s %d cases\n", "all", total);
  }
};
const auto* const kTally = testing::AddGlobalTestEnvironment(new Tally);

}  // namespace
}  // namespace fatcl
