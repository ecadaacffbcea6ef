// fatcl bench --startup: the time from a process's first OpenCL call to a
// ready kernel (the automatic choice built and one small product computed
// and checked), per tier, cold (an empty fatcl program cache, the driver's
// own cache off: POCL_KERNEL_CACHE=0, CUDA_CACHE_DISABLE=1) and warm (the
// program cache the cold run filled), each in a fresh process of this
// command, in one run.
#include "startup.hpp"

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "fatcl/cache.hpp"
#include "fatcl/detail/process.hpp"
#include "fatcl/matmul.hpp"

namespace fatcl::tool {
namespace {

namespace fs = std::filesystem;

// Runs this executable with `args`; returns its exit status (-1 when it
// could not start or was killed) and output.
std::pair<int, std::string> run_self(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/proc/self/exe"};
  argv.insert(argv.end(), args.begin(), args.end());
  detail::ProcessResult r = detail::run_process(argv);
  return {r.exit_code, r.output};
}

}  // namespace

int run_startup_child(const std::string& platform, std::size_t device_index,
                      const std::string& tier) {
  const auto start = std::chrono::steady_clock::now();
  const cl::Device device = pick_device(platform, device_index);
  const cl::Context context = context_for(device);
  MatmulOptions o;
  o.tier = parse_tier(tier);
  Matmul matmul(context, device, o);
  // Start-up ends with the first right result: a 64^3 product of small
  // integers, checked exactly.
  const std::size_t n = 64;
  const MatmulProblem p =
      make_matmul_problem(context, n, n, n, MatmulInputs::SmallIntegers, nullptr);
  const cl::CommandQueue queue = queue_for(context, device);
  const CheckedRun r = run_checked(queue, p, [&] {
    matmul.enqueue(queue, p.a, p.b, p.c, n, n, n);
    return std::string();
  });
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const bool cached = matmul.loaded().origin == ProgramOrigin::ProgramCache;
  std::printf("FATCL-STARTUP ms=%.3f tier=%s cached=%d ok=%d variant=%s\n", ms,
              to_string(matmul.loaded().tier), cached ? 1 : 0, r.ok ? 1 : 0,
              matmul.loaded().variant.name.c_str());
  if (!r.ran) std::fprintf(stderr, "fatcl bench --startup: %s\n", r.failure.c_str());
  return r.ok ? 0 : 1;
}

namespace {

// Every tier the device takes for the blocked family's variants.
std::vector<std::string> startup_tiers(const DeviceCaps& caps) {
  std::vector<std::string> tiers;
  const Family& blocked = matmul_family(MatmulKernel::Blocked);
  for (Tier t : all_tiers()) {
    LoadOptions only;
    only.tier = t;
    if (!plan(blocked.manifest(), caps, only).chain.empty()) tiers.push_back(to_string(t));
  }
  return tiers;
}

// The child processes see these (this process has started its drivers):
// the drivers' own caches in folders of this run, off or on.
void drivers_cache_in(const fs::path& dir) {
  setenv("POCL_CACHE_DIR", (dir / "pocl").c_str(), 1);
  setenv("CUDA_CACHE_PATH", (dir / "cuda").c_str(), 1);
  setenv("MESA_SHADER_CACHE_DIR", (dir / "mesa").c_str(), 1);
  unsetenv("FATCL_CACHE");
}
void drivers_cold() {
  setenv("POCL_KERNEL_CACHE", "0", 1);
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
}
void drivers_warm() {
  unsetenv("POCL_KERNEL_CACHE");
  unsetenv("CUDA_CACHE_DISABLE");
  unsetenv("MESA_SHADER_CACHE_DISABLE");
}

nlohmann::json startup_report(const DeviceCaps& caps) {
  return {{"device", caps.summary()},
          {"timing",
           "wall time in a fresh process from its first OpenCL call to a 64x64x64 product "
           "computed and checked"},
          {"phases",
           {{"cold",
             "empty fatcl cache and store (no remembered trial launch); driver caches off "
             "(POCL_KERNEL_CACHE=0, CUDA_CACHE_DISABLE=1, MESA_SHADER_CACHE_DISABLE=true)"},
            {"warm",
             "the fatcl cache and store the cold run filled (programs, trial verdicts); driver "
             "caches still off"},
            {"warm_all", "the fatcl cache and the drivers' own caches, filled by a run before"}}},
          {"tiers", nlohmann::json::array()}};
}

// One fresh process's start, as its FATCL-STARTUP line says, or its failure.
nlohmann::json measure_start(const std::string& platform, std::size_t device_index,
                             const std::string& tier) {
  static const std::regex line(
      "FATCL-STARTUP ms=([0-9.]+) tier=(\\w+) cached=(\\d) ok=(\\d) variant=(\\S+)");
  const auto [status, text] = run_self({"bench", "--startup-child", tier, "--platform", platform,
                                        "--device", std::to_string(device_index)});
  std::smatch m;
  if (status != 0 || !std::regex_search(text, m, line)) {
    return nlohmann::json{{"failure", text.substr(0, 400)}};
  }
  return nlohmann::json{{"ms", std::stod(m[1])},
                        {"tier", m[2].str()},
                        {"from_cache", m[3] == "1"},
                        {"ok", m[4] == "1"},
                        {"variant", m[5].str()}};
}

// A tier's starts: cold, warm (fatcl's cache and store), warm with the
// drivers' caches too, and the ratios.
nlohmann::json tier_starts(const fs::path& dir, const std::string& platform,
                           std::size_t device_index, const std::string& tier) {
  setenv("FATCL_CACHE_DIR", (dir / ("programs-" + tier)).c_str(), 1);
  // A store of this run: trial verdicts a cold start settles, a warm one reads.
  setenv("FATCL_TUNING", (dir / ("store-" + tier + ".json")).c_str(), 1);
  nlohmann::json row = {{"tier", tier}};
  drivers_cold();
  row["cold"] = measure_start(platform, device_index, tier);
  row["warm"] = measure_start(platform, device_index, tier);
  drivers_warm();
  measure_start(platform, device_index, tier);  // fills the drivers' caches
  row["warm_all"] = measure_start(platform, device_index, tier);
  for (const char* phase : {"warm", "warm_all"}) {
    if (row["cold"].contains("ms") && row[phase].contains("ms")) {
      row[std::string("cold_over_") + phase] =
          row["cold"]["ms"].get<double>() / row[phase]["ms"].get<double>();
    }
  }
  return row;
}

void print_startup(const nlohmann::json& report) {
  std::printf("device: %s\n%s\n", report["device"].get<std::string>().c_str(),
              report["timing"].get<std::string>().c_str());
  for (const auto& [phase, meaning] : report["phases"].items()) {
    std::printf("  %-8s %s\n", phase.c_str(), meaning.get<std::string>().c_str());
  }
  for (const auto& row : report["tiers"]) {
    std::printf("  %-6s", row["tier"].get<std::string>().c_str());
    for (const char* phase : {"cold", "warm", "warm_all"}) {
      if (row[phase].contains("ms")) {
        std::printf("  %s %8.1f ms", phase, row[phase]["ms"].get<double>());
      } else {
        std::printf("  %s failed: %s", phase, row[phase]["failure"].get<std::string>().c_str());
      }
    }
    for (const char* ratio : {"cold_over_warm", "cold_over_warm_all"}) {
      if (row.contains(ratio)) std::printf("  %s %.1fx", ratio, row[ratio].get<double>());
    }
    std::printf("\n");
  }
}

}  // namespace

int run_startup(const std::string& platform, std::size_t device_index, bool json) {
  const cl::Device device = pick_device(platform, device_index);
  const DeviceCaps caps = DeviceCaps::query(device);
  char dir_template[] = "/tmp/fatcl-startup-XXXXXX";
  if (!mkdtemp(dir_template))
    throw Error(std::string("cannot create a temporary folder in /tmp: ") + std::strerror(errno));
  const fs::path dir = dir_template;
  drivers_cache_in(dir);
  nlohmann::json report = startup_report(caps);
  for (const std::string& tier : startup_tiers(caps)) {
    report["tiers"].push_back(tier_starts(dir, platform, device_index, tier));
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (json) {
    std::puts(report.dump(2).c_str());
  } else {
    print_startup(report);
  }
  return 0;
}

}  // namespace fatcl::tool
