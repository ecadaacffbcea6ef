// fatcl: the command line. `fatcl VERB [options]`; `fatcl --help` lists the
// verbs, `fatcl VERB --help` their options.
#include <cstdio>
#include <exception>
#include <string>

#include "fatcl/error.hpp"
#include "verbs.hpp"

namespace {

const fatcl::tool::Verb kVerbs[] = {
    {"devices", fatcl::tool::add_devices},
    {"demo", fatcl::tool::add_demo},
    {"validate", fatcl::tool::add_validate},
    {"inspect", fatcl::tool::add_inspect},
    {"bench", fatcl::tool::add_bench},
    {"tune", fatcl::tool::add_tune},
    {"cache", fatcl::tool::add_cache},
    {"launch", fatcl::tool::add_launch},
};

std::string verb_list() {
  std::string out;
  for (const auto& v : kVerbs) out += (out.empty() ? "" : ", ") + std::string(v.name);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // A mistyped verb is an error that lists the verbs (CLI11 alone would only
  // say that a subcommand is required).
  if (argc < 2) {
    std::fprintf(stderr, "fatcl: a verb is required; the verbs are: %s (fatcl --help)\n",
                 verb_list().c_str());
    return 2;
  }
  if (argv[1][0] != '-') {
    bool known = false;
    for (const auto& v : kVerbs) known = known || std::string(argv[1]) == v.name;
    if (!known) {
      std::string verb = argv[1];
      if (verb.size() > 40) verb = verb.substr(0, 40) + "...";
      std::fprintf(stderr, "fatcl: unknown verb \"%s\"; the verbs are: %s (fatcl --help)\n",
                   verb.c_str(), verb_list().c_str());
      return 2;
    }
  }
  CLI::App app{"fatcl: OpenCL kernels shipped precompiled"};
  app.require_subcommand(1);
  app.footer("Verbs: " + verb_list() + ". `fatcl VERB --help` lists a verb's options.");
  std::vector<fatcl::tool::VerbRun> runs;
  for (const auto& v : kVerbs) runs.push_back(v.add(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (app.got_subcommand(kVerbs[i].name)) return runs[i]();
    }
  } catch (const fatcl::Error& e) {
    std::fprintf(stderr, "fatcl: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fatcl: error: %s\n", e.what());
    return 2;
  }
  return 2;
}
