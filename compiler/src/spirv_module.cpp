// Reading and validating SPIR-V modules with SPIRV-Tools. The module is
// walked with SPIRV-Tools' binary parser (it checks every instruction's word
// count and operands); fatcl's own reading of ids, types and numbers is
// checked too, so a crafted module gives a fatcl::Error naming what is wrong.
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <spirv-tools/libspirv.hpp>
#include <spirv/unified1/spirv.hpp11>
#include <sstream>

#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"
#include "spirv_parse.hpp"

namespace fatcl {
namespace {

constexpr std::uint32_t kMagic = 0x07230203u;

// OpSource OpenCL_C <version>: 102000 is OpenCL C 1.2.
std::string env_for_opencl_c(std::uint32_t version) {
  if (version < 200000) return "opencl1.2";
  if (version < 210000) return "opencl2.0";
  if (version < 220000) return "opencl2.1";
  return "opencl2.2";
}

std::string hex(std::uint32_t value) {
  std::ostringstream s;
  s << "0x" << std::hex << value;
  return s.str();
}

// The type and constant definitions needed to size Workgroup variables.
struct TypeDef {
  spv::Op op;
  std::vector<std::uint32_t> operands;  // words after the result id
};

struct Walk {
  ModuleInfo info;
  std::map<std::uint32_t, TypeDef> types;                      // id -> definition
  std::map<std::uint32_t, std::uint64_t> constants;            // id -> integer value
  std::map<std::string, std::uint32_t> entry_ids;              // kernel name -> function id
  std::map<std::uint32_t, std::array<std::size_t, 3>> local;   // function id -> LocalSize
  std::map<std::uint32_t, std::uint32_t> workgroup_variables;  // variable id -> pointer type
  // Which function uses which Workgroup variable, and calls which functions.
  std::uint32_t function = 0;  // the one being read, 0 outside
  std::map<std::uint32_t, std::set<std::uint32_t>> uses, calls;
  // Ids decorated with Import linkage, by name (llvm-spirv imports the
  // built-in variables so), and the module's functions.
  std::map<std::uint32_t, std::string> imports;
  std::set<std::uint32_t> functions;
  std::string problem;  // first malformed thing seen
};

// A literal string operand: UTF-8, NUL-terminated within its words.
std::string literal_string(const spv_parsed_instruction_t& inst, const spv_parsed_operand_t& op) {
  std::string out;
  for (std::uint16_t w = 0; w < op.num_words; ++w) {
    const std::uint32_t word = inst.words[op.offset + w];
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((word >> (8 * b)) & 0xffu);
      if (c == '\0') return out;
      out += c;
    }
  }
  return out;
}

spv_result_t on_instruction(void* user, const spv_parsed_instruction_t* inst) {
  Walk& walk = *static_cast<Walk*>(user);
  const spv::Op op = static_cast<spv::Op>(inst->opcode);
  // Words after opcode (and result id / type id where present).
  auto word = [&](std::uint16_t operand) -> std::uint32_t {
    return inst->words[inst->operands[operand].offset];
  };
  const std::uint16_t n = inst->num_operands;
  if (walk.function != 0) {
    for (std::uint16_t i = 0; i < n; ++i) {
      if (inst->operands[i].type != SPV_OPERAND_TYPE_ID) continue;
      if (walk.workgroup_variables.count(word(i))) walk.uses[walk.function].insert(word(i));
    }
  }
  switch (op) {
    case spv::Op::OpFunction:
      walk.function = inst->result_id;
      walk.functions.insert(inst->result_id);
      break;
    case spv::Op::OpDecorate:
      // Operands: target, LinkageAttributes, name, linkage type.
      if (n >= 4 && word(1) == static_cast<std::uint32_t>(spv::Decoration::LinkageAttributes) &&
          word(3) == static_cast<std::uint32_t>(spv::LinkageType::Import)) {
        walk.imports[word(0)] = literal_string(*inst, inst->operands[2]);
      }
      break;
    case spv::Op::OpFunctionEnd:
      walk.function = 0;
      break;
    case spv::Op::OpFunctionCall:
      // Operands: result type, result id, function, arguments.
      if (n >= 3 && walk.function != 0) walk.calls[walk.function].insert(word(2));
      break;
    case spv::Op::OpSource:
      if (n >= 2 && word(0) == static_cast<std::uint32_t>(spv::SourceLanguage::OpenCL_C)) {
        walk.info.target_env = env_for_opencl_c(word(1));
      }
      break;
    case spv::Op::OpEntryPoint:
      if (n >= 3) {
        const std::string name = literal_string(*inst, inst->operands[2]);
        walk.info.entry_points.push_back(name);
        walk.entry_ids[name] = word(1);
      }
      break;
    case spv::Op::OpExecutionMode:
      if (n >= 5 && word(1) == static_cast<std::uint32_t>(spv::ExecutionMode::LocalSize)) {
        walk.local[word(0)] = {word(2), word(3), word(4)};
      }
      break;
    case spv::Op::OpTypeBool:
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
    case spv::Op::OpTypeVector:
    case spv::Op::OpTypeArray:
    case spv::Op::OpTypeStruct:
    case spv::Op::OpTypePointer: {
      TypeDef def{op, {}};
      for (std::uint16_t i = 1; i < n; ++i) def.operands.push_back(word(i));  // 0: result id
      walk.types[inst->result_id] = std::move(def);
      break;
    }
    case spv::Op::OpConstant:
      // Operands: result type, result id, value (1 or 2 words, low first).
      if (n >= 3) {
        const spv_parsed_operand_t& value = inst->operands[2];
        std::uint64_t v = inst->words[value.offset];
        if (value.num_words >= 2) v |= std::uint64_t(inst->words[value.offset + 1]) << 32;
        walk.constants[inst->result_id] = v;
      }
      break;
    case spv::Op::OpVariable:
      if (n >= 3 && word(2) == static_cast<std::uint32_t>(spv::StorageClass::Workgroup)) {
        walk.workgroup_variables[inst->result_id] = inst->type_id;
      }
      break;
    default:
      // Other types (runtime arrays, images, ...) are recorded so that a
      // __local variable of one is unsizable, not undefined. spvOpcodeString
      // spells opcodes without "Op".
      if (inst->result_id != 0 && std::strncmp(spvOpcodeString(inst->opcode), "Type", 4) == 0) {
        walk.types[inst->result_id] = TypeDef{op, {}};
      }
      break;
  }
  return SPV_SUCCESS;
}

std::uint64_t checked_multiply(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) {
    throw Error("the size of a __local variable overflows 64 bits");
  }
  return a * b;
}

std::uint64_t size_of(const Walk& walk, std::uint32_t id, int depth = 0) {
  if (depth > 32) throw Error("type %" + std::to_string(id) + " nests more than 32 levels");
  auto it = walk.types.find(id);
  if (it == walk.types.end()) {
    throw Error("the type %" + std::to_string(id) + " of a __local variable is not defined");
  }
  const TypeDef& d = it->second;
  auto operand = [&](std::size_t i) {
    if (i >= d.operands.size()) {
      throw Error("type %" + std::to_string(id) + " (Op" + spvOpcodeString(std::uint32_t(d.op)) +
                  ") lacks an operand");
    }
    return d.operands[i];
  };
  switch (d.op) {
    case spv::Op::OpTypeBool:
      return 1;
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
      return operand(0) / 8;
    case spv::Op::OpTypePointer:
      return 8;  // Physical64, the only addressing model fatcl emits
    case spv::Op::OpTypeVector: {
      const std::uint32_t count = operand(1);
      return checked_multiply(size_of(walk, operand(0), depth + 1), count == 3 ? 4 : count);
    }
    case spv::Op::OpTypeArray: {
      auto length = walk.constants.find(operand(1));
      if (length == walk.constants.end()) {
        throw Error("the length %" + std::to_string(operand(1)) + " of array type %" +
                    std::to_string(id) + " is not an integer constant");
      }
      return checked_multiply(size_of(walk, operand(0), depth + 1), length->second);
    }
    case spv::Op::OpTypeStruct: {
      std::uint64_t total = 0;
      for (std::uint32_t member : d.operands) {
        const std::uint64_t s = size_of(walk, member, depth + 1);
        if (total > std::numeric_limits<std::uint64_t>::max() - s) {
          throw Error("the size of a __local struct overflows 64 bits");
        }
        total += s;
      }
      return total;
    }
    default:
      throw Error("type %" + std::to_string(id) + " (Op" + spvOpcodeString(std::uint32_t(d.op)) +
                  ") cannot be sized");
  }
}

// Capability names as SPIRV-Tools' disassembler spells them.
std::vector<std::string> capability_names(const std::vector<std::uint32_t>& spirv) {
  spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_6);
  tools.SetMessageConsumer(
      [](spv_message_level_t, const char*, const spv_position_t&, const char*) {});
  std::string text;
  if (!tools.Disassemble(spirv, &text, SPV_BINARY_TO_TEXT_OPTION_NO_HEADER)) {
    throw Error("SPIRV-Tools cannot disassemble the module");
  }
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::string prefix = "OpCapability ";
    const std::size_t at = line.find_first_not_of(' ');
    if (at != std::string::npos && line.compare(at, prefix.size(), prefix) == 0) {
      names.push_back(line.substr(at + prefix.size()));
    }
  }
  return names;
}

}  // namespace

namespace detail {

void parse_spirv(const std::vector<std::uint32_t>& spirv, void* user,
                 spv_parsed_instruction_fn_t on_instruction) {
  spv_context context = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  if (!context) throw Error("SPIRV-Tools: cannot create a context");
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result = spvBinaryParse(context, user, spirv.data(), spirv.size(), nullptr,
                                             on_instruction, &diagnostic);
  std::string parse_error;
  if (result != SPV_SUCCESS) {
    parse_error = diagnostic && diagnostic->error ? diagnostic->error : "unknown error";
    if (diagnostic) parse_error += " (word " + std::to_string(diagnostic->position.index) + ")";
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  if (!parse_error.empty()) throw Error("SPIRV-Tools cannot parse the module: " + parse_error);
}

}  // namespace detail

std::string module_header_problem(const std::vector<std::uint32_t>& spirv) {
  if (spirv.size() < 5) {
    return "too short for a SPIR-V header (" + std::to_string(spirv.size() * 4) + " bytes)";
  }
  if (spirv[0] != kMagic) {
    if (spirv[0] == 0x03022307u) return "big-endian SPIR-V (fatcl reads little-endian only)";
    return "not a SPIR-V module (magic number " + hex(spirv[0]) + ", expected 0x07230203)";
  }
  const std::uint32_t major = (spirv[1] >> 16) & 0xffu, minor = (spirv[1] >> 8) & 0xffu;
  if ((spirv[1] & 0xff0000ffu) != 0 || major != 1 || minor > 6) {
    return "unknown SPIR-V version word " + hex(spirv[1]);
  }
  if (spirv[3] == 0) return "the header's id bound is 0";
  return "";
}

ModuleInfo inspect_module(const std::vector<std::uint32_t>& spirv, const std::string& kernel) {
  const std::string problem = module_header_problem(spirv);
  if (!problem.empty()) throw Error(problem);
  Walk walk;
  walk.info.version =
      std::to_string((spirv[1] >> 16) & 0xffu) + "." + std::to_string((spirv[1] >> 8) & 0xffu);

  detail::parse_spirv(spirv, &walk, on_instruction);

  walk.info.capabilities = capability_names(spirv);
  // A function imported is one the module calls without its body: no driver
  // links it (PoCL and Intel's runtime fail at build time), so the module
  // cannot ship. (An `inline` helper without `static` in OpenCL C 1.2 is
  // one: C99 inline emits no definition.)
  for (const auto& [id, name] : walk.imports) {
    if (walk.functions.count(id)) {
      throw Error("the module imports the function \"" + name +
                  "\" (Import linkage): it is called but has no body in the module; an OpenCL "
                  "C helper declared `inline` without `static` is one way to get this");
    }
  }
  // The variables `kernel` reaches, through its calls; every one where the
  // module has no such kernel.
  std::set<std::uint32_t> used;
  auto entry = walk.entry_ids.find(kernel);
  if (entry == walk.entry_ids.end()) {
    for (const auto& [variable, type] : walk.workgroup_variables) used.insert(variable);
  } else {
    std::set<std::uint32_t> seen;
    std::vector<std::uint32_t> todo{entry->second};
    while (!todo.empty()) {
      const std::uint32_t f = todo.back();
      todo.pop_back();
      if (!seen.insert(f).second) continue;
      used.insert(walk.uses[f].begin(), walk.uses[f].end());
      todo.insert(todo.end(), walk.calls[f].begin(), walk.calls[f].end());
    }
  }
  // Every variable is sized (a malformed one is an error wherever it is
  // used), and the module's total and the kernel's share are both checked.
  std::uint64_t local = 0, total = 0;
  for (const auto& [variable, pointer] : walk.workgroup_variables) {
    auto p = walk.types.find(pointer);
    if (p == walk.types.end() || p->second.op != spv::Op::OpTypePointer ||
        p->second.operands.size() < 2) {
      throw Error("a __local variable's type %" + std::to_string(pointer) +
                  " is not a pointer type defined in the module");
    }
    const std::uint64_t s = size_of(walk, p->second.operands[1]);
    if (total > std::numeric_limits<std::uint64_t>::max() - s) {
      throw Error("the module's __local memory overflows 64 bits");
    }
    total += s;
    if (used.count(variable)) local += s;
  }
  if (local > std::numeric_limits<std::size_t>::max()) {
    throw Error("the module's __local memory does not fit a size_t");
  }
  if (total > std::numeric_limits<std::size_t>::max()) {
    throw Error("the module's __local memory does not fit a size_t");
  }
  walk.info.local_mem_bytes = static_cast<std::size_t>(local);
  walk.info.program_local_mem_bytes = static_cast<std::size_t>(total);
  if (walk.info.target_env.empty()) walk.info.target_env = "opencl2.2";  // no OpenCL C OpSource
  auto id = walk.entry_ids.find(kernel);
  if (id != walk.entry_ids.end()) {
    auto ls = walk.local.find(id->second);
    if (ls != walk.local.end()) walk.info.reqd_work_group_size = ls->second;
  }
  return walk.info;
}

void validate_module(const std::vector<std::uint32_t>& spirv, std::string target_env) {
  const std::string problem = module_header_problem(spirv);
  if (!problem.empty()) throw Error(problem);
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
