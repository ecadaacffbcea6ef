// A writer to be killed (tests/faults/kill_writers.sh): writes program
// cache entries of 1 KiB to 1 MiB and saves the store, over and over, with
// fatcl's own writers, until a signal ends it. Each entry's bytes follow
// from its key and round, so a reader can tell a whole entry from a torn
// one by the cache's own check (ProgramCache::verify).
//
// Usage: fatcl_fault_writer CACHE_DIR STORE_FILE
#include <cstdio>
#include <random>
#include <string>

#include "fatcl/cache.hpp"
#include "fatcl/store.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CACHE_DIR STORE_FILE\n", argv[0]);
    return 2;
  }
  const fatcl::ProgramCache cache(argv[1], std::uint64_t(64) << 20);
  fatcl::Store store(argv[2]);
  if (!store.why_not_used().empty()) {
    std::fprintf(stderr, "store not usable at the start: %s\n", store.why_not_used().c_str());
    return 1;
  }
  std::mt19937 rng(std::random_device{}());
  for (unsigned round = 0;; ++round) {
    const std::string key = "fault-writer key " + std::to_string(rng() % 16);
    std::string binary(1024 + rng() % (1 << 20), '\0');
    for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = char((i * 131 + round) & 0xff);
    if (std::string why = cache.put(key, binary); !why.empty()) {
      std::fprintf(stderr, "%s\n", why.c_str());
      return 1;
    }
    store.remember({"fault-writer device", "build " + std::to_string(round % 64),
                    fatcl::Tier::Source},
                   {fatcl::RememberedOutcome::Kind::Build, std::string(500, 'v'), "today"});
    store.save();
  }
}
