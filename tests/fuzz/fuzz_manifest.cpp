// libFuzzer: manifest parsing. Any input either parses or throws
// fatcl::Error; what parses dumps and parses back to the same manifest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fatcl/error.hpp"
#include "fatcl/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fatcl::Manifest m;
  try {
    m = fatcl::Manifest::parse(text);
  } catch (const fatcl::Error&) {
    return 0;
  }
  const std::string once = m.dump();
  if (fatcl::Manifest::parse(once).dump() != once) std::abort();  // the round trip must hold
  return 0;
}
