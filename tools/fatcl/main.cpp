// fatcl: lists OpenCL devices and runs the demo (choose, check, time).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "demo.hpp"
#include "fatcl/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"fatcl: OpenCL kernels shipped precompiled"};
  app.require_subcommand(1);
  app.add_subcommand("devices", "list OpenCL platforms and devices as fatcl sees them");
  fatcl::tool::DemoOptions demo;
  std::size_t size = 0;
  CLI::App* d = app.add_subcommand("demo",
                                   "choose a variant, check it against a CPU reference, "
                                   "time it next to the naive kernel (and CLBlast)");
  CLI::Option* size_option = d->add_option("--size", size, "M = N = K");
  d->add_option("-m", demo.m, "rows of A and C");
  d->add_option("-n", demo.n, "columns of B and C");
  d->add_option("-k", demo.k, "columns of A, rows of B");
  d->add_option("--reps", demo.repetitions, "timed runs (median reported)")
      ->check(CLI::PositiveNumber);
  d->add_option("--platform", demo.platform, "substring of the platform name");
  d->add_option("--device", demo.device, "device index within the platform");
  d->add_option("--variant", demo.variant, "force a variant, e.g. matmul_tiled_TILE16");
  d->add_option("--tier", demo.tier, "force a tier: spirv or source");
  d->add_flag("!--no-clblast", demo.clblast, "do not time CLBlast");
  CLI11_PARSE(app, argc, argv);
  if (*size_option) demo.m = demo.n = demo.k = size;
  try {
    if (app.got_subcommand("devices")) return fatcl::tool::list_devices();
    return fatcl::tool::run_demo(demo);
  } catch (const fatcl::Error& e) {
    std::fprintf(stderr, "fatcl: error: %s\n", e.what());
    return 2;
  }
}
