#include "fatcl/expression.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>

#include "fatcl/error.hpp"

namespace fatcl {
namespace {

// A recursive-descent evaluator over 64-bit integers with C's precedence:
// || && (== !=) (< <= > >=) (+ -) (* / %) unary(- !) primary, where a
// primary is a number, a name, a call or a parenthesised expression.
class Expression {
 public:
  Expression(std::string_view text, const Bindings& names, const std::string& what)
      : text_(text), names_(names), what_(what) {}

  long long evaluate() {
    const long long v = logical_or();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected \"" + rest() + "\"");
    return v;
  }

 private:
  std::string_view text_;
  const Bindings& names_;
  const std::string& what_;
  std::size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw Error(what_ + " \"" + std::string(text_) + "\": " + why + " (at character " +
                std::to_string(pos_ + 1) + ")");
  }
  std::string rest() const { return std::string(text_.substr(pos_, 10)); }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(const char* op) {
    skip_space();
    const std::size_t n = std::char_traits<char>::length(op);
    if (text_.compare(pos_, n, op) != 0) return false;
    // "<" must not take the first character of "<=", nor "!" of "!=".
    if (n == 1 && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=' &&
        (op[0] == '<' || op[0] == '>' || op[0] == '!' || op[0] == '=')) {
      return false;
    }
    pos_ += n;
    return true;
  }
  long long checked(long long a, long long b, char op) {
    long long r = 0;
    bool overflow = false;
    switch (op) {
      case '+':
        overflow = __builtin_add_overflow(a, b, &r);
        break;
      case '-':
        overflow = __builtin_sub_overflow(a, b, &r);
        break;
      case '*':
        overflow = __builtin_mul_overflow(a, b, &r);
        break;
      default:
        if (b == 0) fail(std::string("division by zero in '") + op + "'");
        if (a == std::numeric_limits<long long>::min() && b == -1) overflow = true;
        r = op == '/' ? a / b : a % b;
    }
    if (overflow) fail("integer overflow");
    return r;
  }
  long long logical_or() {
    long long v = logical_and();
    while (take("||")) {
      const long long r = logical_and();
      v = (v || r) ? 1 : 0;
    }
    return v;
  }
  long long logical_and() {
    long long v = equality();
    while (take("&&")) {
      const long long r = equality();
      v = (v && r) ? 1 : 0;
    }
    return v;
  }
  long long equality() {
    long long v = relation();
    for (;;) {
      if (take("==")) {
        v = v == relation();
      } else if (take("!=")) {
        v = v != relation();
      } else {
        return v;
      }
    }
  }
  long long relation() {
    long long v = sum();
    for (;;) {
      if (take("<=")) {
        v = v <= sum();
      } else if (take(">=")) {
        v = v >= sum();
      } else if (take("<")) {
        v = v < sum();
      } else if (take(">")) {
        v = v > sum();
      } else {
        return v;
      }
    }
  }
  long long sum() {
    long long v = product();
    for (;;) {
      if (take("+")) {
        v = checked(v, product(), '+');
      } else if (take("-")) {
        v = checked(v, product(), '-');
      } else {
        return v;
      }
    }
  }
  long long product() {
    long long v = unary();
    for (;;) {
      if (take("*")) {
        v = checked(v, unary(), '*');
      } else if (take("/")) {
        v = checked(v, unary(), '/');
      } else if (take("%")) {
        v = checked(v, unary(), '%');
      } else {
        return v;
      }
    }
  }
  long long unary() {
    if (take("-")) return checked(0, unary(), '-');
    if (take("!")) return unary() ? 0 : 1;
    return primary();
  }
  long long primary() {
    skip_space();
    if (take("(")) {
      const long long v = logical_or();
      if (!take(")")) fail("missing ')'");
      return v;
    }
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      long long v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        v = checked(checked(v, 10, '*'), text_[pos_] - '0', '+');
        ++pos_;
      }
      return v;
    }
    if (pos_ < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      const std::string name(text_.substr(start, pos_ - start));
      if (take("(")) return call(name, start);
      for (const auto& [k, v] : names_) {
        if (k == name) return v;
      }
      std::string known;
      for (const auto& [k, v] : names_) known += (known.empty() ? "" : ", ") + k;
      pos_ = start;
      fail("unknown name " + name + " (known: " + (known.empty() ? "none" : known) +
           "; functions: " + kFunctions + ")");
    }
    fail(pos_ < text_.size() ? "unexpected \"" + rest() + "\"" : "the expression ends too early");
  }
  // ceil_div(a, b), round_up(a, b), min(a, b), max(a, b).
  long long call(const std::string& function, std::size_t start) {
    const long long a = logical_or();
    if (!take(",")) fail(function + " takes two arguments: ',' expected");
    const long long b = logical_or();
    if (!take(")")) fail("missing ')' after " + function + "'s arguments");
    if (function == "min") return std::min(a, b);
    if (function == "max") return std::max(a, b);
    if (function == "ceil_div" || function == "round_up") {
      if (b <= 0) {
        fail(function + " divides by " + std::to_string(b) + " (it takes a divisor above 0)");
      }
      long long q = a / b;
      if (a % b > 0) ++q;  // C's division truncates: a negative a is rounded up already
      return function == "ceil_div" ? q : checked(q, b, '*');
    }
    pos_ = start;
    fail("unknown function " + function + " (functions: " + kFunctions + ")");
  }
  static constexpr const char* kFunctions = "ceil_div, round_up, min, max";
};

}  // namespace

long long evaluate(std::string_view expression, const Bindings& names, const std::string& what) {
  constexpr std::size_t kMaxExpression = 1000;
  if (expression.size() > kMaxExpression) {
    throw Error(what + ": " + std::to_string(expression.size()) +
                " characters is longer than the " + std::to_string(kMaxExpression) + " allowed");
  }
  return Expression(expression, names, what).evaluate();
}

}  // namespace fatcl
