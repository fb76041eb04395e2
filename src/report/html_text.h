// Internal: HTML that is safe by construction. Text from outside (results
// files, job files, command lines) reaches the page only through
// Html::text(), which escapes it; markup comes only from string literals in
// this layer's source (Literal's constructor is consteval, so a runtime
// string cannot pass for markup). A page is built from Html values alone.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "iolab/report/html.h"

namespace iolab::report {

// Markup written in the source: a string literal (or a constexpr string).
class Literal {
 public:
  consteval Literal(const char* markup) : markup_(markup) {}  // NOLINT: implicit on purpose
  const char* c_str() const noexcept { return markup_; }

 private:
  const char* markup_;
};

class Html {
 public:
  Html() = default;
  Html(Literal markup) : s_(markup.c_str()) {}  // NOLINT: implicit on purpose

  // Any text, shown as text: control characters made visible (visible()),
  // then & < > " ' escaped. Safe in element content and quoted attributes.
  static Html text(std::string_view text);
  // Data for a <script type="application/json"> element (script_json()).
  static Html script_data(const nlohmann::json& data);
  // What script_json() returned, kept aside (FamilySection::chart_json).
  static Html script_text(const std::string& serialized);
  // A chart bundle's JavaScript, without its source map comment. Throws
  // Error if it could close its <script> element (it never does: tested).
  static Html bundle_script(const ChartBundle& bundle);

  Html& operator+=(const Html& more) {
    s_ += more.s_;
    return *this;
  }
  Html& operator+=(Literal markup) {
    s_ += markup.c_str();
    return *this;
  }
  friend Html operator+(Html a, const Html& b) { return a += b; }
  friend Html operator+(Html a, Literal b) { return a += b; }
  friend Html operator+(Literal a, const Html& b) { return Html(a) += b; }

  const std::string& str() const noexcept { return s_; }
  std::string take() && noexcept { return std::move(s_); }
  std::size_t size() const noexcept { return s_.size(); }
  void reserve(std::size_t n) { s_.reserve(n); }
  bool empty() const noexcept { return s_.empty(); }

 private:
  struct Escaped {};  // only this class's factories build from a string
  Html(std::string escaped, Escaped) : s_(std::move(escaped)) {}
  std::string s_;
};

// Html::text(), shorter.
inline Html text(std::string_view t) { return Html::text(t); }
// A count as text.
inline Html number(std::size_t n) { return text(std::to_string(n)); }
// A table cell holding text; `num`: a figure, right-aligned.
inline Html td(std::string_view t, bool num = false) {
  return (num ? Html("<td class=\"num\">") : Html("<td>")) + text(t) + "</td>";
}

struct RunSection;
// A run's decision (model.h): the map coloured by method with the model's
// predicted cells, the safe choices, the seeds' rules (html_decision.cpp).
Html decision_html(const RunSection& run);

struct TraceSection;
// A replayed trace (model.h): its timeline's place and, when judged, the
// pick and each method's figures (trace_html.cpp).
Html trace_html(const TraceSection& t);

}  // namespace iolab::report
