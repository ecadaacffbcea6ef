// libFuzzer: the tuning store's reader (Store::parse, what reads
// tuning.json and the shipped entries): any input gives entries or a
// fatcl::Error; every entry read can be described and matched against.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fatcl/error.hpp"
#include "fatcl/store.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<fatcl::TuningEntry> tuning;
  std::vector<std::pair<fatcl::BuildKey, fatcl::RememberedOutcome>> outcomes;
  try {
    fatcl::Store::parse(text, "fuzz", &tuning, &outcomes);
  } catch (const fatcl::Error&) {
    return 0;
  }
  for (const fatcl::TuningEntry& e : tuning) {
    e.describe();
    e.size_class();
  }
  for (const auto& [key, outcome] : outcomes) key.to_string();
  return 0;
}
