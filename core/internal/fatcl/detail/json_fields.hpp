// Strict reading of the JSON documents fatcl parses (manifests, the store of
// tuning entries and outcomes): each field is there, of its type and within
// its bounds, or fatcl::Error says which field of which document is wrong.
// Nothing of nlohmann's own exceptions or of a bare .at() escapes. Internal:
// nlohmann_json is a private dependency of fatcl's libraries.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fatcl/error.hpp"

namespace fatcl::detail {

class JsonFields {
 public:
  using json = nlohmann::json;

  // Messages read "<document>: <where>: <what>", e.g. "manifest: variants[3]
  // (x): field "sha256" is missing".
  explicit JsonFields(std::string document) : document_(std::move(document)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error(document_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }

  // A value from the input, quoted and cut short for a message.
  static std::string shown(const std::string& text) {
    return "\"" + (text.size() > 60 ? text.substr(0, 60) + "...\" (" + std::to_string(text.size()) +
                                          " characters)"
                                    : text + "\"");
  }

  const json& field(const json& object, const char* key, const std::string& where) const {
    if (!object.is_object())
      fail(where, "is a " + std::string(object.type_name()) + ", not an object");
    auto it = object.find(key);
    if (it == object.end()) fail(where, std::string("field \"") + key + "\" is missing");
    return *it;
  }

  std::string text(const json& object, const char* key, const std::string& where,
                   std::size_t max = 4096) const {
    const json& value = field(object, key, where);
    if (!value.is_string()) {
      fail(where,
           std::string("field \"") + key + "\" is a " + value.type_name() + ", not a string");
    }
    std::string out = value.get<std::string>();
    if (out.size() > max) {
      fail(where, std::string("field \"") + key + "\" is " + std::to_string(out.size()) +
                      " characters long, more than " + std::to_string(max));
    }
    return out;
  }

  // A whole number from 0 to max: no sign, no fraction, no wrap-around.
  std::size_t whole(const json& value, const std::string& what, const std::string& where,
                    std::uint64_t max) const {
    if (value.is_number_float()) fail(where, what + " is " + value.dump() + ", not a whole number");
    if (value.is_number_integer() && !value.is_number_unsigned()) {
      fail(where, what + " is negative (" + value.dump() + ")");
    }
    if (!value.is_number_unsigned()) {
      fail(where, what + " is a " + std::string(value.type_name()) + ", not a number");
    }
    const std::uint64_t n = value.get<std::uint64_t>();
    if (n > max) {
      fail(where, what + " is " + std::to_string(n) + ", more than the " + std::to_string(max) +
                      " allowed");
    }
    return static_cast<std::size_t>(n);
  }
  std::size_t whole_field(const json& object, const char* key, const std::string& where,
                          std::uint64_t max) const {
    return whole(field(object, key, where), std::string("field \"") + key + "\"", where, max);
  }

  // A finite number >= 0 (a measured speed).
  double nonnegative(const json& object, const char* key, const std::string& where) const {
    const json& value = field(object, key, where);
    if (!value.is_number()) {
      fail(where,
           std::string("field \"") + key + "\" is a " + value.type_name() + ", not a number");
    }
    const double d = value.get<double>();
    if (!std::isfinite(d) || d < 0) {
      fail(where,
           std::string("field \"") + key + "\" is " + value.dump() + ", not a finite number >= 0");
    }
    return d;
  }

  const json& array(const json& object, const char* key, const std::string& where) const {
    const json& value = field(object, key, where);
    if (!value.is_array()) fail(where, std::string("field \"") + key + "\" is not an array");
    return value;
  }

  std::vector<std::string> strings(const json& object, const char* key,
                                   const std::string& where) const {
    std::vector<std::string> out;
    for (const json& e : array(object, key, where)) {
      if (!e.is_string()) fail(where, std::string("field \"") + key + "\" holds a non-string");
      out.push_back(e.get<std::string>());
    }
    return out;
  }

 private:
  std::string document_;
};

}  // namespace fatcl::detail
