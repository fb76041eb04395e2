// libFuzzer target for the results-JSON reader that `report`, `compare` and
// `recommend` share, and for what each of them does with what it read: any
// bytes are either refused (not JSON, or an Error naming the source) or
// read into results that survive a write/read round trip unchanged and that
// compare, the decision replayed from them (or refused in one line) and the
// HTML report (chart bundles left out) process without crashing.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_check.h"
#include "iolab/base/error.h"
#include "iolab/base/input_file.h"
#include "iolab/results/record.h"
#include "iolab/report/compare.h"
#include "iolab/report/html.h"
#include "iolab/decision/verdict.h"
#include "iolab/report/decision_text.h"

using namespace iolab;

using iolab::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Nested too deep: read_results refuses it before parsing (results_from_text).
  if (json_nesting_depth(text) > kJsonMaxDepth) {
    try {
      (void)results::results_from_text(text, "fuzz.json");
      require(false);
    } catch (const UsageError& e) {
      require(std::string(e.what()).find("fuzz.json") != std::string::npos);
      require(std::string(e.what()).find('\n') == std::string::npos);  // one line
    }
    return 0;
  }
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // not JSON: read_results refuses it with an Error
  results::Results r;
  try {
    r = results::results_from_json(j, "fuzz.json");
  } catch (const Error& e) {
    require(std::string(e.what()).find("fuzz.json") != std::string::npos);
    return 0;
  }
  // What was read writes back to what reads back the same.
  std::string once = results::to_json(r).dump();
  results::Results again = results::results_from_json(nlohmann::json::parse(once), "round trip");
  require(results::to_json(again).dump() == once);
  // compare (two runs), recommend (the decision), report (HTML).
  report::Comparison c = report::compare(r, again);
  require(c.matched.size() + c.only_a.size() == r.results.size());
  (void)report::format_text(c, "a", "b");
  (void)report::format_markdown(c, "a", "b");
  if (decision::holds_decision(r.results)) {
    try {
      const decision::Decision d = decision::decision_from_records(r.results);
      (void)report::format_text(d, /*explain=*/true);
      (void)report::format_markdown(d);
      (void)decision::to_json(d).dump();
    } catch (const Error& e) {  // records that cannot be replayed: one line naming the cause
      require(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  std::string html = report::render_html_report({r});
  require(html.find("<html") != std::string::npos);
  return 0;
}
