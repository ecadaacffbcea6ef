// The verbs of the fatcl command. Each verb is one file that adds its CLI11
// subcommand and options and returns what runs it once the command line is
// parsed; main.cpp lists them. The logic lives in fatcl's libraries.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

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
VerbRun add_bench(CLI::App& app);     // bench.cpp
VerbRun add_tune(CLI::App& app);      // tune.cpp
VerbRun add_cache(CLI::App& app);     // cache.cpp

}  // namespace fatcl::tool
