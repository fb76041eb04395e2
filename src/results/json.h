// Inside results/: reading a results document's JSON into typed records,
// shared by the whole-tree reader (json_read.cpp) and the one-pass text
// reader (read_text.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/results/record.h"

namespace iolab::results::json_detail {

// A latency's source as results files name it (latency.source).
inline constexpr NameTable<LatencySource, 3> kLatencySourceCodes{{{LatencySource::EveryCall, "every_call"},
                                                                  {LatencySource::EveryRequest, "every_request"},
                                                                  {LatencySource::EveryOp, "every_op"}}};

using nlohmann::json;

// Reads typed values out of a results document, naming the file and the
// JSON path of anything missing or mistyped ("results[3].cpu.user_s").
class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& where, const std::string& why) const {
    throw Error("read results", source_, (where.empty() ? "" : where + ": ") + why, EINVAL);
  }
  const json* find(const json& obj, const std::string& where, const char* key) const {
    if (!obj.is_object()) fail(where, "expected an object");
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  std::string text(const json& obj, const std::string& where, const char* key, std::string fallback = "") const {
    const json* v = find(obj, where, key);
    if (!v) return fallback;
    if (!v->is_string()) fail(join(where, key), "expected a string");
    return v->get<std::string>();
  }
  double number(const json& obj, const std::string& where, const char* key, double fallback = 0) const {
    const json* v = find(obj, where, key);
    if (!v) return fallback;
    if (!v->is_number()) fail(join(where, key), "expected a number");
    double d = v->get<double>();
    if (!std::isfinite(d)) fail(join(where, key), "not a finite number");
    return d;
  }
  template <typename T>
  T integer(const json& obj, const std::string& where, const char* key, T fallback = 0) const {
    const json* v = find(obj, where, key);
    if (!v) return fallback;
    if (!v->is_number_integer()) fail(join(where, key), "expected an integer");
    if (v->is_number_unsigned()) {
      auto u = v->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) fail(join(where, key), "out of range");
      return static_cast<T>(u);
    }
    auto i = v->get<std::int64_t>();
    if (i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        (i > 0 && static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
      fail(join(where, key), "out of range");
    return static_cast<T>(i);
  }
  bool boolean(const json& obj, const std::string& where, const char* key, bool fallback = false) const {
    const json* v = find(obj, where, key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(join(where, key), "expected true or false");
    return v->get<bool>();
  }
  const json& object(const json& obj, const std::string& where, const char* key) const {
    static const json empty = json::object();
    const json* v = find(obj, where, key);
    if (!v) return empty;
    if (!v->is_object()) fail(join(where, key), "expected an object");
    return *v;
  }
  // A string parsed into an enum; the parser's complaint becomes this file's.
  template <typename Parse>
  auto parsed(const json& obj, const std::string& where, const char* key, Parse parse) const {
    std::string t = text(obj, where, key);
    try {
      return parse(t);
    } catch (const UsageError& e) {
      fail(join(where, key), "'" + t + "' is not understood (" + e.subject() + ")");
    }
  }
  static std::string join(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }

 private:
  std::string source_;
};

// One record of a document of schema `version`, found at JSON path `at`.
Result result_from_json(const Reader& rd, const json& x, const std::string& at, int version);
// Everything of a results file but its records, checked; `version_out` is its schema.
Results header_from_json(const Reader& rd, const json& j, int& version_out);

}  // namespace iolab::results::json_detail
