// libFuzzer: SPIR-V module inspection and validation (fatcl-compile
// validate's path): the header check, SPIRV-Tools' validator, and
// inspect_module, which may only throw fatcl::Error.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint32_t> words(size / 4);
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * 4);
  fatcl::module_header_problem(words);
  try {
    fatcl::validate_module(words, "opencl1.2");
  } catch (const fatcl::Error&) {
  }
  try {
    fatcl::inspect_module(words, "k");
  } catch (const fatcl::Error&) {
  }
  return 0;
}
