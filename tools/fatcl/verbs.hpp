// The verbs of the fatcl command. Each verb is one file that adds its CLI11
// subcommand and options and returns what runs it once the command line is
// parsed; main.cpp lists them. The logic lives in fatcl's libraries.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fatcl/loader.hpp"

namespace fatcl {
struct GemmForm;  // fatcl/gemm_bench.hpp
}

namespace fatcl::tool {

// Runs a parsed verb; returns the exit status.
using VerbRun = std::function<int()>;

struct Verb {
  const char* name;
  VerbRun (*add)(CLI::App& app);  // adds the subcommand to the app
};

VerbRun add_devices(CLI::App& app);   // devices.cpp
VerbRun add_demo(CLI::App& app);      // demo.cpp
VerbRun add_validate(CLI::App& app);  // validate.cpp
VerbRun add_inspect(CLI::App& app);   // inspect.cpp
VerbRun add_bench(CLI::App& app);     // bench.cpp
VerbRun add_tune(CLI::App& app);      // tune.cpp
VerbRun add_cache(CLI::App& app);     // cache.cpp
VerbRun add_launch(CLI::App& app);    // launch.cpp

// "1024x1024x512" or "1024,1024,512" -> sizes.
inline std::vector<std::size_t> parse_problem(const std::string& text) {
  std::vector<std::size_t> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = text.find_first_of("x,", at);
    const std::string part = text.substr(at, end == std::string::npos ? end : end - at);
    const std::optional<std::uint64_t> n = parse_whole_number(part, 1, 1ull << 40);
    if (!n) {
      throw Error("--problem \"" + text.substr(0, 60) + "\": \"" + part.substr(0, 20) +
                  "\" is not a size from 1 to 2^40 (sizes look like 1024x1024x512)");
    }
    out.push_back(static_cast<std::size_t>(*n));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

// fatcl validate --oclgrind (launch.cpp): runs `fatcl launch --progress` on
// `paths` under `oclgrind --data-races --uninitialized` and reads back, per
// launch, what the simulator reported. `text` is the report for people.
struct OclgrindCheck {
  bool ok = false;
  std::string text;
  nlohmann::json json;
};
OclgrindCheck check_under_oclgrind(const std::vector<std::filesystem::path>& paths,
                                   const std::string& oclgrind, std::size_t seed);

// The families in bundle folders, manifests, programs and libraries (as
// fatcl inspect finds them), read whole; what could not be read is added
// to `problems`, one line each (inspect.cpp).
std::vector<Family> read_families(const std::vector<std::filesystem::path>& paths,
                                  std::vector<std::string>& problems);

// A whole-number option (a size, an index, a count) from lo to hi. CLI11
// reads "-1" into an unsigned as 2^64-1; this refuses it, and says what it
// wanted for "abc" or "1e3".
inline CLI::Option* add_whole_number(CLI::App* app, const std::string& name, std::size_t& target,
                                     std::size_t lo, std::size_t hi, const std::string& what) {
  auto check = [lo, hi](std::string& text) -> std::string {
    if (parse_whole_number(text, lo, hi)) return "";
    return "\"" + text.substr(0, 40) + "\" is not a whole number from " + std::to_string(lo) +
           " to " + std::to_string(hi);
  };
  return app
      ->add_option_function<std::string>(
          name,
          [&target, lo, hi](const std::string& text) {
            target = static_cast<std::size_t>(*parse_whole_number(text, lo, hi));
          },
          what)
      ->check(CLI::Validator(check, ""))
      ->type_name("UINT");
}

// The GEMM form options that fatcl bench and fatcl tune share: any of them
// given turns the verb to the GEMM entry points (fatcl/gemm.hpp).
struct GemmFormOptions {
  bool gemm = false, trans_a = false, trans_b = false;
  std::string precision = "single", layout = "row", forms;
  std::size_t batch = 1;
  bool asked() const;
  GemmForm form() const;  // the precision, layout, transposes and batch
};
// --gemm (`what` its help), --precision, --forms (`forms` its help),
// --layout, --transA, --transB and --batch. (bench.cpp)
void add_gemm_form_options(CLI::App* cmd, GemmFormOptions* o, const std::string& what,
                           const std::string& forms);

}  // namespace fatcl::tool
