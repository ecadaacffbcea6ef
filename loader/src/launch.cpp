#include "fatcl/launch.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "fatcl/cache.hpp"
#include "fatcl/detail/clock.hpp"
#include "fatcl/detail/format.hpp"
#include "fatcl/loader.hpp"
#include "fatcl/store.hpp"

namespace fatcl {
namespace {

using Bytes = std::vector<unsigned char>;

std::string detail_number(double v) { return detail::format("%.3g", v); }
using Arg = LaunchArgument;

template <typename T>
void put(Bytes& out, std::size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}
template <typename T>
T get(const Bytes& in, std::size_t i) {
  T v;
  std::memcpy(&v, in.data() + i * sizeof(T), sizeof(T));
  return v;
}

// Element i of a buffer of `type` as a double (what comparisons read).
double element(const Bytes& b, ElementType type, std::size_t i) {
  switch (type) {
    case ElementType::Char: return get<std::int8_t>(b, i);
    case ElementType::UChar: return get<std::uint8_t>(b, i);
    case ElementType::Short: return get<std::int16_t>(b, i);
    case ElementType::UShort: return get<std::uint16_t>(b, i);
    case ElementType::Int: return get<std::int32_t>(b, i);
    case ElementType::UInt: return get<std::uint32_t>(b, i);
    case ElementType::Long: return static_cast<double>(get<std::int64_t>(b, i));
    case ElementType::ULong: return static_cast<double>(get<std::uint64_t>(b, i));
    case ElementType::Float: return get<float>(b, i);
    case ElementType::Double: return get<double>(b, i);
  }
  return 0;
}

// Stores v (a whole number for integer types) as element i.
void set_element(Bytes& b, ElementType type, std::size_t i, double v) {
  switch (type) {
    case ElementType::Char: return put(b, i, static_cast<std::int8_t>(v));
    case ElementType::UChar: return put(b, i, static_cast<std::uint8_t>(v));
    case ElementType::Short: return put(b, i, static_cast<std::int16_t>(v));
    case ElementType::UShort: return put(b, i, static_cast<std::uint16_t>(v));
    case ElementType::Int: return put(b, i, static_cast<std::int32_t>(v));
    case ElementType::UInt: return put(b, i, static_cast<std::uint32_t>(v));
    case ElementType::Long: return put(b, i, static_cast<std::int64_t>(v));
    case ElementType::ULong: return put(b, i, static_cast<std::uint64_t>(v));
    case ElementType::Float: return put(b, i, static_cast<float>(v));
    case ElementType::Double: return put(b, i, v);
  }
}

// A value drawn as the description says "random": uniform in [-1, 1) for
// floating types, a whole number in [0, 64) for integers.
double draw(std::mt19937_64& rng, ElementType type) {
  if (is_floating(type)) return std::uniform_real_distribution<double>(-1, 1)(rng);
  return static_cast<double>(std::uniform_int_distribution<int>(0, 63)(rng));
}

// The whole-number range of an integer type, to refuse a scalar that does
// not fit it.
bool fits(ElementType type, long long v) {
  switch (type) {
    case ElementType::Char: return v >= INT8_MIN && v <= INT8_MAX;
    case ElementType::UChar: return v >= 0 && v <= UINT8_MAX;
    case ElementType::Short: return v >= INT16_MIN && v <= INT16_MAX;
    case ElementType::UShort: return v >= 0 && v <= UINT16_MAX;
    case ElementType::Int: return v >= INT32_MIN && v <= INT32_MAX;
    case ElementType::UInt: return v >= 0 && v <= static_cast<long long>(UINT32_MAX);
    case ElementType::ULong: return v >= 0;
    default: return true;
  }
}

// One problem and what its first variant computed, for the variants after
// it to agree with.
struct ProblemData {
  std::vector<long long> problem;
  std::size_t index = 0;  // in the run: with the seed, it draws the inputs
  std::string text;
  // Per argument compared (write, read_write): the first variant's outputs
  // and its name; empty until a variant ran.
  std::vector<Bytes> reference;
  std::string reference_variant;
};

// The arguments of one launch of `variant` on a problem: buffer contents
// (written ones poisoned) and scalars' bytes, per argument; a local
// argument's bytes are its size. Drawn from the seed, the problem and the
// argument, so every variant of a problem gets the same values (and the same
// first elements where a count depends on the variant's parameters).
// `names` bind the problem and the variant's parameters, checked by
// LaunchDescription::check_at.
std::vector<Bytes> arguments_of(const LaunchDescription& d, const Bindings& names,
                                const ProblemData& p, unsigned seed) {
  std::vector<Bytes> out;
  for (std::size_t a = 0; a < d.arguments.size(); ++a) {
    const Arg& arg = d.arguments[a];
    std::seed_seq seq{seed, static_cast<unsigned>(p.index), static_cast<unsigned>(a)};
    std::mt19937_64 rng(seq);
    Bytes bytes;
    if (arg.kind == Arg::Kind::Scalar) {
      bytes.resize(size_of(arg.type));
      const std::optional<double> literal = parse_number(arg.value);
      if (arg.value == "random") {
        set_element(bytes, arg.type, 0, draw(rng, arg.type));
      } else if (is_floating(arg.type) && literal) {
        set_element(bytes, arg.type, 0, *literal);
      } else {
        const long long n = evaluate(arg.value, names);
        if (!fits(arg.type, n)) {
          throw Error("argument " + arg.name + " = " + std::to_string(n) + " at " + p.text +
                      " does not fit a " + to_string(arg.type));
        }
        if (is_floating(arg.type)) {
          set_element(bytes, arg.type, 0, static_cast<double>(n));
        } else {
          std::memcpy(bytes.data(), &n, bytes.size());  // the low bytes: a little-endian host
        }
      }
    } else {
      const long long count = evaluate(arg.count, names);
      bytes.resize(static_cast<std::size_t>(count) * size_of(arg.type));
      if (arg.kind == Arg::Kind::Local) {
        // Only its size matters.
      } else if (arg.access == Arg::Access::Write) {
        if (is_floating(arg.type)) {
          for (long long i = 0; i < count; ++i) {
            set_element(bytes, arg.type, i, std::numeric_limits<double>::quiet_NaN());
          }
        } else {
          std::fill(bytes.begin(), bytes.end(), 0xA5);
        }
      } else {
        for (long long i = 0; i < count; ++i) {
          const double v = arg.fill == "random"  ? draw(rng, arg.type)
                           : arg.fill == "zero"  ? 0.0
                           : arg.fill == "index" ? static_cast<double>(i)
                                                 : parse_number(arg.fill).value_or(0);
          set_element(bytes, arg.type, i, v);
        }
      }
    }
    out.push_back(std::move(bytes));
  }
  return out;
}

bool compared(const Arg& a) {
  return a.kind == Arg::Kind::Buffer && a.access != Arg::Access::Read;
}

// "" if `got` agrees with `want`, else where and by how much it differs.
std::string difference(const Arg& a, const Bytes& got, const Bytes& want, double tolerance) {
  const std::size_t n = want.size() / size_of(a.type);
  if (!is_floating(a.type)) {
    for (std::size_t i = 0; i < n; ++i) {
      if (std::memcmp(got.data() + i * size_of(a.type), want.data() + i * size_of(a.type),
                      size_of(a.type)) != 0) {
        return a.name + "[" + std::to_string(i) + "] is " +
               std::to_string(static_cast<long long>(element(got, a.type, i))) + " where " +
               std::to_string(static_cast<long long>(element(want, a.type, i))) + " was";
      }
    }
    return "";
  }
  double scale = 0, worst = 0;
  std::size_t worst_at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = element(got, a.type, i), w = element(want, a.type, i);
    if (std::isnan(g) != std::isnan(w)) {
      return a.name + "[" + std::to_string(i) + "] is " + detail_number(g) + " where " +
             detail_number(w) + " was (" +
             (std::isnan(g) ? "left unwritten or NaN" : "written where it was not") + ")";
    }
    if (std::isnan(g)) continue;
    scale = std::max(scale, std::abs(w));
    if (std::abs(g - w) > worst) {
      worst = std::abs(g - w);
      worst_at = i;
    }
  }
  const double relative = worst / std::max(scale, std::numeric_limits<double>::min());
  if (worst > 0 && relative > tolerance) {
    return a.name + ": relative error " + detail_number(relative) + " (tolerance " +
           detail_number(tolerance) + "), largest at [" + std::to_string(worst_at) + "]: " +
           detail_number(element(got, a.type, worst_at)) + " where " +
           detail_number(element(want, a.type, worst_at)) + " was";
  }
  return "";
}

// The NDRange of one launch: the description's global sizes rounded up to
// whole work-groups of the variant's required size, else the
// description's "local", else the driver's choice. `names` as
// arguments_of's.
struct Geometry {
  std::vector<std::size_t> global, local;  // local empty: the driver's
};
Geometry geometry(const LaunchDescription& d, const Variant& v, const Bindings& names) {
  Geometry g;
  for (std::size_t i = 0; i < d.global.size(); ++i) {
    g.global.push_back(static_cast<std::size_t>(evaluate(d.global[i], names)));
  }
  if (v.work_group_items() > 0) {
    for (std::size_t i = 0; i < d.global.size(); ++i) g.local.push_back(v.reqd_work_group_size[i]);
  } else if (!d.local.empty()) {
    for (const std::string& e : d.local) {
      g.local.push_back(static_cast<std::size_t>(evaluate(e, names)));
    }
  }
  for (std::size_t i = 0; i < g.local.size(); ++i) {
    g.global[i] = (g.global[i] + g.local[i] - 1) / g.local[i] * g.local[i];
  }
  return g;
}

// One launch of a loaded variant on one problem; compares its outputs with
// the problem's reference, or makes them the reference.
LaunchOutcome launch_once(const cl::Context& context, const cl::CommandQueue& queue,
                          const LaunchDescription& d, const LoadedKernel& k, ProblemData& p,
                          unsigned seed, double tolerance, const LaunchCheckOptions& options) {
  LaunchOutcome out;
  out.variant = k.variant.name;
  out.tier = to_string(k.tier);
  out.problem = p.text;
  const std::string name = out.variant + " [" + out.tier + "] at " + p.text;
  bool began = false;  // the begin line is out, the end line not yet
  try {
    d.check_at(k.variant, p.problem);  // sizes the build did not check
    const Bindings names = d.bind(k.variant, p.problem);
    const Geometry g = geometry(d, k.variant, names);
    std::vector<Bytes> values = arguments_of(d, names, p, seed);
    cl::Kernel kernel = k.kernel;
    std::vector<cl::Buffer> buffers(d.arguments.size());
    for (std::size_t a = 0; a < d.arguments.size(); ++a) {
      const Arg& arg = d.arguments[a];
      Bytes& bytes = values[a];
      cl_int status = CL_SUCCESS;
      switch (arg.kind) {
        case Arg::Kind::Scalar:
          status = clSetKernelArg(kernel(), static_cast<cl_uint>(a), bytes.size(), bytes.data());
          break;
        case Arg::Kind::Local:
          status = clSetKernelArg(kernel(), static_cast<cl_uint>(a), bytes.size(), nullptr);
          break;
        case Arg::Kind::Buffer:
          buffers[a] = cl::Buffer(clCreateBuffer(context(),
                                                 CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                                 bytes.size(), bytes.data(), &status));
          check_cl(status, "clCreateBuffer(" + arg.name + ", " + std::to_string(bytes.size()) +
                               " B)");
          status = clSetKernelArg(kernel(), static_cast<cl_uint>(a), sizeof(cl_mem),
                                  &buffers[a]());
          break;
      }
      if (status != CL_SUCCESS) {
        out.result = LaunchOutcome::Result::Failed;
        out.reason = "clSetKernelArg(" + std::to_string(a) + ", " + arg.name +
                     ") failed: " + cl_status_name(status) +
                     " (does the description list the kernel's arguments in order, with their "
                     "types?)";
        return out;
      }
    }
    if (options.progress) options.progress(std::string(kLaunchBegin) + " " + name);
    began = true;
    const auto start = std::chrono::steady_clock::now();
    check_cl(clEnqueueNDRangeKernel(queue(), kernel(), static_cast<cl_uint>(g.global.size()),
                                    nullptr, g.global.data(),
                                    g.local.empty() ? nullptr : g.local.data(), 0, nullptr,
                                    nullptr),
             "clEnqueueNDRangeKernel");
    check_cl(clFinish(queue()), "clFinish");
    out.ms = detail::ms_since(start);
    if (options.progress) options.progress(std::string(kLaunchEnd) + " " + name);
    began = false;
    for (std::size_t a = 0; a < d.arguments.size(); ++a) {
      if (!compared(d.arguments[a])) continue;
      Bytes& got = values[a];
      check_cl(clEnqueueReadBuffer(queue(), buffers[a](), CL_TRUE, 0, got.size(), got.data(), 0,
                                   nullptr, nullptr),
               "clEnqueueReadBuffer(" + d.arguments[a].name + ")");
      if (p.reference_variant.empty()) {
        p.reference[a] = std::move(got);
        continue;
      }
      const Arg& arg = d.arguments[a];
      const std::string diff =
          got.size() != p.reference[a].size()
              ? arg.name + " holds " + std::to_string(got.size() / size_of(arg.type)) +
                    " elements here and " +
                    std::to_string(p.reference[a].size() / size_of(arg.type)) +
                    " there: outputs of different sizes are not compared (a compared "
                    "buffer's count must not depend on the variant)"
              : difference(arg, got, p.reference[a], tolerance);
      if (!diff.empty() && out.result == LaunchOutcome::Result::Ok) {
        out.result = LaunchOutcome::Result::Differs;
        out.reason = "differs from " + p.reference_variant + ": " + diff;
      }
    }
    if (p.reference_variant.empty()) p.reference_variant = out.variant;
  } catch (const Error& e) {
    if (began && options.progress) options.progress(std::string(kLaunchEnd) + " " + name);
    out.result = LaunchOutcome::Result::Failed;
    out.reason = e.what();
  }
  return out;
}

}  // namespace

const char* to_string(LaunchOutcome::Result result) {
  switch (result) {
    case LaunchOutcome::Result::Ok: return "ok";
    case LaunchOutcome::Result::Refused: return "refused";
    case LaunchOutcome::Result::Failed: return "failed";
    case LaunchOutcome::Result::Differs: return "differs";
  }
  return "?";
}

bool LaunchCheckReport::ok() const {
  for (const LaunchOutcome& o : outcomes) {
    if (o.result == LaunchOutcome::Result::Failed || o.result == LaunchOutcome::Result::Differs) {
      return false;
    }
  }
  return true;
}

std::string LaunchCheckReport::to_text() const {
  std::string out = family + " on " + device + " (inputs seed " + std::to_string(seed) + ", " +
                    std::to_string(problems) + " problems)\n";
  std::size_t ran = 0, bad = 0;
  for (const LaunchOutcome& o : outcomes) {
    if (o.result == LaunchOutcome::Result::Ok) {
      ++ran;
      continue;
    }
    bad += o.result != LaunchOutcome::Result::Refused;
    out += "  " + std::string(to_string(o.result)) + ": " + o.variant +
           (o.tier.empty() ? "" : " [" + o.tier + "]") +
           (o.problem.empty() ? "" : " at " + o.problem) + ": " + o.reason + "\n";
  }
  out += "  " + std::to_string(ran) + " launch(es) ran and agreed, " + std::to_string(bad) +
         " problem(s)\n";
  return out;
}

std::string LaunchCheckReport::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const LaunchOutcome& o : outcomes) {
    list.push_back({{"variant", o.variant},
                    {"tier", o.tier},
                    {"problem", o.problem},
                    {"result", to_string(o.result)},
                    {"reason", o.reason},
                    {"ms", o.ms}});
  }
  nlohmann::json j = {{"family", family}, {"device", device},      {"seed", seed},
                      {"problems", problems}, {"ok", ok()}, {"launches", list}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

LaunchCheckReport check_launches(const cl::Context& context, const cl::Device& device,
                                 const Family& family, const LaunchCheckOptions& options) {
  const Manifest& m = family.manifest();
  if (!m.launch) {
    throw Error("family " + m.family + " carries no launch description (fatcl_add_kernel_variants"
                "' LAUNCH, fatcl-compile family --launch)");
  }
  const LaunchDescription& d = *m.launch;
  LaunchCheckReport report;
  report.family = m.family;
  report.device = DeviceCaps::query(device).summary();
  report.seed = options.seed ? options.seed : std::random_device{}();
  const std::vector<std::vector<long long>> problems =
      options.problems.empty() ? d.edge_problems(m.variants) : options.problems;
  report.problems = problems.size();
  // Relative, between variants: a float sum in another order differs by a
  // few ulps of its largest terms.
  bool doubles = false;
  for (const Arg& a : d.arguments) doubles |= compared(a) && a.type == ElementType::Double;
  const double tolerance = d.tolerance > 0 ? d.tolerance : doubles ? 1e-12 : 1e-5;
  std::vector<ProblemData> data;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    ProblemData p;
    p.problem = problems[i];
    p.index = i;
    p.text = problem_text(d, problems[i]);
    d.bind(m.variants.front(), p.problem);  // throws where the problem does not fit
    p.reference.resize(d.arguments.size());
    data.push_back(std::move(p));
  }
  std::vector<const Variant*> variants;
  for (const Variant& v : m.variants) {
    if (options.variant.empty() || v.name == options.variant) variants.push_back(&v);
  }
  if (variants.empty()) m.variant(options.variant);  // throws, naming the variants there are
  const cl::CommandQueue queue = queue_for(context, device);
  for (const Variant* v : variants) {
    LoadOptions load_options;
    load_options.variant = v->name;
    load_options.tier = options.tier;
    load_options.use_tuning = false;
    // A check remembers nothing: no verdicts in the user's store, no programs in the cache.
    load_options.store = std::make_shared<Store>();
    load_options.cache = std::make_shared<ProgramCache>();
    LoadedKernel k;
    try {
      k = load(context, device, family, load_options);
    } catch (const LoadFailure& e) {
      LaunchOutcome o;
      o.variant = v->name;
      o.result = LaunchOutcome::Result::Refused;
      for (const Step& s : e.explanation().steps) {
        if (s.outcome == Step::Outcome::Failed) o.result = LaunchOutcome::Result::Failed;
        const std::string tier = s.tier ? std::string(" [") + to_string(*s.tier) + "]" : "";
        o.reason += (o.reason.empty() ? "" : "; ") + std::string(to_string(s.outcome)) + tier +
                    ": " + s.reason;
      }
      report.outcomes.push_back(o);
      continue;
    }
    for (ProblemData& p : data) {
      report.outcomes.push_back(
          launch_once(context, queue, d, k, p, report.seed, tolerance, options));
    }
  }
  return report;
}

std::vector<SimulatorFinding> simulator_findings(std::string_view output) {
  std::vector<SimulatorFinding> out;
  std::vector<std::pair<std::string, SimulatorFinding>> kinds;  // by kind of report
  std::string launch;
  const std::vector<std::string_view> lines = split_lines(output);
  const std::string begin = std::string(kLaunchBegin) + " ", finish = std::string(kLaunchEnd);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string line(lines[i]);
    if (line.rfind(begin, 0) == 0) {
      launch = line.substr(begin.size());
      continue;
    }
    if (line.rfind(finish, 0) == 0) {
      launch.clear();
      continue;
    }
    // A report: a line at the margin after an empty one, its details
    // indented below it.
    const bool starts = !line.empty() && line[0] != '\t' && line[0] != ' ' && i > 0 &&
                        lines[i - 1].empty() && i + 1 < lines.size() &&
                        !lines[i + 1].empty() && lines[i + 1][0] == '\t';
    if (!starts) continue;
    std::string where;
    for (std::size_t j = i + 1; j < lines.size() && !lines[j].empty() && lines[j][0] == '\t';
         ++j) {
      const std::string detail(lines[j].substr(1));
      if (detail.rfind("At line ", 0) == 0 && where.empty()) {
        where = detail;
        if (j + 1 < lines.size() && lines[j + 1].size() > 1) {
          std::string code(lines[j + 1].substr(1));
          code.erase(0, code.find_first_not_of(" \t"));
          where += " " + code;
        }
      }
    }
    // Reports alike but for their addresses count as one kind.
    std::string kind;
    for (std::size_t c = 0; c < line.size(); ++c) {
      if (line.compare(c, 2, "0x") == 0) {
        c += 2;
        while (c < line.size() && std::isxdigit(static_cast<unsigned char>(line[c]))) ++c;
        kind += '#';
        --c;
      } else {
        kind += line[c];
      }
    }
    const std::size_t at_problem = launch.rfind(" at ");
    const std::string variant = launch.substr(0, at_problem);
    const std::string problem =
        at_problem == std::string::npos ? "" : launch.substr(at_problem + 4);
    auto same = [&](const std::pair<std::string, SimulatorFinding>& f) {
      return f.first == kind && f.second.launch == variant && f.second.where == where;
    };
    auto found = std::find_if(kinds.begin(), kinds.end(), same);
    if (found == kinds.end()) {
      kinds.push_back({kind, {variant, {}, line, where, 0}});
      found = kinds.end() - 1;
    }
    SimulatorFinding& f = found->second;
    ++f.count;
    if (!problem.empty() && std::find(f.problems.begin(), f.problems.end(), problem) ==
                                f.problems.end()) {
      f.problems.push_back(problem);
    }
  }
  for (auto& [kind, f] : kinds) out.push_back(std::move(f));
  return out;
}

}  // namespace fatcl
