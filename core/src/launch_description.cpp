#include "fatcl/launch_description.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "fatcl/detail/json_fields.hpp"
#include "fatcl/error.hpp"
#include "fatcl/manifest.hpp"
#include "fatcl/text.hpp"

namespace fatcl {
namespace {

using nlohmann::json;

constexpr long long kMaxSize = 1 << 24;           // one problem size
constexpr long long kMaxElements = 1ll << 31;     // one buffer
constexpr std::size_t kMaxExpression = 400;       // characters
constexpr std::size_t kMaxArguments = 64;
constexpr std::size_t kMaxSizesListed = 64;

struct TypeName {
  ElementType type;
  const char* name;
  std::size_t bytes;
};
constexpr TypeName kTypes[] = {
    {ElementType::Char, "char", 1},   {ElementType::UChar, "uchar", 1},
    {ElementType::Short, "short", 2}, {ElementType::UShort, "ushort", 2},
    {ElementType::Int, "int", 4},     {ElementType::UInt, "uint", 4},
    {ElementType::Long, "long", 8},   {ElementType::ULong, "ulong", 8},
    {ElementType::Float, "float", 4}, {ElementType::Double, "double", 8}};

// Messages read "<origin>: launch description: <where>: <what>".
const detail::JsonFields kLaunchFields("launch description");

std::string expression_field(const json& object, const char* key, const std::string& where,
                             const detail::JsonFields& f) {
  const std::string s = f.text(object, key, where, kMaxExpression);
  if (s.empty()) f.fail(where, std::string("field \"") + key + "\" is empty");
  return s;
}

std::vector<std::string> expressions(const json& object, const char* key, const std::string& where,
                                     const detail::JsonFields& f) {
  std::vector<std::string> out = f.strings(object, key, where);
  for (const std::string& s : out) {
    if (s.empty() || s.size() > kMaxExpression) {
      f.fail(where, std::string("field \"") + key + "\" holds an expression that is empty or " +
                        "longer than " + std::to_string(kMaxExpression) + " characters");
    }
  }
  return out;
}

ElementType element_type(const std::string& name, const std::string& where,
                         const detail::JsonFields& f) {
  for (const TypeName& t : kTypes) {
    if (name == t.name) return t.type;
  }
  f.fail(where, "type " + detail::JsonFields::shown(name) +
                    " is not one of char, uchar, short, ushort, int, uint, long, ulong, float, "
                    "double");
}


LaunchArgument parse_argument(const json& a, std::size_t index, const detail::JsonFields& f) {
  std::string where = "arguments[" + std::to_string(index) + "]";
  if (!a.is_object()) f.fail(where, "is not an object");
  LaunchArgument out;
  out.name = f.text(a, "name", where, 64);
  if (!is_identifier(out.name)) {
    f.fail(where, "field \"name\" is " + detail::JsonFields::shown(out.name) +
                      ", not a name of letters, digits and _");
  }
  where += " (" + out.name + ")";
  const int kinds =
      int(a.contains("scalar")) + int(a.contains("buffer")) + int(a.contains("local"));
  if (kinds != 1) {
    f.fail(where, "names its type in exactly one of \"scalar\", \"buffer\" and \"local\" (it has " +
                      std::to_string(kinds) + ")");
  }
  const char* kind = a.contains("scalar") ? "scalar" : a.contains("buffer") ? "buffer" : "local";
  out.kind = a.contains("scalar")   ? LaunchArgument::Kind::Scalar
             : a.contains("buffer") ? LaunchArgument::Kind::Buffer
                                    : LaunchArgument::Kind::Local;
  out.type = element_type(f.text(a, kind, where, 16), where, f);
  std::set<std::string> allowed{"name", kind};
  if (out.kind == LaunchArgument::Kind::Scalar) {
    out.value = expression_field(a, "value", where, f);
    allowed.insert("value");
  } else {
    out.count = expression_field(a, "count", where, f);
    allowed.insert("count");
  }
  if (out.kind == LaunchArgument::Kind::Buffer) {
    allowed.insert({"access", "fill"});
    if (a.contains("access")) {
      const std::string access = f.text(a, "access", where, 16);
      if (access == "read") {
        out.access = LaunchArgument::Access::Read;
      } else if (access == "write") {
        out.access = LaunchArgument::Access::Write;
      } else if (access == "read_write") {
        out.access = LaunchArgument::Access::ReadWrite;
      } else {
        f.fail(where, "field \"access\" is " + detail::JsonFields::shown(access) +
                          ", not read, write or read_write");
      }
    }
    if (a.contains("fill")) {
      if (out.access == LaunchArgument::Access::Write) {
        f.fail(where, "a written buffer is poisoned, not filled: \"fill\" goes with read or "
                      "read_write");
      }
      out.fill = f.text(a, "fill", where, 64);
      if (out.fill != "random" && out.fill != "zero" && out.fill != "index" &&
          !parse_number(out.fill)) {
        f.fail(where, "field \"fill\" is " + detail::JsonFields::shown(out.fill) +
                          ", not random, zero, index or a number");
      }
    }
  }
  for (const auto& [key, value] : a.items()) {
    if (!allowed.count(key)) {
      f.fail(where, "field \"" + key + "\" is not one a " + std::string(kind) + " argument has");
    }
  }
  return out;
}

}  // namespace

const char* to_string(ElementType type) {
  for (const TypeName& t : kTypes) {
    if (t.type == type) return t.name;
  }
  return "?";
}

std::size_t size_of(ElementType type) {
  for (const TypeName& t : kTypes) {
    if (t.type == type) return t.bytes;
  }
  return 0;
}

bool is_floating(ElementType type) {
  return type == ElementType::Float || type == ElementType::Double;
}

LaunchDescription LaunchDescription::parse(std::string_view text, const std::string& origin) {
  const detail::JsonFields& f = kLaunchFields;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(origin + ": not JSON: " + e.what());
  }
  try {
    if (!j.is_object()) f.fail("", "the top level is not an object");
    if (f.text(j, "format", "", 64) != kFormat) {
      f.fail("", std::string("\"format\" is not \"") + kFormat + "\"");
    }
    const std::size_t version = f.whole_field(j, "version", "", 1 << 20);
    if (version != kVersion) {
      f.fail("", "version " + std::to_string(version) + " is not the version " +
                     std::to_string(kVersion) + " this fatcl reads");
    }
    LaunchDescription d;
    d.problem = f.strings(j, "problem", "");
    if (d.problem.empty() || d.problem.size() > 8) {
      f.fail("", "\"problem\" names " + std::to_string(d.problem.size()) +
                     " sizes; a problem has 1 to 8");
    }
    for (std::size_t i = 0; i < d.problem.size(); ++i) {
      if (!is_identifier(d.problem[i]) || d.problem[i].size() > 64) {
        f.fail("problem", detail::JsonFields::shown(d.problem[i]) +
                              " is not a name of letters, digits and _");
      }
      if (std::find(d.problem.begin(), d.problem.begin() + i, d.problem[i]) !=
          d.problem.begin() + i) {
        f.fail("problem", "names " + d.problem[i] + " twice");
      }
    }
    const json& edges = f.field(j, "edges", "");
    if (!edges.is_object()) f.fail("", "\"edges\" is not an object of size: expression");
    for (const std::string& name : d.problem) {
      d.edges.push_back(expression_field(edges, name.c_str(), "edges", f));
    }
    for (const auto& [key, value] : edges.items()) {
      if (std::find(d.problem.begin(), d.problem.end(), key) == d.problem.end()) {
        f.fail("edges", "\"" + key + "\" is not a size the problem names");
      }
    }
    if (j.contains("sizes")) {
      const json& sizes = f.array(j, "sizes", "");
      if (sizes.size() > kMaxSizesListed) {
        f.fail("sizes", "lists " + std::to_string(sizes.size()) + " problems, more than " +
                            std::to_string(kMaxSizesListed));
      }
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const std::string where = "sizes[" + std::to_string(i) + "]";
        if (!sizes[i].is_array() || sizes[i].size() != d.problem.size()) {
          f.fail(where, "is not an array of " + std::to_string(d.problem.size()) +
                            " sizes (one per name in \"problem\")");
        }
        std::vector<long long> p;
        for (const json& s : sizes[i]) {
          const std::size_t n = f.whole(s, "a size", where, kMaxSize);
          if (n == 0) f.fail(where, "a size is 0");
          p.push_back(static_cast<long long>(n));
        }
        d.sizes.push_back(std::move(p));
      }
    }
    d.global = expressions(j, "global", "", f);
    if (d.global.empty() || d.global.size() > 3) {
      f.fail("", "\"global\" has " + std::to_string(d.global.size()) +
                     " dimensions; a launch has 1 to 3");
    }
    if (j.contains("local")) {
      d.local = expressions(j, "local", "", f);
      if (d.local.size() != d.global.size()) {
        f.fail("", "\"local\" has " + std::to_string(d.local.size()) + " dimensions, \"global\" " +
                       std::to_string(d.global.size()));
      }
    }
    const json& arguments = f.array(j, "arguments", "");
    if (arguments.empty() || arguments.size() > kMaxArguments) {
      f.fail("", "\"arguments\" lists " + std::to_string(arguments.size()) +
                     "; a kernel here takes 1 to " + std::to_string(kMaxArguments));
    }
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      d.arguments.push_back(parse_argument(arguments[i], i, f));
      for (std::size_t k = 0; k < i; ++k) {
        if (d.arguments[k].name == d.arguments[i].name) {
          f.fail("arguments[" + std::to_string(i) + "]", "the name " + d.arguments[i].name +
                                                             " is taken by arguments[" +
                                                             std::to_string(k) + "]");
        }
      }
    }
    if (j.contains("tolerance")) {
      d.tolerance = f.nonnegative(j, "tolerance", "");
      if (d.tolerance >= 1) {
        f.fail("", "\"tolerance\" is " + j["tolerance"].dump() + ", not below 1");
      }
    }
    for (const auto& [key, value] : j.items()) {
      static const std::set<std::string> known{"format", "version", "problem", "edges", "sizes",
                                               "global", "local", "arguments", "tolerance"};
      if (!known.count(key)) f.fail("", "field \"" + key + "\" is not one a description has");
    }
    return d;
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
}

std::string LaunchDescription::dump() const {
  json j = {{"format", kFormat}, {"version", kVersion}, {"problem", problem}, {"global", global}};
  json e = json::object();
  for (std::size_t i = 0; i < problem.size() && i < edges.size(); ++i) e[problem[i]] = edges[i];
  j["edges"] = e;
  if (!sizes.empty()) j["sizes"] = sizes;
  if (!local.empty()) j["local"] = local;
  if (tolerance > 0) j["tolerance"] = tolerance;
  json args = json::array();
  for (const LaunchArgument& a : arguments) {
    json o = {{"name", a.name}};
    switch (a.kind) {
      case LaunchArgument::Kind::Scalar:
        o["scalar"] = to_string(a.type);
        o["value"] = a.value;
        break;
      case LaunchArgument::Kind::Local:
        o["local"] = to_string(a.type);
        o["count"] = a.count;
        break;
      case LaunchArgument::Kind::Buffer:
        o["buffer"] = to_string(a.type);
        o["count"] = a.count;
        o["access"] = a.access == LaunchArgument::Access::Read    ? "read"
                      : a.access == LaunchArgument::Access::Write ? "write"
                                                                  : "read_write";
        if (a.access != LaunchArgument::Access::Write) o["fill"] = a.fill;
        break;
    }
    args.push_back(o);
  }
  j["arguments"] = args;
  return j.dump();
}

Bindings LaunchDescription::bind(const Variant& variant,
                                 const std::vector<long long>& problem_sizes) const {
  if (problem_sizes.size() != problem.size()) {
    throw Error("a problem of " + std::to_string(problem_sizes.size()) +
                " sizes where the launch description names " + std::to_string(problem.size()));
  }
  Bindings names;
  for (std::size_t i = 0; i < problem.size(); ++i) {
    if (problem_sizes[i] < 1 || problem_sizes[i] > kMaxSize) {
      throw Error("size " + problem[i] + " = " + std::to_string(problem_sizes[i]) +
                  " is not from 1 to " + std::to_string(kMaxSize));
    }
    names.emplace_back(problem[i], problem_sizes[i]);
  }
  for (const auto& [k, v] : variant.params) names.emplace_back(k, v);
  return names;
}

std::vector<std::vector<long long>> LaunchDescription::edge_problems(
    const std::vector<Variant>& variants) const {
  std::set<std::vector<long long>> out;
  out.insert(std::vector<long long>(problem.size(), 1));
  for (const Variant& v : variants) {
    Bindings names;
    for (const auto& [k, value] : v.params) names.emplace_back(k, value);
    std::vector<long long> below, above;
    for (std::size_t i = 0; i < problem.size(); ++i) {
      long long edge = 0;
      try {
        edge = evaluate(edges[i], names);
      } catch (const Error& e) {
        throw Error("variant " + v.name + ": edges." + problem[i] + ": " + e.what());
      }
      if (edge < 1 || edge > kMaxSize) {
        throw Error("variant " + v.name + ": edges." + problem[i] + " \"" + edges[i] + "\" is " +
                    std::to_string(edge) + ", not an extent from 1 to " +
                    std::to_string(kMaxSize));
      }
      below.push_back(std::max(1ll, edge - 1));
      above.push_back(std::min(kMaxSize, edge + 1 + static_cast<long long>(i)));
    }
    out.insert(below);
    out.insert(above);
  }
  for (const std::vector<long long>& s : sizes) out.insert(s);
  return {out.begin(), out.end()};
}

void LaunchDescription::check(const std::vector<Variant>& variants) const {
  const std::vector<std::vector<long long>> problems = edge_problems(variants);
  for (const Variant& v : variants) {
    for (const std::vector<long long>& p : problems) check_at(v, p);
  }
}

void LaunchDescription::check_at(const Variant& v, const std::vector<long long>& p) const {
  const Bindings names = bind(v, p);
  auto at = [&](const std::string& field, const std::string& expr, long long lo, long long hi) {
    long long value = 0;
    try {
      value = evaluate(expr, names);
    } catch (const Error& e) {
      throw Error("variant " + v.name + " at " + problem_text(*this, p) + ": " + field + ": " +
                  e.what());
    }
    if (value < lo || value > hi) {
      throw Error("variant " + v.name + " at " + problem_text(*this, p) + ": " + field + " \"" +
                  expr + "\" is " + std::to_string(value) + ", not from " + std::to_string(lo) +
                  " to " + std::to_string(hi));
    }
  };
  for (std::size_t d = 0; d < global.size(); ++d) {
    at("global[" + std::to_string(d) + "]", global[d], 1, kMaxElements);
    if (!local.empty()) at("local[" + std::to_string(d) + "]", local[d], 1, 1 << 16);
  }
  for (const LaunchArgument& a : arguments) {
    if (a.kind == LaunchArgument::Kind::Scalar) {
      if (a.value != "random" && !(is_floating(a.type) && parse_number(a.value))) {
        at("argument " + a.name, a.value, INT64_MIN, INT64_MAX);
      }
    } else {
      at("argument " + a.name + " count", a.count, 1, kMaxElements);
    }
  }
}

std::string problem_text(const LaunchDescription& description,
                         const std::vector<long long>& problem) {
  std::string out;
  for (std::size_t i = 0; i < problem.size(); ++i) {
    out += (out.empty() ? "" : " ") +
           (i < description.problem.size() ? description.problem[i] : "?") + "=" +
           std::to_string(problem[i]);
  }
  return out;
}

}  // namespace fatcl
