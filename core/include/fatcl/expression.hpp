// Integer C expressions over named whole numbers: what a family's
// CONSTRAINTs (fatcl_add_kernel_variants) and launch descriptions
// (fatcl/launch_description.hpp) are written in.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fatcl {

// Names bound to whole numbers: a variant's parameters, a problem's sizes.
using Bindings = std::vector<std::pair<std::string, long long>>;

// Evaluates `expression` over 64-bit integers with C's operators and
// precedence (|| && == != < <= > >= + - * / % and unary - !; / and %
// truncate as in C, comparisons give 0 or 1), names from `names`, and the
// functions ceil_div(a, b), round_up(a, b) (b above 0), min(a, b) and
// max(a, b). Throws fatcl::Error starting with `what` and the expression,
// saying why and at which character: an unknown name (the known ones
// listed), division by zero, integer overflow, a syntax error.
long long evaluate(std::string_view expression, const Bindings& names,
                   const std::string& what = "expression");

}  // namespace fatcl
