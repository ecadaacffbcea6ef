// PTX for NVIDIA's OpenCL, made by Debian's LLVM 15 and libclc, and checked
// by the CUDA toolkit's ptxas where it is present. On the H200 (driver 580)
// it runs correct at 0.31x to 1.46x of the driver's own build of the same
// variant (geometric mean 0.87 at 4096): tuning measures both.
#include "ptx.hpp"

#include <algorithm>
#include <regex>

#include "fatcl/detail/atomic_file.hpp"
#include "fatcl/detail/process.hpp"
#include "fatcl/error.hpp"

namespace fs = std::filesystem;

namespace fatcl {
namespace {

std::size_t number(const std::smatch& m, std::size_t i) {
  try {
    return static_cast<std::size_t>(std::stoull(m[i].str()));
  } catch (const std::exception&) {
    throw Error("ptxas printed a number out of range: " + m[i].str());
  }
}

// Each kernel of the LLVM IR text `ir` with a reqd_work_group_size gets
// NVPTX's reqntid annotations, so that the PTX says `.reqntid x, y, z`:
// without it the driver's JIT allocates registers for any work-group size,
// and a 512-item work-group of the 256 x 128 blocked point failed to launch
// on the H200 with CL_OUT_OF_RESOURCES (148 registers a work-item,
// 2026-12-02); with it ptxas keeps to 65536 / 512.
std::string with_reqntid(std::string ir) {
  static const std::regex kernel(
      R"(^define [^\n]*spir_kernel void @(\w+)\([^\n]*!reqd_work_group_size !(\d+))",
      std::regex::multiline);
  static const std::regex node_id(R"(^!(\d+) = )", std::regex::multiline);
  std::size_t next = 0;
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), node_id); it != std::sregex_iterator();
       ++it) {
    next = std::max(next, number(*it, 1) + 1);
  }
  std::string refs, nodes;
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), kernel); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[1], size_node = (*it)[2];
    std::smatch m;
    if (!std::regex_search(
            ir, m,
            std::regex("^!" + size_node + R"( = !\{i32 (\d+), i32 (\d+), i32 (\d+)\})",
                       std::regex::multiline))) {
      throw Error("the LLVM IR of kernel " + name + " names reqd_work_group_size !" + size_node +
                  " but has no such node");
    }
    for (std::size_t axis = 0; axis < 3; ++axis) {
      const std::string id = "!" + std::to_string(next++);
      refs += ", " + id;
      nodes += id + " = !{ptr @" + name + ", !\"reqntid" + "xyz"[axis] + "\", i32 " +
               m[axis + 1].str() + "}\n";
    }
  }
  if (refs.empty()) return ir;
  const std::string list = "!nvvm.annotations = !{";
  const std::size_t at = ir.find("\n" + list);
  if (at == std::string::npos) throw Error("the LLVM IR has no !nvvm.annotations");
  ir.insert(ir.find('}', at), refs);
  return ir + nodes;
}

}  // namespace

PtxInfo inspect_ptx(const std::string& ptx, const std::string& kernel) {
  PtxInfo info;
  std::smatch m;
  if (std::regex_search(ptx, m,
                        std::regex(R"(^\.version\s+([0-9]+\.[0-9]+))", std::regex::multiline))) {
    info.version = m[1];
  } else {
    throw Error("the PTX has no .version line");
  }
  if (std::regex_search(ptx, m, std::regex(R"(^\.target\s+([a-z0-9_]+))", std::regex::multiline))) {
    info.target = m[1];
  } else {
    throw Error("the PTX has no .target line");
  }
  if (!std::regex_search(ptx, std::regex("\\.entry\\s+" + kernel + "\\b"))) {
    throw Error("the PTX has no .entry " + kernel);
  }
  return info;
}

PtxasReport parse_ptxas_report(const std::string& output, const std::string& kernel) {
  std::smatch m;
  const std::regex head("Compiling entry function '" + kernel + "' for '([a-z0-9_]+)'");
  if (!std::regex_search(output, m, head)) {
    throw Error("ptxas -v printed no \"Compiling entry function '" + kernel + "'\"");
  }
  PtxasReport r;
  r.arch = m[1];
  const std::string rest = m.suffix();
  // The entry's block ends where the next function's properties begin.
  const std::regex frame(
      "Function properties for " + kernel +
      R"(\s+([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads)");
  if (!std::regex_search(rest, m, frame)) {
    throw Error("ptxas -v printed no stack frame and spills for " + kernel);
  }
  r.stack_frame_bytes = number(m, 1);
  r.spill_store_bytes = number(m, 2);
  r.spill_load_bytes = number(m, 3);
  const std::string after = m.suffix();
  const std::string used = after.substr(0, after.find('\n', after.find("Used ")));
  if (!std::regex_search(used, m, std::regex(R"(Used ([0-9]+) registers)"))) {
    throw Error("ptxas -v printed no register count for " + kernel);
  }
  r.registers = number(m, 1);
  if (std::regex_search(used, m, std::regex(R"(([0-9]+) bytes smem)")))
    r.shared_bytes = number(m, 1);
  return r;
}

namespace detail {

PtxBuild compile_ptx(const Toolchain& toolchain, const VariantRequest& request,
                     const std::string& language, const std::string& variant, const fs::path& cl,
                     const fs::path& dir) {
  const std::string bc = (dir / "ptx.bc").string(), linked = (dir / "ptx-linked.bc").string(),
                    optimised = (dir / "ptx-opt.ll").string(), out = (dir / "k.ptx").string();
  std::vector<std::string> clang{
      toolchain.clang, "-cl-std=" + language,     "-target", "nvptx64-nvidia-nvcl", "-O3",
      "-Xclang",       "-finclude-default-header"};
  for (const auto& [k, v] : request.params) clang.push_back("-D" + k + "=" + std::to_string(v));
  clang.insert(clang.end(), {"-emit-llvm", "-c", cl.string(), "-o", bc});
  run_tool(clang, "clang (PTX route)");
  // libclc's triple is nvptx64-unknown-nvidiacl: llvm-link warns, and links.
  run_tool({toolchain.llvm_link, "--only-needed", bc, toolchain.libclc_nvptx, "-o", linked},
           "llvm-link (PTX route, libclc)");
  run_tool({toolchain.opt, "-O3", "-S", linked, "-o", optimised}, "opt (PTX route)");
  write_file_atomic(optimised, with_reqntid(read_text(optimised)));
  run_tool({toolchain.llc, "-march=nvptx64", "-mcpu=" + toolchain.ptx_cpu, optimised, "-o", out},
           "llc (PTX route)");
  PtxBuild b;
  b.text = read_text(out);
  const PtxInfo info = inspect_ptx(b.text, request.kernel);
  b.module.file = variant + ".ptx";
  b.module.target = info.target;
  b.module.ptx_version = info.version;
  b.module.size = b.text.size();
  b.module.sha256 = sha256_hex(b.text.data(), b.text.size());
  if (!toolchain.ptxas.empty()) {
    ProcessResult r = run_process({toolchain.ptxas, "-arch=" + toolchain.ptx_arch, "-v", out, "-o",
                                   (dir / "k.cubin").string()});
    if (r.exit_code != 0) {
      std::string said = r.output.size() > 1500 ? r.output.substr(0, 1500) + " ..." : r.output;
      while (!said.empty() && said.back() == '\n') said.pop_back();
      throw Error("ptxas -arch=" + toolchain.ptx_arch + " rejected the PTX (exit " +
                  std::to_string(r.exit_code) + "): " + said);
    }
    b.module.ptxas = parse_ptxas_report(r.output, request.kernel);
  }
  return b;
}

}  // namespace detail
}  // namespace fatcl
