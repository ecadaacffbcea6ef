// Parameter grids: the Cartesian product of parameter values plus explicit
// points, filtered by constraints written as integer C expressions
// ("MWG % MDIMC == 0", "4 * KWG * (MWG + 4) <= 32768").
#include <cctype>
#include <limits>
#include <set>

#include "fatcl/compiler.hpp"
#include "fatcl/error.hpp"
#include "fatcl/expression.hpp"

namespace fatcl {
namespace {

std::string describe(const ParamPoint& point) {
  std::string out;
  for (const auto& [k, v] : point) out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return out;
}

}  // namespace

long long evaluate_constraint(const std::string& expression, const ParamPoint& point) {
  return evaluate(expression, point, "constraint");
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
