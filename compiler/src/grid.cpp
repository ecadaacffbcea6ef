// Parameter grids: the Cartesian product of parameter values plus explicit
// points, filtered by constraints written as integer C expressions
// ("MWG % MDIMC == 0", "4 * KWG * (MWG + 4) <= 32768").
#include <cctype>
#include <limits>
#include <set>

#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"

namespace fatcl {
namespace {

// A recursive-descent evaluator over 64-bit integers with C's precedence:
// || && (== !=) (< <= > >=) (+ -) (* / %) unary(- !) primary.
class Expression {
 public:
  Expression(const std::string& text, const ParamPoint& point) : text_(text), point_(point) {}

  long long evaluate() {
    const long long v = logical_or();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected \"" + text_.substr(pos_, 10) + "\"");
    return v;
  }

 private:
  const std::string& text_;
  const ParamPoint& point_;
  std::size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw Error("constraint \"" + text_ + "\": " + why + " (at character " +
                std::to_string(pos_ + 1) + ")");
  }
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
      const std::string name = text_.substr(start, pos_ - start);
      for (const auto& [k, v] : point_) {
        if (k == name) return v;
      }
      pos_ = start;
      fail("unknown parameter " + name);
    }
    fail(pos_ < text_.size() ? "unexpected \"" + text_.substr(pos_, 10) + "\""
                             : "the expression ends too early");
  }
};

std::string describe(const ParamPoint& point) {
  std::string out;
  for (const auto& [k, v] : point) out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return out;
}

}  // namespace

long long evaluate_constraint(const std::string& expression, const ParamPoint& point) {
  return Expression(expression, point).evaluate();
}

ParamPoint parse_point(const std::string& text) {
  ParamPoint point;
  std::string item;
  auto flush = [&] {
    if (item.empty()) return;
    const std::size_t eq = item.find('=');
    const std::string name = eq == std::string::npos ? item : item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (!is_identifier(name) || value.empty() || used != value.size()) {
      throw Error("point \"" + text + "\": \"" + item + "\" is not NAME=INTEGER");
    }
    for (const auto& [k, unused] : point) {
      if (k == name) throw Error("point \"" + text + "\": " + name + " is given twice");
    }
    point.emplace_back(name, v);
    item.clear();
  };
  for (char c : text) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      flush();
    } else {
      item += c;
    }
  }
  flush();
  if (point.empty()) throw Error("point \"" + text + "\" names no parameter");
  return point;
}

std::vector<ParamPoint> expand_grid(const ParamGrid& grid, std::size_t* dropped) {
  std::vector<ParamPoint> points;
  std::set<std::string> names;
  for (const auto& [name, values] : grid.params) {
    if (!is_identifier(name)) throw Error("parameter name \"" + name + "\" is not an identifier");
    if (!names.insert(name).second) throw Error("parameter " + name + " is given twice");
    if (values.empty()) throw Error("parameter " + name + " has no values");
  }
  if (!grid.params.empty()) {
    points.push_back({});
    for (const auto& [name, values] : grid.params) {
      std::vector<ParamPoint> next;
      for (const ParamPoint& p : points) {
        for (long long v : values) {
          ParamPoint q = p;
          q.emplace_back(name, v);
          next.push_back(std::move(q));
        }
      }
      points = std::move(next);
    }
  }
  std::size_t removed = 0;
  std::vector<ParamPoint> kept;
  for (const ParamPoint& p : points) {
    bool ok = true;
    for (const std::string& c : grid.constraints) ok = ok && evaluate_constraint(c, p) != 0;
    if (ok) {
      kept.push_back(p);
    } else {
      ++removed;
    }
  }
  // Explicit points must name the same parameters in the same order as each
  // other and the grid, and must meet every constraint: they were chosen.
  const ParamPoint* shape = kept.empty() ? nullptr : &kept.front();
  for (const ParamPoint& p : grid.points) {
    if (!shape && grid.params.empty()) shape = &p;
    std::vector<std::string> want, have;
    if (shape) {
      for (const auto& kv : *shape) want.push_back(kv.first);
    } else {
      for (const auto& kv : grid.params) want.push_back(kv.first);
    }
    for (const auto& kv : p) have.push_back(kv.first);
    if (have != want) {
      std::string w;
      for (const std::string& n : want) w += (w.empty() ? "" : " ") + n;
      throw Error("point \"" + describe(p) + "\" must name the parameters " + w +
                  ", in that order");
    }
    for (const std::string& c : grid.constraints) {
      if (evaluate_constraint(c, p) == 0) {
        throw Error("point \"" + describe(p) + "\" breaks the constraint \"" + c + "\"");
      }
    }
    for (const ParamPoint& q : kept) {
      if (q == p) throw Error("point \"" + describe(p) + "\" is listed twice");
    }
    kept.push_back(p);
  }
  if (dropped) *dropped = removed;
  return kept;
}

}  // namespace fatcl
