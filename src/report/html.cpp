#include "iolab/report/html.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <random>
#include <set>

#include "common.h"
#include "html_text.h"
#include "iolab/base/error.h"
#include "iolab/report/exporter.h"
#include "iolab/results/thresholds.h"
#include "iolab/report/decision_text.h"
#include "iolab/report/files.h"
#include "model.h"

namespace iolab::report {

Html Html::text(std::string_view t) { return Html(html_escape(visible(t)), Escaped{}); }

Html Html::script_data(const nlohmann::json& data) { return Html(script_json(data), Escaped{}); }

Html Html::script_text(const std::string& serialized) { return Html(serialized, Escaped{}); }

Html Html::bundle_script(const ChartBundle& bundle) {
  // Without its source map comment: nothing in the page refers outside the file.
  std::string_view js = bundle.text;
  if (auto map = js.rfind("\n//# sourceMappingURL="); map != std::string_view::npos) js = js.substr(0, map + 1);
  std::string lower(js);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("</script") != std::string::npos || lower.find("<!--") != std::string::npos)
    throw Error("embed chart bundle", std::string(bundle.name), "it contains </script or <!--", EINVAL);
  return Html(std::string(js), Escaped{});
}

namespace {

constexpr const char* kStyle = R"(
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1120px;padding:1em 1.5em;color:#222}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #ccc;margin-top:2em}h3{margin:1.6em 0 .4em}
.sub{color:#555}.family{margin-bottom:2em}.explain{max-width:60em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}caption{text-align:left;font-weight:600;padding:4px 0}
.env th{background:#f6f6f6;width:11em}.decision td.clear{background:#e8f5e9}.decision td.unclear{background:#fff8e1}
.decision td.nodata{color:#888}.decision td.predicted{color:#555;font-style:italic;background-image:repeating-linear-gradient(45deg,rgba(255,255,255,.75) 0 4px,transparent 4px 8px)}.warnings li,.skipped li{margin:.2em 0}.chart{min-height:40px}
details{margin:.4em 0}summary{cursor:pointer;color:#345}#iolab-errors{color:#b00}small{color:#666}
footer{margin-top:3em;color:#666;font-size:13px}
)";

// Installed before the bundles, so errors while they load are caught too.
constexpr const char* kErrorCapture = R"(
(function(){
  var list = [];
  function note(msg){
    list.push(String(msg));
    var ul = document.getElementById('iolab-errors');
    if (ul) { var li = document.createElement('li'); li.textContent = String(msg); ul.appendChild(li); }
    var st = document.getElementById('iolab-status');
    if (st) st.setAttribute('data-errors', String(list.length));
  }
  window.iolabNote = note;
  window.addEventListener('error', function(ev){ note('error: ' + (ev.message || ev.type)); });
  window.addEventListener('unhandledrejection', function(ev){ note('rejection: ' + (ev.reason && ev.reason.message || ev.reason)); });
  document.addEventListener('securitypolicyviolation', function(ev){ note('blocked by the page policy: ' + ev.blockedURI); });
  var warn = console.warn, err = console.error;
  console.warn = function(){ note('warning: ' + Array.prototype.join.call(arguments, ' ')); warn.apply(console, arguments); };
  console.error = function(){ note('error: ' + Array.prototype.join.call(arguments, ' ')); err.apply(console, arguments); };
})();
)";

constexpr const char* kRender = R"(
(function(){
  var st = document.getElementById('iolab-status');
  var charts = JSON.parse(document.getElementById('iolab-charts').textContent);
  if (typeof vegaEmbed !== 'function') { window.iolabNote('the chart library did not load'); return; }
  var drawn = 0;
  var jobs = charts.map(function(c){
    return vegaEmbed('#' + c.id, c.spec, {actions: false, renderer: 'svg'}).then(function(res){
      drawn++;
      document.getElementById(c.id).setAttribute('data-drawn', 'true');
      return res;
    }).catch(function(err){ window.iolabNote(c.id + ': ' + (err && err.message || err)); });
  });
  Promise.all(jobs).then(function(){
    st.setAttribute('data-rendered', String(drawn));
    st.textContent = drawn + ' of ' + charts.length + ' charts drawn';
  });
})();
)";


// A table cell of text, right-aligned when it is a figure.

Html figures_table(const FamilySection& fs) {
  const Family& f = fs.family;
  bool writes = std::any_of(fs.points.begin(), fs.points.end(), [](const PointFacts& p) { return !p.destination_t.empty(); });
  Html h("<table class=\"figures\"><thead><tr><th>method</th>");
  if (f.axis != Axis::None) h += "<th>" + text(axis_title(f)) + "</th>";
  h += "<th>median " + text(f.bytes_metric ? "MiB/s" : "ops/s") +
       "</th><th>slowest .. fastest</th><th>repetitions</th><th>time per pass / per op</th><th>latency p50 / p99</th><th>CPU</th><th>page faults</th>"
       "<th>I/O calls</th>";
  h += writes ? Html("<th>cache / where the bytes ended</th>") : Html("<th>cache</th>");
  if (fs.has_flushes) h += "<th>flushes</th>";
  h += "<th>verified</th>";
  if (fs.has_reference) h += "<th>published (theirs)</th>";
  h += "</tr></thead><tbody>";
  for (const auto& p : fs.points) {
    h += "<tr>" + td(p.series);
    if (f.axis != Axis::None) h += td(p.x_text);
    h += td(sig(p.rate, 3), true) + td(p.spread_t, true) + td(p.reps_t, true) + td(p.per_pass_t, true);
    h += p.latency_t.empty() ? td("—") : "<td class=\"num\">" + text(p.latency_t) + "<br><small>" + text(p.latency_source_t) + "</small></td>";
    h += td(p.cpu_t, true) + td(p.faults_t, true) + td(p.calls_t, true);
    h += td(p.destination_t.empty() ? p.cache_t : p.destination_t);
    if (fs.has_flushes) h += td(p.flushes_t);
    h += td(p.verified ? "yes" : "no");
    if (fs.has_reference) h += td(p.published_t);
    h += "</tr>";
  }
  h += "</tbody></table>";
  return h;
}

Html family_html(const FamilySection& fs, const std::string& suite) {
  const Family& f = fs.family;
  Html h = "<div class=\"family\"><h3>" + text(f.title) + "</h3>";
  std::string names;
  for (const auto& x : f.experiments) names += (names.empty() ? "" : "; ") + x;
  h += "<p class=\"sub\">" + text(f.experiments.size() == 1 ? "Experiment: " : "Experiments: ") + text(names) + "</p>";
  h += "<div class=\"chart\" id=\"" + text(fs.id) + "\" data-suite=\"" + text(suite) + "\"></div>";
  std::string sentences;
  for (const auto& s : fs.explanation) sentences += (sentences.empty() ? "" : " ") + s;
  h += "<p class=\"explain\">" + text(sentences) + "</p>";
  if (fs.has_reference)
    h += "<p class=\"sub\">◆ marks a figure published by the seed write-up (their machine, Java): a reference point, not a target.</p>";
  return h + "<details><summary>Figures</summary>" + figures_table(fs) + "</details></div>";
}

Html notes_html(const SuiteSection& s) {
  Html h;
  if (!s.warnings.empty()) {
    // Collapsed with counts in the summary: at small scales nearly every run is "too short".
    std::string counts;
    for (const auto& [kind, n] : s.warning_kinds) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    h += "<details class=\"warnings\"><summary>" +
         text("Warnings on " + std::to_string(s.warnings.size()) + " of " + std::to_string(s.records) + " records" +
              (counts.empty() ? "" : " (" + counts + ")")) +
         "</summary><ul class=\"warnings\">";
    for (const auto& n : s.warnings) h += "<li><b>" + text(n.record) + "</b>: " + text(n.text) + "</li>";
    h += "</ul></details>";
  }
  if (!s.skipped.empty()) {
    h += "<details class=\"skipped\" open><summary>Skipped here: " + number(s.skipped.size()) + "</summary><ul class=\"skipped\">";
    for (const auto& n : s.skipped) h += "<li><b>" + text(n.record) + "</b>: " + text(n.text) + "</li>";
    h += "</ul></details>";
  }
  return h;
}

// The cost model (docs/model.md): per (op, column, flush), each method's
// costs with their intervals, the leave-one-size-out errors and any term
// the residuals say is missing; then the crossovers and the validation.
Html cost_model_html(const RunSection& run) {
  if (!run.cost_model)
    return Html("<p class=\"explain\">No sweep in this run: no method was measured at 3 or more block sizes with "
                "the same op, cache state and flush policy.</p>");
  const CostModel& m = *run.cost_model;
  Html h("<table class=\"model\"><thead><tr><th>op</th><th>column</th><th>flush</th><th>method</th><th>per call</th>"
         "<th>byte term</th><th>per fault</th><th>per flush</th><th>per system call</th><th>per folio</th><th>leave-one-size-out error, median</th><th>p90</th>"
         "<th>sizes</th><th>missing term</th></tr></thead><tbody>");
  for (const auto& f : m.fits) {
    std::string cells[kCostTerms] = {"—", "—", "—", "—", "—", "—"};
    for (const auto& c : f.terms) cells[static_cast<std::size_t>(c.term)] = coefficient_text(c.term, c.seconds);
    h += "<tr>" + td(f.op) + td(f.column) + td(f.flush) + td(f.method);
    for (const auto& c : cells) h += td(c, true);
    h += td(f.loo_median_abs_error ? error_text(*f.loo_median_abs_error) : "—", true) +
         td(f.loo_p90_abs_error ? error_text(*f.loo_p90_abs_error) : "—", true) +
         td(bytes_text(f.sizes.front()) + ".." + bytes_text(f.sizes.back()) + " (" + std::to_string(f.sizes.size()) + ")") +
         td(f.missing ? missing_term_text(f) : "—") + "</tr>";
  }
  h += "</tbody></table><ul class=\"crossovers\">";
  if (m.crossovers.empty()) h += "<li>No crossover within the sizes both methods of a pair measured.</li>";
  for (const auto& c : m.crossovers) h += "<li>" + text(crossover_text(c)) + "</li>";
  h += "</ul><p class=\"explain\">Validation: " + text(validation_text(m.validation)) + ".</p>";
  return h;
}

Html environment_html(const RunSection& run) {
  Html h = "<table class=\"env\"><caption>" + text(run.label) + "</caption>";
  for (const auto& [k, v] : run.environment) h += "<tr><th>" + text(k) + "</th>" + td(v) + "</tr>";
  if (run.incomplete) h += "<tr><th>incomplete</th>" + td(*run.incomplete) + "</tr>";
  h += "</table>";
  return h;
}

std::string make_nonce() {
  std::random_device rd;
  std::string n;
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  for (int i = 0; i < 24; ++i) n += alphabet[rd() % 62];
  return n;
}

// Appends the page's body to `body` and the charts' JSON array (ids and
// specs, as the render script reads it) to `charts`.
void body_html(const ReportModel& m, Html& body, Html& charts) {
  body += "<h1>" + text(m.title) + "</h1>";
  std::size_t chart_count = 0;
  // {"id":...,"spec":...}, as one JSON array of them dumps: the spec was serialized by build_model.
  auto add_chart = [&](const std::string& id, const std::string& spec) {
    charts += (chart_count++ ? Html(",{\"id\":") : Html("{\"id\":")) + Html::script_data(id) + ",\"spec\":" +
              Html::script_text(spec) + "}";
  };
  // A section's part per run, headed by the run's label when there are several.
  auto per_run = [&](auto&& part) {
    for (const auto& run : m.runs) {
      if (m.runs.size() > 1) body += "<h3>" + text(run.label) + "</h3>";
      body += part(run);
    }
  };
  std::string from;
  for (std::size_t i = 0; i < m.runs.size(); ++i)
    from += (i ? ", " : "") + m.runs[i].label + (m.runs[i].created.empty() ? "" : " (" + m.runs[i].created + ")");
  body += "<p class=\"sub\">" +
          text(std::to_string(m.measured) + " experiments measured, " + std::to_string(m.skipped) + " skipped" +
               (m.unusable ? ", " + std::to_string(m.unusable) + " without usable figures" : "") + ", from " + from + ". ") +
          "Throughput is bytes moved per second of wall time, median over repetitions (MiB = 2<sup>20</sup> bytes); "
          "bars show the spread of single passes (the 5th to 95th percentile from 20 passes, else the slowest and "
          "fastest; files without per-pass times: the slowest and fastest repetition). A repetition is one or more "
          "passes of the workload (reading the file once, writing it once); counts are per pass. Every figure names its cache state, and every write "
          "where its bytes ended; details are in each chart's table.</p>";
  if (!m.suites.empty()) {
    body += "<nav><b>Suites:</b> ";
    for (std::size_t i = 0; i < m.suites.size(); ++i)
      body += (i ? Html(" · ") : Html()) + "<a href=\"#suite-" + number(i) + "\">" + text(m.suites[i].suite) + "</a>";
    body += " · <a href=\"#decision\">decision</a> · <a href=\"#model\">model</a> · <a href=\"#environment\">environment</a></nav>";
  }
  for (std::size_t si = 0; si < m.suites.size(); ++si) {
    const SuiteSection& suite = m.suites[si];
    body += "<section class=\"suite\" id=\"suite-" + number(si) + "\"><h2>Suite: " + text(suite.suite) + "</h2>";
    if (suite.families.empty()) body += "<p>No experiment of this suite produced figures here.</p>";
    for (const auto& f : suite.families) {
      body += family_html(f, suite.suite);
      add_chart(f.id, f.chart_json);
    }
    body += notes_html(suite) + "</section>";
  }

  body += "<section id=\"decision\"><h2>Decision: which method to use on this machine</h2>"
          "<p class=\"explain\">Per condition (an operation, a packet size, a flush policy, a cache column): the method "
          "picked by a designed, interleaved, sequential selection with a stated guarantee (docs/report.md). Reads "
          "have no flush policy; writes go to a fresh file, buffered or O_DIRECT; flush \"end\" is one flush after the "
          "last write.</p>";
  per_run(decision_html);
  const bool traces = std::any_of(m.runs.begin(), m.runs.end(), [](const RunSection& r) { return !r.traces.empty(); });
  if (traces) {
    body += "</section><section id=\"traces\"><h2>Replayed traces: which method serves this program</h2>"
            "<p class=\"explain\">A program's file I/O recorded by <code>iolab trace</code> and replayed through each "
            "method that can express it, every read and file verified (docs/replay.md). The timeline shows what the "
            "program did; the table, when <code>iolab recommend --trace</code> judged it, the pick with its guarantee "
            "and each method's figures.</p>";
    for (const auto& run : m.runs)
      for (const auto& t : run.traces) {
        body += trace_html(t);
        if (!t.chart_json.empty()) add_chart(t.id, t.chart_json);
      }
  }
  body += "</section><section id=\"model\"><h2>Model: why, in numbers</h2>"
          "<p class=\"explain\">Per method, op, cache column and flush policy, the time of a pass fitted as calls x "
          "c_call + bytes x c_byte + faults x c_fault + flushes x c_flush (robust, non-negative; 95% bootstrap intervals "
          "over the repetitions; docs/model.md). '—': a term the records cannot carry.</p>";
  per_run(cost_model_html);
  body += "</section><section id=\"environment\"><h2>Environment</h2>";
  for (const auto& run : m.runs) body += environment_html(run);
  body += "</section>";

  std::string versions;
  for (const auto& b : m.bundle_names) versions += (versions.empty() ? "" : ", ") + b;
  body += "<footer>Charts drawn by " + text(versions) +
          " (BSD-3-Clause), inlined in this file: it makes no network requests. <span id=\"iolab-status\" data-charts=\"" +
          number(chart_count) +
          "\" data-rendered=\"0\" data-errors=\"0\">charts not drawn (JavaScript off?)</span><ul id=\"iolab-errors\"></ul></footer>";
}

}  // namespace

std::string render_html_report(const std::vector<results::Results>& runs, const ReportOptions& options) {
  ReportModel model = build_model(runs, options);
  // One buffer for the page, appended to in order: no part is built apart and copied in, but
  // the charts' data, which follows the body.
  Html body, charts("[");
  body_html(model, body, charts);
  charts += "]";
  Html nonce = text(make_nonce());
  // The generator names iolab whatever the title: a later report may replace this page (output_files.h's rule).
  Html page("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"generator\" content=\"iolab\">");
  std::size_t bundles = 0;
  for (const auto& b : chart_bundles()) bundles += b.text.size() + 128;
  page.reserve(body.size() + charts.size() + bundles + 8192);
  // Nothing may load from outside the file; only our own scripts (nonce) run.
  page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'nonce-" + nonce +
          "' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:\">";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  page += "<title>" + text(model.title) + "</title><style>" + Html(kStyle) + "</style>";
  page += "<script nonce=\"" + nonce + "\">" + Html(kErrorCapture) + "</script>";
  page += "</head><body>";
  page += body;
  body = Html();
  page += "<script type=\"application/json\" id=\"iolab-charts\">";
  page += charts;
  charts = Html();
  page += "</script>\n";
  for (const auto& b : chart_bundles())
    page += "<script nonce=\"" + nonce + "\" data-bundle=\"" + text(b.name) + "\">" + Html::bundle_script(b) + "</script>\n";
  page += "<script nonce=\"" + nonce + "\">" + Html(kRender) + "</script></body></html>\n";
  return std::move(page).take();
}

void write_html_report(const std::vector<results::Results>& runs, const std::filesystem::path& out,
                       const ReportOptions& options) {
  write_file_atomically(out, render_html_report(runs, options), html_exporter());
}

}  // namespace iolab::report
