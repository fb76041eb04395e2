// A replayed trace in the HTML report (html_text.h's trace_html).
#include <algorithm>

#include "common.h"
#include "html_text.h"
#include "model.h"

namespace iolab::report {

Html trace_html(const TraceSection& t) {
  Html h = "<div class=\"family\"><h3>" + text("Trace " + t.name) + "</h3>";
  if (!t.chart_json.empty()) h += "<div class=\"chart\" id=\"" + text(t.id) + "\" data-suite=\"replay\"></div>";
  if (t.summary.empty())
    return h + "<p class=\"explain\">Replayed without a selection (iolab replay): its figures are in the replay suite's "
               "table; <code>iolab recommend --trace</code> picks a method for it with a guarantee.</p></div>";
  // The summary's lines, a paragraph each (text() shows a newline as an escape).
  for (std::size_t at = 0, end; at < t.summary.size(); at = end + 1) {
    end = std::min(t.summary.find('\n', at), t.summary.size());
    if (end > at) h += "<p class=\"explain\">" + text(t.summary.substr(at, end - at)) + "</p>";
  }
  std::vector<std::string> kinds;
  for (const auto& m : t.methods)
    for (const auto& [kind, _] : m.latency_by_kind.items())
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  std::sort(kinds.begin(), kinds.end());
  h += "<table class=\"decision trace\"><thead><tr><th>method</th><th>queue depth</th><th>ops/s</th><th>MiB/s</th><th>pick over it</th>";
  for (const auto& k : kinds) h += "<th>" + text(k + " p50 / p99") + "</th>";
  h += "<th>CPU per op</th><th>device bytes per op</th><th>verified</th></tr></thead><tbody>";
  for (const auto& m : t.methods) {
    if (!m.skipped.empty()) {
      h += "<tr>" + td(m.method) + "<td colspan=\"" + number(7 + kinds.size()) + "\">" + text("skipped: " + m.skipped) +
           "</td></tr>";
      continue;
    }
    h += m.pick ? Html("<tr class=\"pick\">") : Html("<tr>");
    h += td(m.method + (m.pick ? " (the pick)" : "")) + td(m.queue_depth ? std::to_string(m.queue_depth) : "—", true) +
         td(m.rounds ? sig(m.ops_per_s, 3) : "—", true) +
         td(m.bytes_per_s > 0 ? sig(m.bytes_per_s / (1024.0 * 1024.0), 3) : "—", true) +
         td(m.pick_over ? interval_text(*m.pick_over) : !m.withdrawn.empty() ? "withdrawn " + m.withdrawn : m.ruled_out);
    for (const auto& k : kinds) {
      auto l = m.latency_by_kind.find(k);
      h += td(l == m.latency_by_kind.end() ? "—"
                                           : duration_text(l->value("p50_ns", 0.0) / 1e9) + " / " +
                                                 duration_text(l->value("p99_ns", 0.0) / 1e9),
              true);
    }
    h += td(m.cpu_us_per_op >= 0 ? sig(m.cpu_us_per_op, 3) + " µs" : "—", true) +
         td(m.device_bytes_per_op >= 0 ? sig(m.device_bytes_per_op, 3) : "—", true) + td(m.verified ? "yes" : "no") +
         "</tr>";
  }
  return h + "</tbody></table></div>";
}

}  // namespace iolab::report
