// libFuzzer: the embedded-family reader (fatcl::Family) on a manifest and
// module bytes it has never seen: the first input byte splits the rest into
// the manifest text and the bytes every listed variant's module points to.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fatcl/error.hpp"
#include "fatcl/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t split = 1 + (size - 1) * data[0] / 255;
  const std::string manifest(reinterpret_cast<const char*>(data + 1), split - 1);
  const std::string bytes(reinterpret_cast<const char*>(data + split), size - split);
  std::vector<std::string> names;
  try {
    for (const fatcl::Variant& v : fatcl::Manifest::parse(manifest).variants)
      names.push_back(v.name);
  } catch (const fatcl::Error&) {
    names.push_back("v");
  }
  std::vector<fatcl::EmbeddedModule> modules;
  for (const std::string& n : names) {
    modules.push_back(
        {n.c_str(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()});
  }
  const fatcl::EmbeddedFamily embedded{manifest.c_str(), manifest.size(),   bytes.c_str(),
                                       bytes.size(),     modules.data(),    modules.size(),
                                       modules.data(),   modules.size() / 2};
  try {
    const fatcl::Family family(embedded);
    for (const fatcl::Variant& v : family.manifest().variants) {
      family.spirv(v.name);
      family.ptx(v.name);
    }
  } catch (const fatcl::Error&) {
  }
  return 0;
}
