// Barriers under work-item-dependent control flow, found in the SPIR-V
// module: which values depend on the work-item (a uniformity analysis, as
// LLVM's divergence analysis does for GPU targets), which blocks only some
// work-items of a group reach (those control-dependent on a branch on such
// a value), and whether a barrier, or a call of a function that reaches one,
// lies in such a block. OpenCL requires every work-item of a group to reach
// each barrier (or none); one that some skip hangs a GPU or gives wrong
// results, and no driver says so.
//
// Conservative: a value is taken as varying if it might; a store of a
// varying value, or a store made under varying control flow, makes the whole
// variable (or buffer) it writes varying. Work-group collectives
// (work_group_any, broadcast, reductions) give uniform values.
#include <algorithm>
#include <map>
#include <set>
#include <spirv-tools/libspirv.hpp>
#include <spirv/unified1/spirv.hpp11>
#include <vector>

#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"
#include "spirv_parse.hpp"

namespace fatcl {
namespace {

struct Inst {
  spv::Op op;
  std::uint32_t result = 0;
  std::vector<std::uint32_t> ids;       // id operands (types excluded), in order
  std::vector<std::uint32_t> literals;  // the other words, in order
};

struct Block {
  std::uint32_t label = 0;
  std::vector<std::size_t> insts;  // indices into Module::insts
  std::vector<std::size_t> succ;   // block indices within the function
};

struct Function {
  std::uint32_t id = 0;
  std::vector<std::uint32_t> params;
  std::vector<Block> blocks;
};

struct Module {
  std::vector<Inst> insts;
  std::vector<Function> functions;
  std::map<std::uint32_t, std::string> names;
  std::map<std::uint32_t, std::uint32_t> builtins;  // variable -> BuiltIn
  std::map<std::uint32_t, std::uint64_t> constants;
  std::vector<std::uint32_t> entry_points;
};

spv_result_t on_instruction(void* user, const spv_parsed_instruction_t* parsed) {
  Module& m = *static_cast<Module*>(user);
  Inst inst;
  inst.op = static_cast<spv::Op>(parsed->opcode);
  inst.result = parsed->result_id;
  for (std::uint16_t i = 0; i < parsed->num_operands; ++i) {
    const spv_parsed_operand_t& o = parsed->operands[i];
    if (o.type == SPV_OPERAND_TYPE_RESULT_ID || o.type == SPV_OPERAND_TYPE_TYPE_ID) continue;
    const bool id = o.type == SPV_OPERAND_TYPE_ID || o.type == SPV_OPERAND_TYPE_SCOPE_ID ||
                    o.type == SPV_OPERAND_TYPE_MEMORY_SEMANTICS_ID;
    for (std::uint16_t w = 0; w < o.num_words; ++w) {
      (id ? inst.ids : inst.literals).push_back(parsed->words[o.offset + w]);
    }
  }
  switch (inst.op) {
    case spv::Op::OpName:
      if (!inst.ids.empty() && parsed->num_operands >= 2) {
        const spv_parsed_operand_t& o = parsed->operands[1];
        m.names[inst.ids[0]] =
            reinterpret_cast<const char*>(parsed->words + o.offset);  // NUL-terminated
      }
      break;
    case spv::Op::OpDecorate:
      if (inst.ids.size() == 1 && inst.literals.size() >= 2 &&
          inst.literals[0] == std::uint32_t(spv::Decoration::BuiltIn)) {
        m.builtins[inst.ids[0]] = inst.literals[1];
      }
      break;
    case spv::Op::OpConstant:
      if (!inst.literals.empty()) m.constants[inst.result] = inst.literals[0];
      break;
    case spv::Op::OpEntryPoint:
      if (!inst.ids.empty()) m.entry_points.push_back(inst.ids[0]);
      break;
    case spv::Op::OpFunction:
      m.functions.push_back({inst.result, {}, {}});
      break;
    case spv::Op::OpFunctionParameter:
      if (!m.functions.empty()) m.functions.back().params.push_back(inst.result);
      break;
    case spv::Op::OpLabel:
      if (!m.functions.empty()) m.functions.back().blocks.push_back({inst.result, {}, {}});
      break;
    default:
      break;
  }
  if (!m.functions.empty() && !m.functions.back().blocks.empty() &&
      inst.op != spv::Op::OpFunctionEnd) {
    m.functions.back().blocks.back().insts.push_back(m.insts.size());
  }
  m.insts.push_back(std::move(inst));
  return SPV_SUCCESS;
}

bool divergent_builtin(std::uint32_t b) {
  switch (static_cast<spv::BuiltIn>(b)) {
    case spv::BuiltIn::LocalInvocationId:
    case spv::BuiltIn::GlobalInvocationId:
    case spv::BuiltIn::LocalInvocationIndex:
    case spv::BuiltIn::GlobalLinearId:
    case spv::BuiltIn::SubgroupId:
    case spv::BuiltIn::SubgroupLocalInvocationId:
      return true;
    default:
      return false;
  }
}

// Instructions whose result is the same for the whole work-group when their
// scope is the work-group (the collectives): no operand makes them vary.
bool group_collective(spv::Op op) {
  switch (op) {
    case spv::Op::OpGroupAll:
    case spv::Op::OpGroupAny:
    case spv::Op::OpGroupBroadcast:
    case spv::Op::OpGroupIAdd:
    case spv::Op::OpGroupFAdd:
    case spv::Op::OpGroupFMin:
    case spv::Op::OpGroupUMin:
    case spv::Op::OpGroupSMin:
    case spv::Op::OpGroupFMax:
    case spv::Op::OpGroupUMax:
    case spv::Op::OpGroupSMax:
      return true;
    default:
      return false;
  }
}

bool atomic(spv::Op op) {
  return (op >= spv::Op::OpAtomicLoad && op <= spv::Op::OpAtomicXor) ||
         op == spv::Op::OpAtomicFlagTestAndSet || op == spv::Op::OpAtomicFAddEXT ||
         op == spv::Op::OpAtomicFMinEXT || op == spv::Op::OpAtomicFMaxEXT;
}

bool pointer_step(spv::Op op) {
  switch (op) {
    case spv::Op::OpAccessChain:
    case spv::Op::OpInBoundsAccessChain:
    case spv::Op::OpPtrAccessChain:
    case spv::Op::OpInBoundsPtrAccessChain:
    case spv::Op::OpBitcast:
    case spv::Op::OpCopyObject:
    case spv::Op::OpPtrCastToGeneric:
    case spv::Op::OpGenericCastToPtr:
    case spv::Op::OpGenericCastToPtrExplicit:
      return true;
    default:
      return false;
  }
}

// What a branch in block b would leave to some work-items only, were it to
// vary: every block reachable from b's successors before they join at b's
// immediate post-dominator, each with the successors of b it is reached from
// (a bit each); 0 for the blocks outside it.
struct Region {
  std::vector<std::uint64_t> origin;  // per block of the function
  bool holds(std::size_t block) const { return origin[block] != 0; }
};

std::vector<Region> regions(const Function& f) {
  const std::size_t n = f.blocks.size(), exit = n;
  // Post-dominator sets, iterated to their fixed point (n is small).
  std::vector<std::vector<bool>> pdom(n + 1, std::vector<bool>(n + 1, true));
  pdom[exit].assign(n + 1, false);
  pdom[exit][exit] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t b = n; b-- > 0;) {
      std::vector<bool> next(n + 1, true);
      if (f.blocks[b].succ.empty()) {
        next = pdom[exit];
      } else {
        for (std::size_t s : f.blocks[b].succ) {
          for (std::size_t i = 0; i <= n; ++i) next[i] = next[i] && pdom[s][i];
        }
      }
      next[b] = true;
      if (next != pdom[b]) {
        pdom[b] = std::move(next);
        changed = true;
      }
    }
  }
  // How many blocks post-dominate each.
  std::vector<std::size_t> count(n + 1);
  for (std::size_t x = 0; x <= n; ++x) count[x] = std::count(pdom[x].begin(), pdom[x].end(), true);
  std::vector<Region> out(n);
  for (std::size_t b = 0; b < n; ++b) {
    out[b].origin.assign(n, 0);
    if (f.blocks[b].succ.size() < 2) continue;
    // The immediate post-dominator: the strict one the others all post-dominate.
    std::size_t join = exit;
    for (std::size_t p = 0; p < n; ++p) {
      if (p != b && pdom[b][p] && count[p] == count[b] - 1) join = p;
    }
    for (std::size_t k = 0; k < f.blocks[b].succ.size(); ++k) {
      const std::uint64_t bit = std::uint64_t(1) << std::min<std::size_t>(k, 63);
      std::vector<bool> here(n, false);
      std::vector<std::size_t> todo{f.blocks[b].succ[k]};
      while (!todo.empty()) {
        const std::size_t x = todo.back();
        todo.pop_back();
        if (x == join || here[x]) continue;
        here[x] = true;
        out[b].origin[x] |= bit;
        if (x == b) continue;  // around a loop: b's own successors again
        for (std::size_t s : f.blocks[x].succ) todo.push_back(s);
      }
    }
  }
  return out;
}

}  // namespace

BarrierCheck parse_barrier_check(const std::string& text) {
  if (text == "refuse") return BarrierCheck::Refuse;
  if (text == "warn") return BarrierCheck::Warn;
  if (text == "off") return BarrierCheck::Off;
  throw Error("unknown barrier check \"" + text.substr(0, 40) + "\" (refuse, warn or off)");
}

std::vector<std::string> divergent_barriers(const std::vector<std::uint32_t>& spirv) {
  Module m;
  detail::parse_spirv(spirv, &m, on_instruction);

  std::map<std::uint32_t, std::size_t> function_of;  // function id -> index
  for (std::size_t i = 0; i < m.functions.size(); ++i) function_of[m.functions[i].id] = i;
  // The control flow graph of each function, and its varying regions.
  std::vector<std::vector<Region>> region(m.functions.size());
  for (std::size_t fi = 0; fi < m.functions.size(); ++fi) {
    Function& f = m.functions[fi];
    std::map<std::uint32_t, std::size_t> block_of;
    for (std::size_t b = 0; b < f.blocks.size(); ++b) block_of[f.blocks[b].label] = b;
    for (Block& b : f.blocks) {
      if (b.insts.empty()) continue;
      const Inst& last = m.insts[b.insts.back()];
      std::vector<std::uint32_t> targets;
      if (last.op == spv::Op::OpBranch) targets = last.ids;
      if (last.op == spv::Op::OpBranchConditional || last.op == spv::Op::OpSwitch) {
        targets.assign(last.ids.begin() + std::min<std::size_t>(1, last.ids.size()),
                       last.ids.end());
      }
      for (std::uint32_t t : targets) {
        auto it = block_of.find(t);
        if (it != block_of.end() &&
            std::find(b.succ.begin(), b.succ.end(), it->second) == b.succ.end()) {
          b.succ.push_back(it->second);
        }
      }
    }
    region[fi] = regions(f);
  }

  // Which functions reach a barrier, themselves or through their calls.
  std::set<std::uint32_t> barriers;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Function& f : m.functions) {
      if (barriers.count(f.id)) continue;
      for (const Block& b : f.blocks) {
        for (std::size_t i : b.insts) {
          const Inst& inst = m.insts[i];
          const bool reaches =
              inst.op == spv::Op::OpControlBarrier ||
              (inst.op == spv::Op::OpFunctionCall && !inst.ids.empty() &&
               barriers.count(inst.ids[0]));
          if (reaches && barriers.insert(f.id).second) changed = true;
        }
      }
    }
  }

  std::set<std::uint32_t> varying;
  for (const auto& [variable, builtin] : m.builtins) {
    if (divergent_builtin(builtin)) varying.insert(variable);
  }
  // The variable or parameter a pointer is derived from.
  std::map<std::uint32_t, std::size_t> def;  // result id -> instruction
  for (std::size_t i = 0; i < m.insts.size(); ++i) {
    if (m.insts[i].result) def[m.insts[i].result] = i;
  }
  auto base = [&](std::uint32_t pointer) {
    for (int depth = 0; depth < 64; ++depth) {
      auto it = def.find(pointer);
      if (it == def.end() || !pointer_step(m.insts[it->second].op) ||
          m.insts[it->second].ids.empty()) {
        break;
      }
      pointer = m.insts[it->second].ids[0];
    }
    return pointer;
  };
  // Parameters through which a function stores what varies (an output
  // argument makes the caller's variable vary).
  std::set<std::uint32_t> varying_out;
  std::vector<std::vector<bool>> divergent(m.functions.size());
  auto mark = [&](std::uint32_t id, bool& changed) {
    if (id && varying.insert(id).second) changed = true;
  };
  // The results of the calls of each function.
  std::map<std::uint32_t, std::vector<std::uint32_t>> call_results;
  for (const Inst& call : m.insts) {
    if (call.op == spv::Op::OpFunctionCall && !call.ids.empty() && call.result) {
      call_results[call.ids[0]].push_back(call.result);
    }
  }
  // The block each value of a function is defined in.
  std::map<std::uint32_t, std::size_t> block_of_value;
  for (const Function& f : m.functions) {
    for (std::size_t b = 0; b < f.blocks.size(); ++b) {
      for (std::size_t i : f.blocks[b].insts) {
        if (m.insts[i].result && m.insts[i].op != spv::Op::OpLabel) {
          block_of_value[m.insts[i].result] = b;
        }
      }
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t fi = 0; fi < m.functions.size(); ++fi) {
      const Function& f = m.functions[fi];
      const std::size_t n = f.blocks.size();
      // The varying branches, and the blocks some work-items may skip (their
      // regions). A varying branch that is in its own region is a loop
      // that work-items leave after different counts: a value defined in it
      // and used after it varies (temporal divergence).
      std::vector<std::size_t> branches;
      divergent[fi].assign(n, false);
      for (std::size_t b = 0; b < n; ++b) {
        if (f.blocks[b].insts.empty()) continue;
        const Inst& last = m.insts[f.blocks[b].insts.back()];
        const bool varies = (last.op == spv::Op::OpBranchConditional ||
                             last.op == spv::Op::OpSwitch) &&
                            !last.ids.empty() && varying.count(last.ids[0]);
        if (!varies) continue;
        branches.push_back(b);
        for (std::size_t x = 0; x < n; ++x) {
          if (region[fi][b].holds(x)) divergent[fi][x] = true;
        }
      }
      // Whether block x is varying branch k's own or in its region.
      auto inside = [&](std::size_t k, std::size_t x) {
        return x == branches[k] || region[fi][branches[k]].holds(x);
      };
      // Whether operand `id`, used in block `at`, varies there.
      auto varies_at = [&](std::uint32_t id, std::size_t at) {
        if (varying.count(id)) return true;
        auto def_block = block_of_value.find(id);
        if (def_block == block_of_value.end()) return false;
        for (std::size_t k = 0; k < branches.size(); ++k) {
          const std::size_t b = branches[k];
          const bool loop = region[fi][b].holds(b);
          if (loop && inside(k, def_block->second) && !inside(k, at)) return true;
        }
        return false;
      };
      for (std::size_t b = 0; b < n; ++b) {
        for (std::size_t i : f.blocks[b].insts) {
          const Inst& inst = m.insts[i];
          const bool any = std::any_of(inst.ids.begin(), inst.ids.end(),
                                       [&](std::uint32_t id) { return varies_at(id, b); });
          switch (inst.op) {
            case spv::Op::OpStore:
            case spv::Op::OpCopyMemory:
            case spv::Op::OpCopyMemorySized:
              if (inst.ids.size() >= 2 && (divergent[fi][b] || any)) {
                const std::uint32_t target = base(inst.ids[0]);
                mark(target, changed);
                if (std::find(f.params.begin(), f.params.end(), target) != f.params.end() &&
                    varying_out.insert(target).second) {
                  changed = true;
                }
              }
              break;
            case spv::Op::OpPhi: {
              if (any) mark(inst.result, changed);
              // Where ways from different sides of a varying branch meet,
              // the value depends on the side each work-item came from.
              for (std::size_t k = 0; k < branches.size(); ++k) {
                const Region& r = region[fi][branches[k]];
                const Block& from_b = f.blocks[branches[k]];
                std::uint64_t sides = 0;
                for (std::size_t e = 1; e < inst.ids.size(); e += 2) {
                  for (std::size_t x = 0; x < n; ++x) {
                    if (f.blocks[x].label != inst.ids[e]) continue;
                    if (x == branches[k]) {
                      // b's own edge here: the side of the successor that is here.
                      for (std::size_t s2 = 0; s2 < from_b.succ.size(); ++s2) {
                        if (from_b.succ[s2] == b) {
                          sides |= std::uint64_t(1) << std::min<std::size_t>(s2, 63);
                        }
                      }
                    } else {
                      sides |= r.origin[x];
                    }
                  }
                }
                if (sides & (sides - 1)) mark(inst.result, changed);
              }
              break;
            }
            case spv::Op::OpFunctionCall: {
              if (inst.ids.empty()) break;
              auto callee = function_of.find(inst.ids[0]);
              if (any) mark(inst.result, changed);
              if (callee == function_of.end()) break;
              const Function& g = m.functions[callee->second];
              for (std::size_t a = 1; a < inst.ids.size() && a - 1 < g.params.size(); ++a) {
                const std::uint32_t param = g.params[a - 1];
                if (varies_at(inst.ids[a], b)) mark(param, changed);
                if (varying_out.count(param)) mark(base(inst.ids[a]), changed);
              }
              break;
            }
            case spv::Op::OpReturnValue:
              if (any || divergent[fi][b]) {
                // The callers' results vary.
                for (std::uint32_t result : call_results[f.id]) mark(result, changed);
              }
              break;
            case spv::Op::OpBranchConditional:
            case spv::Op::OpSwitch:
              // A condition that varies only here (a value a varying loop
              // left) makes the branch vary: its own id stands for it.
              if (!inst.ids.empty() && varies_at(inst.ids[0], b)) mark(inst.ids[0], changed);
              break;
            default:
              if (!inst.result) break;
              if (group_collective(inst.op)) {
                // Uniform at work-group scope; a subgroup's varies.
                const bool workgroup =
                    !inst.ids.empty() && m.constants.count(inst.ids[0]) &&
                    m.constants[inst.ids[0]] == std::uint32_t(spv::Scope::Workgroup);
                if (!workgroup) mark(inst.result, changed);
              } else if (atomic(inst.op) || any) {
                mark(inst.result, changed);
              }
              break;
          }
        }
      }
    }
  }

  std::vector<std::string> found;
  for (std::size_t fi = 0; fi < m.functions.size(); ++fi) {
    const Function& f = m.functions[fi];
    const std::string name =
        m.names.count(f.id) ? m.names[f.id] : "%" + std::to_string(f.id);
    for (std::size_t b = 0; b < f.blocks.size(); ++b) {
      if (!divergent[fi][b]) continue;
      for (std::size_t i : f.blocks[b].insts) {
        const Inst& inst = m.insts[i];
        if (inst.op == spv::Op::OpControlBarrier) {
          found.push_back("a barrier in " + name +
                          " is reached only under control flow that depends on the work-item");
        } else if (inst.op == spv::Op::OpFunctionCall && !inst.ids.empty() &&
                   barriers.count(inst.ids[0])) {
          const std::string callee = m.names.count(inst.ids[0])
                                         ? m.names[inst.ids[0]]
                                         : "%" + std::to_string(inst.ids[0]);
          found.push_back(name + " calls " + callee +
                          ", which reaches a barrier, only under control flow that depends on "
                          "the work-item");
        }
      }
    }
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

}  // namespace fatcl
