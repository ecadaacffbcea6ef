// libFuzzer: the program cache's entry reader. Whatever the bytes, decode
// returns a binary only for an entry of its key, with its length and
// checksum, and otherwise says why not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fatcl/cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view entry(reinterpret_cast<const char*>(data), size);
  std::string why;
  const std::optional<std::string> binary = fatcl::ProgramCache::decode(entry, "key", &why);
  if (!binary && why.empty()) std::abort();  // a refusal always has its reason
  if (binary && binary->size() > size) std::abort();
  return 0;
}
