// How to launch a family's kernel, as its maker describes it: the problem's
// sizes, the geometry and the arguments as integer expressions over those
// sizes and a variant's parameters, and the extent one work-group covers in
// each size (its tile). fatcl_add_kernel_variants(... LAUNCH file.json)
// checks it against every variant and keeps it in the manifest; `fatcl
// launch` and `fatcl validate --oclgrind` run each variant with it at the
// tile edges of every variant (fatcl/launch.hpp, in the loader).
//
//   {"format": "fatcl-launch", "version": 1,
//    "problem": ["n"],
//    "edges": {"n": "64 * WPT * VW"},
//    "sizes": [[1000]],
//    "global": ["ceil_div(n, WPT * VW)"],
//    "local": ["64"],
//    "arguments": [
//      {"name": "n", "scalar": "int", "value": "n"},
//      {"name": "a", "scalar": "float", "value": "random"},
//      {"name": "x", "buffer": "float", "count": "n"},
//      {"name": "z", "buffer": "float", "count": "n", "access": "write"},
//      {"name": "tile", "local": "float", "count": "TILE * TILE"}],
//    "tolerance": 1e-6}
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fatcl/expression.hpp"

namespace fatcl {

struct Variant;

// The element types of buffers, local memory and scalars.
enum class ElementType { Char, UChar, Short, UShort, Int, UInt, Long, ULong, Float, Double };
const char* to_string(ElementType type);  // OpenCL C's name: "float", "uint"...
std::size_t size_of(ElementType type);
bool is_floating(ElementType type);

struct LaunchArgument {
  enum class Kind { Scalar, Buffer, Local };
  enum class Access { Read, Write, ReadWrite };
  Kind kind = Kind::Scalar;
  std::string name;  // for messages
  ElementType type = ElementType::Float;
  // Scalar: an integer expression, a number ("1.5") or "random" (uniform in
  // [-1, 1) for floating types, [0, 64) for integers).
  std::string value;
  // Buffer and Local: the count of elements, an expression.
  std::string count;
  // Buffer: read (filled, not compared), write (NaN-poisoned for floating
  // types, 0xA5 bytes for integers, then compared between variants) or
  // read_write (filled, then compared).
  Access access = Access::Read;
  // Buffer, read or read_write: "random" (as a scalar's), "zero", "index"
  // (element i holds i) or a number.
  std::string fill = "random";
};

struct LaunchDescription {
  static constexpr const char* kFormat = "fatcl-launch";
  static constexpr std::size_t kVersion = 1;

  std::vector<std::string> problem;              // the sizes' names, e.g. M, N, K
  std::vector<std::string> edges;                // per size: what one work-group covers
  std::vector<std::vector<long long>> sizes;     // more problems every variant runs
  std::vector<std::string> global;               // work-items per dimension (1 to 3)
  std::vector<std::string> local;                // none: reqd_work_group_size, else the driver's
  std::vector<LaunchArgument> arguments;         // in the kernel's order
  double tolerance = 0;  // relative, between variants; 0: 1e-5 (float), 1e-12 (double)

  // Parses a description strictly; throws fatcl::Error naming `origin`, the
  // field and the cause.
  static LaunchDescription parse(std::string_view json, const std::string& origin);
  // Deterministic JSON (sorted keys), what the manifest keeps.
  std::string dump() const;

  // The names an expression may use for `problem` on `variant`: the sizes,
  // then the variant's parameters. Throws fatcl::Error if the problem has
  // another number of sizes or a size below 1.
  Bindings bind(const Variant& variant, const std::vector<long long>& problem) const;
  // The problems at the tile edges of `variants`: every size 1; and for
  // each variant, each size one below its edge (at least 1) and one above
  // it (plus the size's index, so that sizes differ); then `sizes`. Sorted,
  // each once. Throws fatcl::Error naming the variant whose edges do not
  // evaluate to a whole number from 1 to 2^24.
  std::vector<std::vector<long long>> edge_problems(const std::vector<Variant>& variants) const;
  // Checks that every expression evaluates for every variant at its edge
  // problems (names known, no division by zero or overflow, sizes and counts
  // in range); throws fatcl::Error naming the variant, the field and why.
  void check(const std::vector<Variant>& variants) const;
  // The same for one variant at one problem (a run at sizes the build did
  // not check).
  void check_at(const Variant& variant, const std::vector<long long>& problem) const;
};

// "n=129" or "M=1 N=17 K=33": a problem for people.
std::string problem_text(const LaunchDescription& description,
                         const std::vector<long long>& problem);

}  // namespace fatcl
