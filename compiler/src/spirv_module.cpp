// Reading and validating SPIR-V modules with SPIRV-Tools.
#include <map>
#include <spirv-tools/libspirv.hpp>
#include <sstream>

#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"

namespace fatcl {
namespace {

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// OpSource OpenCL_C <version>: 102000 is OpenCL C 1.2.
std::string env_for_opencl_c(long version) {
  if (version < 200000) return "opencl1.2";
  if (version < 210000) return "opencl2.0";
  if (version < 220000) return "opencl2.1";
  return "opencl2.2";
}

struct TypeTable {
  std::map<std::string, std::vector<std::string>> defs;  // id -> words after '='
  std::map<std::string, unsigned long long> constants;   // id -> integer value

  std::size_t size_of(const std::string& id, int depth = 0) const {
    auto it = defs.find(id);
    if (it == defs.end() || depth > 32) {
      throw Error("SPIR-V: cannot size type " + id);
    }
    const std::vector<std::string>& d = it->second;
    const std::string& op = d[0];
    if ((op == "OpTypeInt" || op == "OpTypeFloat") && d.size() >= 2) {
      return std::stoul(d[1]) / 8;
    }
    if (op == "OpTypeBool") return 1;
    if (op == "OpTypePointer") return 8;  // Physical64, the only model fatcl emits
    if (op == "OpTypeVector" && d.size() >= 3) {
      std::size_t n = std::stoul(d[2]);
      return size_of(d[1], depth + 1) * (n == 3 ? 4 : n);
    }
    if (op == "OpTypeArray" && d.size() >= 3) {
      auto c = constants.find(d[2]);
      if (c == constants.end()) throw Error("SPIR-V: array length " + d[2] + " is not a constant");
      return size_of(d[1], depth + 1) * c->second;
    }
    if (op == "OpTypeStruct") {
      std::size_t total = 0;
      for (std::size_t i = 1; i < d.size(); ++i) total += size_of(d[i], depth + 1);
      return total;
    }
    throw Error("SPIR-V: cannot size type " + id + " (" + op + ")");
  }
};

}  // namespace

ModuleInfo inspect_module(const std::vector<std::uint32_t>& spirv, const std::string& kernel) {
  if (spirv.size() < 5 || spirv[0] != 0x07230203u) {
    throw Error("not a SPIR-V module (bad magic number or too short)");
  }
  ModuleInfo info;
  info.version =
      std::to_string((spirv[1] >> 16) & 0xff) + "." + std::to_string((spirv[1] >> 8) & 0xff);

  spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_6);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t&,
                               const char* m) { messages += std::string(m) + "\n"; });
  std::string text;
  if (!tools.Disassemble(spirv, &text, SPV_BINARY_TO_TEXT_OPTION_NO_HEADER)) {
    throw Error("SPIR-V module cannot be disassembled: " + messages);
  }

  TypeTable types;
  std::map<std::string, std::string> entry_ids;                   // kernel name -> id
  std::map<std::string, std::array<std::size_t, 3>> local_sizes;  // id -> LocalSize
  std::vector<std::string> workgroup_pointer_types;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> w = split_words(line);
    if (w.empty()) continue;
    if (w[0] == "OpCapability" && w.size() >= 2) {
      info.capabilities.push_back(w[1]);
    } else if (w[0] == "OpEntryPoint" && w.size() >= 4) {
      std::string name = w[3];
      if (name.size() >= 2 && name.front() == '"') name = name.substr(1, name.size() - 2);
      info.entry_points.push_back(name);
      entry_ids[name] = w[2];
    } else if (w[0] == "OpExecutionMode" && w.size() >= 6 && w[2] == "LocalSize") {
      local_sizes[w[1]] = {std::stoul(w[3]), std::stoul(w[4]), std::stoul(w[5])};
    } else if (w[0] == "OpSource" && w.size() >= 3 && w[1] == "OpenCL_C") {
      info.target_env = env_for_opencl_c(std::stol(w[2]));
    } else if (w.size() >= 3 && w[1] == "=") {
      const std::string& id = w[0];
      std::vector<std::string> def(w.begin() + 2, w.end());
      if (def[0] == "OpConstant" && def.size() >= 3) {
        types.constants[id] = std::stoull(def[2]);
      } else if (def[0] == "OpVariable" && def.size() >= 3 && def[2] == "Workgroup") {
        workgroup_pointer_types.push_back(def[1]);
      }
      types.defs[id] = std::move(def);
    }
  }
  for (const std::string& pointer : workgroup_pointer_types) {
    const std::vector<std::string>& p = types.defs.at(pointer);
    if (p.size() >= 3) info.local_mem_bytes += types.size_of(p[2]);
  }
  if (info.target_env.empty()) info.target_env = "opencl2.2";  // no OpenCL C OpSource
  auto id = entry_ids.find(kernel);
  if (id != entry_ids.end()) {
    auto ls = local_sizes.find(id->second);
    if (ls != local_sizes.end()) info.reqd_work_group_size = ls->second;
  }
  return info;
}

void validate_module(const std::vector<std::uint32_t>& spirv, std::string target_env) {
  if (target_env.empty()) target_env = inspect_module(spirv, "").target_env;
  spv_target_env env;
  if (!spvParseTargetEnv(target_env.c_str(), &env)) {
    throw Error("unknown SPIR-V target environment \"" + target_env + "\"");
  }
  spvtools::SpirvTools tools(env);
  std::string messages;
  tools.SetMessageConsumer(
      [&](spv_message_level_t, const char*, const spv_position_t& position, const char* m) {
        messages += "  " + std::string(m);
        if (position.index) messages += " (word " + std::to_string(position.index) + ")";
        messages += "\n";
      });
  if (!tools.Validate(spirv)) {
    throw Error("spirv-val (" + target_env + ") rejects the module:\n" + messages);
  }
}

}  // namespace fatcl
