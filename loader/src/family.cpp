// A kernel family as embedded: the manifest paired with its modules, and
// the check of every embedded module against its manifest record.
#include <array>
#include <cstdint>
#include <mutex>

#include "fatcl/error.hpp"
#include "fatcl/loader.hpp"

namespace fatcl {

namespace {

Manifest embedded_manifest(const EmbeddedFamily& embedded) {
  if (!embedded.manifest_json) throw Error("embedded family: the manifest is null");
  if (!embedded.source && embedded.source_size > 0) {
    throw Error("embedded family: the source is null but has " +
                std::to_string(embedded.source_size) + " bytes");
  }
  try {
    return Manifest::parse(std::string_view(embedded.manifest_json, embedded.manifest_size));
  } catch (const Error& e) {
    throw Error(std::string("embedded family: ") + e.what());
  }
}

// An EmbeddedFamily's tables over owned bytes, alive while a Family reads them.
struct BytesTables {
  explicit BytesTables(const FamilyBytes& bytes) : bytes(bytes) {
    for (const auto& [variant, code] : bytes.spirv) spirv.push_back(module(variant, code));
    for (const auto& [variant, code] : bytes.ptx) ptx.push_back(module(variant, code));
  }
  static EmbeddedModule module(const std::string& variant, const std::string& code) {
    return {variant.c_str(), reinterpret_cast<const unsigned char*>(code.data()), code.size()};
  }
  EmbeddedFamily embedded() const {
    return {bytes.manifest_json.c_str(), bytes.manifest_json.size(), bytes.source.c_str(),
            bytes.source.size(),         spirv.data(),               spirv.size(),
            ptx.data(),                  ptx.size()};
  }
  const FamilyBytes& bytes;
  std::vector<EmbeddedModule> spirv, ptx;
};

const FamilyBytes& checked_bytes(const std::shared_ptr<const FamilyBytes>& bytes) {
  if (!bytes) throw Error("family: the bytes are null");
  return *bytes;
}

}  // namespace

Family::Family(std::shared_ptr<const FamilyBytes> bytes, FamilyDescription description)
    : Family(BytesTables(checked_bytes(bytes)).embedded(), std::move(description)) {
  owned_ = std::move(bytes);
}

Family::Family(const EmbeddedFamily& embedded, FamilyDescription description)
    : manifest_(embedded_manifest(embedded)),
      description_(std::move(description)),
      source_(embedded.source, embedded.source_size),
      integrity_(std::make_shared<Integrity>()) {
  if (embedded.module_count > 0 && !embedded.modules) {
    throw Error("family " + manifest_.family + ": " + std::to_string(embedded.module_count) +
                " embedded modules are announced, but their table is null");
  }
  for (std::size_t i = 0; i < embedded.module_count; ++i) {
    const EmbeddedModule& m = embedded.modules[i];
    if (!m.variant || (!m.data && m.size > 0)) {
      throw Error("family " + manifest_.family + ": embedded module " + std::to_string(i) +
                  (m.variant ? " (" + std::string(m.variant).substr(0, 100) + ")" : "") +
                  " has a null " + (m.variant ? "data pointer" : "variant name"));
    }
  }
  if (manifest_.leaves_out("spirv") && embedded.module_count > 0) {
    throw Error("family " + manifest_.family + ": " + std::to_string(embedded.module_count) +
                " SPIR-V modules are embedded, but the manifest leaves the tier out");
  }
  for (const Variant& v : manifest_.variants) {
    if (manifest_.leaves_out("spirv")) {
      modules_.emplace_back();  // left out on purpose (TIERS): plan() never offers it
      continue;
    }
    const EmbeddedModule* found = nullptr;
    for (std::size_t i = 0; i < embedded.module_count; ++i) {
      if (v.name != embedded.modules[i].variant) continue;
      if (found) {
        throw Error("family " + manifest_.family + ": two embedded modules for " + v.name);
      }
      found = &embedded.modules[i];
    }
    if (!found) throw Error("family " + manifest_.family + ": no embedded module for " + v.name);
    if (found->size != v.spirv_size) {
      throw Error("family " + manifest_.family + ": the embedded module of " + v.name + " has " +
                  std::to_string(found->size) + " B, the manifest says " +
                  std::to_string(v.spirv_size));
    }
    modules_.emplace_back(reinterpret_cast<const char*>(found->data), found->size);
  }
  // PTX: one per variant whose manifest entry records it, of that size.
  ptx_.resize(manifest_.variants.size());
  if (embedded.ptx_module_count > 0 && !embedded.ptx_modules) {
    throw Error("family " + manifest_.family +
                ": embedded PTX is announced, but its table is null");
  }
  for (std::size_t i = 0; i < embedded.ptx_module_count; ++i) {
    const EmbeddedModule& m = embedded.ptx_modules[i];
    const std::string name = m.variant ? m.variant : "(null)";
    std::size_t at = manifest_.variants.size();
    for (std::size_t j = 0; j < manifest_.variants.size(); ++j) {
      if (manifest_.variants[j].name == name) at = j;
    }
    if (at == manifest_.variants.size() || !manifest_.variants[at].ptx) {
      throw Error("family " + manifest_.family + ": embedded PTX for " + name.substr(0, 100) +
                  ", which the manifest lists without PTX");
    }
    if (m.size != manifest_.variants[at].ptx->size || !m.data) {
      throw Error("family " + manifest_.family + ": the embedded PTX of " + name + " has " +
                  std::to_string(m.size) + " B, the manifest says " +
                  std::to_string(manifest_.variants[at].ptx->size));
    }
    if (!ptx_[at].empty())
      throw Error("family " + manifest_.family + ": two embedded PTX for " + name);
    ptx_[at] = std::string_view(reinterpret_cast<const char*>(m.data), m.size);
  }
  for (std::size_t j = 0; j < manifest_.variants.size(); ++j) {
    if (manifest_.variants[j].ptx && ptx_[j].empty()) {
      throw Error("family " + manifest_.family + ": no embedded PTX for " +
                  manifest_.variants[j].name + ", which the manifest lists with PTX");
    }
  }
}

std::size_t Family::index_of(const std::string& variant) const {
  for (std::size_t i = 0; i < manifest_.variants.size(); ++i) {
    if (manifest_.variants[i].name == variant) return i;
  }
  manifest_.variant(variant);  // throws, naming the variants there are
  return 0;
}

std::string_view Family::ptx(const std::string& variant) const { return ptx_[index_of(variant)]; }

std::string_view Family::spirv(const std::string& variant) const {
  return modules_[index_of(variant)];
}


struct Family::Integrity {
  std::once_flag checked;
  // Per variant (manifest order), per tier (Tier's order): what is wrong.
  std::vector<std::array<std::string, 3>> damage;
  std::vector<std::string> damaged;
  std::string source_sha256;
};

namespace {

// What is wrong with embedded bytes against their manifest record, or "".
std::string hash_problem(std::string_view bytes, const std::string& sha256,
                         const std::string& what) {
  if (sha256_hex(bytes.data(), bytes.size()) != sha256) {
    return "the embedded " + what +
           " does not match the SHA-256 its manifest records (damaged or edited after the "
           "build); not handed to the driver";
  }
  return "";
}

std::string spirv_header_problem(std::string_view il, const Variant& v) {
  if (il.size() < 20 || il.size() % 4 != 0) {
    return "the embedded module has " + std::to_string(il.size()) +
           " bytes, not a SPIR-V module's whole 4-byte words after a 20-byte header";
  }
  auto word = [&](std::size_t i) {
    std::uint32_t w = 0;
    for (int b = 3; b >= 0; --b) w = (w << 8) | static_cast<unsigned char>(il[i * 4 + b]);
    return w;
  };
  if (word(0) != 0x07230203u)
    return "the embedded module does not start with SPIR-V's magic number";
  const std::uint32_t version = word(1);
  const std::string declared =
      std::to_string((version >> 16) & 0xff) + "." + std::to_string((version >> 8) & 0xff);
  if (declared != v.spirv_version) {
    return "the embedded module declares SPIR-V " + declared + ", its manifest " + v.spirv_version;
  }
  return "";
}

}  // namespace

const Family::Integrity& Family::integrity() const {
  Integrity& in = *integrity_;
  std::call_once(in.checked, [&] {
    std::string source_problem;
    if (manifest_.source_embedded) {
      in.source_sha256 = sha256_hex(source_.data(), source_.size());
      if (in.source_sha256 != manifest_.source_sha256) {
        source_problem =
            "the embedded OpenCL C source does not match the SHA-256 its manifest records "
            "(damaged or edited after the build); not handed to the driver";
        in.damaged.push_back("source: " + source_problem);
      }
    }
    in.damage.resize(manifest_.variants.size());
    for (std::size_t i = 0; i < manifest_.variants.size(); ++i) {
      const Variant& v = manifest_.variants[i];
      std::string& spirv = in.damage[i][static_cast<std::size_t>(Tier::SpirV)];
      if (!manifest_.leaves_out("spirv")) {
        spirv = spirv_header_problem(modules_[i], v);
        if (spirv.empty()) spirv = hash_problem(modules_[i], v.sha256, "module");
      }
      std::string& ptx = in.damage[i][static_cast<std::size_t>(Tier::Ptx)];
      if (v.ptx) ptx = hash_problem(ptx_[i], v.ptx->sha256, "PTX");
      in.damage[i][static_cast<std::size_t>(Tier::Source)] = source_problem;
      for (Tier t : {Tier::SpirV, Tier::Ptx}) {
        const std::string& why = in.damage[i][static_cast<std::size_t>(t)];
        if (!why.empty()) in.damaged.push_back(v.name + " [" + to_string(t) + "]: " + why);
      }
    }
  });
  return in;
}

const std::string& Family::damage(const Variant& variant, Tier tier) const {
  return integrity().damage[index_of(variant.name)][static_cast<std::size_t>(tier)];
}

const std::vector<std::string>& Family::damaged() const { return integrity().damaged; }

const std::string& Family::source_sha256() const { return integrity().source_sha256; }

}  // namespace fatcl
