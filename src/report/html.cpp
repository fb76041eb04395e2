#include "iolab/report/html.h"
#include "iolab/harness/thresholds.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <optional>
#include <random>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common.h"
#include "explain.h"
#include "families.h"
#include "iolab/error.h"
#include "iolab/report/recommend.h"
#include "iolab/units.h"

namespace iolab::report {

using nlohmann::json;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string e(std::string_view s) { return html_escape(s); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A published figure in the chart's units (MiB/s or ops/s), when its unit converts.
std::optional<double> reference_value(const harness::Reference& ref, bool bytes_metric) {
  std::string u = lower(ref.unit);
  u.erase(std::remove(u.begin(), u.end(), ' '), u.end());
  if (bytes_metric) {
    if (u == "mib/s") return ref.value;
    if (u == "kib/s") return ref.value / 1024;
    if (u == "gib/s") return ref.value * 1024;
    if (u == "b/s" || u == "bytes/s") return ref.value / kMiB;
    if (u == "kb/s") return ref.value * 1e3 / kMiB;
    if (u == "mb/s") return ref.value * 1e6 / kMiB;
    if (u == "gb/s") return ref.value * 1e9 / kMiB;
    return std::nullopt;
  }
  if (u == "ops/s" || u == "op/s" || u == "calls/s") return ref.value;
  return std::nullopt;
}

std::string reference_text(const harness::Reference& ref) {
  return ref.source + ": " + sig(ref.value, 3) + " " + ref.unit + " (theirs)";
}

std::string cache_text(const harness::Result& r) {
  std::string t = r.cache ? harness::cache_name(r) : "n/a";
  if (!r.cache_method.empty()) t += " (" + r.cache_method + ")";
  if (r.resident_fraction) t += ", " + percent(*r.resident_fraction) + " resident";
  return t;
}

std::string calls_text(const harness::Result& r) {
  if (r.io_calls == 0) return "0";
  return grouped(r.io_calls) + " (" + duration_text(seconds_per_call(r)) + " each)";
}

json x_encoding(const Family& f, const std::vector<double>& xs) {
  json enc{{"field", "x"}, {"type", "quantitative"}, {"title", axis_title(f)}};
  bool pow2 = f.axis == Axis::BlockSize || f.axis == Axis::Threads;
  enc["scale"] = pow2 ? json{{"type", "log"}, {"base", 2}, {"nice", false}} : json{{"type", "log"}, {"nice", false}};
  // Ticks exactly at the measured sizes, thinned to about ten.
  std::vector<double> ticks;
  std::size_t step = (xs.size() + 9) / 10;
  for (std::size_t i = 0; i < xs.size(); i += step) ticks.push_back(xs[i]);
  json axis{{"values", ticks}, {"labelOverlap", "greedy"}, {"grid", true}};
  if (f.axis == Axis::BlockSize || (f.axis == Axis::Work && f.bytes_metric))
    axis["labelExpr"] =
        "datum.value >= 1073741824 ? format(datum.value / 1073741824, '~g') + ' GiB' : "
        "datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB' : "
        "datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB' : format(datum.value, '~g') + ' B'";
  else
    axis["labelExpr"] = "format(datum.value, '~s')";
  enc["axis"] = axis;
  return enc;
}

// Log axes of nanoseconds, labelled as durations, with few ticks.
json duration_axis() {
  return {{"tickCount", 5},
          {"labelOverlap", "greedy"},
          {"labelExpr",
           "datum.value >= 1e9 ? format(datum.value / 1e9, '~g') + ' s' : datum.value >= 1e6 ? format(datum.value / 1e6, "
           "'~g') + ' ms' : datum.value >= 1e3 ? format(datum.value / 1e3, '~g') + ' µs' : format(datum.value, '~g') + ' ns'"}};
}

json tooltip(const Family& f) {
  json t = json::array();
  t.push_back({{"field", "series"}, {"title", "method"}});
  if (f.axis != Axis::None) t.push_back({{"field", "xl"}, {"title", axis_title(f)}});
  t.push_back({{"field", "rate_t"}, {"title", "median"}});
  t.push_back({{"field", "spread_t"}, {"title", "spread"}});
  t.push_back({{"field", "cpu_t"}, {"title", "CPU"}});
  t.push_back({{"field", "faults_t"}, {"title", "page faults"}});
  t.push_back({{"field", "calls_t"}, {"title", "I/O calls"}});
  t.push_back({{"field", "cache_t"}, {"title", "cache"}});
  t.push_back({{"field", "exp"}, {"title", "experiment"}});
  return t;
}

json color_encoding(const Family& f) {
  return {{"field", "series"}, {"type", "nominal"}, {"title", "method"}, {"sort", f.series}};
}

// The Vega-Lite spec of one family: throughput (log-log) with the spread and
// the published figures, then latency percentiles and CPU per GiB.
json chart_spec(const Family& f) {
  json rows = json::array(), refs = json::array();
  std::set<double> xset;
  bool any_latency = false, any_cpu = false;
  for (const auto& p : f.points) {
    const harness::Result& r = *p.result;
    Rate rt = rate(r);
    harness::Summary s = r.seconds();
    xset.insert(p.x);
    json row{{"series", p.series},
             {"x", p.x},
             {"xl", x_text(f, p.x)},
             {"rate", rt.median},
             {"lo", rt.slowest},
             {"hi", rt.fastest},
             {"rate_t", sig(rt.median, 3) + (f.bytes_metric ? " MiB/s" : " ops/s")},
             {"spread_t", sig(rt.slowest, 3) + " .. " + sig(rt.fastest, 3) + " over " + std::to_string(s.n) +
                              " reps (cv " + percent(s.cv) + ")"},
             {"cpu_t", sig(r.user_s, 2) + " s user + " + sig(r.sys_s, 2) + " s sys per rep" +
                           (r.bytes ? "; " + sig(cpu_per_gib(r), 2) + " s/GiB" : "")},
             {"faults_t", grouped(static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.minor_faults))) + " minor, " +
                              grouped(static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.major_faults))) + " major"},
             {"calls_t", calls_text(r)},
             {"cache_t", cache_text(r)},
             {"exp", r.experiment}};
    if (r.latency_ns && r.latency_ns->p50 > 0) {
      any_latency = true;
      row["p50"] = r.latency_ns->p50;
      row["p99"] = r.latency_ns->p99;
      row["p999"] = r.latency_ns->p999;
    } else {
      row["p50"] = row["p99"] = row["p999"] = nullptr;
    }
    double cpu = f.bytes_metric ? cpu_per_gib(r) : (r.ops ? (r.user_s + r.sys_s) / static_cast<double>(r.ops) * 1e6 : 0);
    row["cpu"] = cpu;
    any_cpu |= cpu > 0;
    rows.push_back(row);
    if (r.reference) {
      if (auto v = reference_value(*r.reference, f.bytes_metric); v && *v > 0)
        refs.push_back({{"series", p.series}, {"x", p.x}, {"value", *v}, {"text", reference_text(*r.reference)},
                        {"xl", x_text(f, p.x)}});
    }
  }
  std::vector<double> xs(xset.begin(), xset.end());
  std::string y_unit = f.bytes_metric ? "MiB/s" : "ops/s";
  json color = color_encoding(f);

  json throughput, latency, cpu;
  if (f.axis != Axis::None) {
    json x = x_encoding(f, xs);
    json y{{"field", "rate"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}},
           {"title", y_unit + " (median; bars: slowest..fastest rep)"}};
    json layers = json::array();
    layers.push_back({{"mark", {{"type", "rule"}, {"strokeWidth", 2}, {"opacity", 0.6}}},
                      {"encoding", {{"x", x}, {"y", {{"field", "lo"}, {"type", "quantitative"}}}, {"y2", {{"field", "hi"}}},
                                    {"color", color}}}});
    layers.push_back({{"mark", {{"type", "line"}, {"point", true}}},
                      {"encoding", {{"x", x}, {"y", y}, {"color", color}, {"tooltip", tooltip(f)}}}});
    if (!refs.empty())
      layers.push_back({{"data", {{"values", refs}}},
                        {"mark", {{"type", "point"}, {"shape", "diamond"}, {"filled", true}, {"size", 110}, {"color", "#222"}}},
                        {"encoding", {{"x", x}, {"y", {{"field", "value"}, {"type", "quantitative"}}},
                                      {"tooltip", json::array({{{"field", "text"}, {"title", "published"}},
                                                               {{"field", "series"}, {"title", "our method"}},
                                                               {{"field", "xl"}, {"title", axis_title(f)}}})}}}});
    throughput = {{"title", "Throughput (log-log)"}, {"width", 560}, {"height", 260}, {"layer", layers}};
    if (any_latency)
      latency = {{"title", "Latency per call: p50, p99, p99.9 (log)"},
                 {"width", 250},
                 {"height", 170},
                 {"transform", json::array({{{"fold", {"p50", "p99", "p999"}}, {"as", {"pk", "ns"}}},
                                            {{"filter", "isValid(datum.ns) && datum.ns > 0"}},
                                            {{"calculate", "datum.pk == 'p999' ? 'p99.9' : datum.pk"}, {"as", "percentile"}}})},
                 {"mark", {{"type", "line"}, {"point", false}, {"strokeWidth", 1.5}}},
                 {"encoding", {{"x", x},
                               {"y", {{"field", "ns"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", nullptr},
                                      {"axis", duration_axis()}}},
                               {"color", color},
                               {"strokeDash", {{"field", "percentile"}, {"type", "nominal"}, {"sort", {"p50", "p99", "p99.9"}}}},
                               {"detail", {{"field", "percentile"}}},
                               {"tooltip", json::array({{{"field", "series"}, {"title", "method"}},
                                                        {{"field", "xl"}, {"title", axis_title(f)}},
                                                        {{"field", "percentile"}},
                                                        {{"field", "ns"}, {"type", "quantitative"}, {"format", ",.0f"}}})}}}};
    if (any_cpu)
      cpu = {{"title", f.bytes_metric ? "CPU seconds per GiB (log)" : "CPU µs per operation (log)"},
             {"width", 250},
             {"height", 170},
             {"transform", json::array({{{"filter", "datum.cpu > 0"}}})},
             {"mark", {{"type", "line"}, {"point", true}}},
             {"encoding", {{"x", x},
                           {"y", {{"field", "cpu"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}},
                                  {"title", f.bytes_metric ? "s/GiB (user+sys)" : "µs/op (user+sys)"}}},
                           {"color", color},
                           {"tooltip", json::array({{{"field", "series"}, {"title", "method"}},
                                                    {{"field", "xl"}, {"title", axis_title(f)}},
                                                    {{"field", "cpu_t"}, {"title", "CPU"}}})}}}};
  } else {
    // One point per method: bars.
    json yname{{"field", "series"}, {"type", "nominal"}, {"title", nullptr}, {"sort", f.series}};
    json layers = json::array();
    layers.push_back({{"mark", {{"type", "bar"}}},
                      {"encoding", {{"y", yname},
                                    {"x", {{"field", "rate"}, {"type", "quantitative"}, {"title", y_unit + " (median)"}}},
                                    {"color", color},
                                    {"tooltip", tooltip(f)}}}});
    layers.push_back({{"mark", {{"type", "rule"}, {"color", "#222"}}},
                      {"encoding", {{"y", yname}, {"x", {{"field", "lo"}, {"type", "quantitative"}}}, {"x2", {{"field", "hi"}}}}}});
    if (!refs.empty())
      layers.push_back({{"data", {{"values", refs}}},
                        {"mark", {{"type", "point"}, {"shape", "diamond"}, {"filled", true}, {"size", 110}, {"color", "#222"}}},
                        {"encoding", {{"y", yname}, {"x", {{"field", "value"}, {"type", "quantitative"}}},
                                      {"tooltip", json::array({{{"field", "text"}, {"title", "published"}}})}}}});
    throughput = {{"title", "Throughput"}, {"width", 560}, {"layer", layers}};
    if (any_latency)
      latency = {{"title", "Latency per call: p50, p99, p99.9 (log)"},
                 {"width", 250},
                 {"transform", json::array({{{"fold", {"p50", "p99", "p999"}}, {"as", {"pk", "ns"}}},
                                            {{"filter", "isValid(datum.ns) && datum.ns > 0"}},
                                            {{"calculate", "datum.pk == 'p999' ? 'p99.9' : datum.pk"}, {"as", "percentile"}}})},
                 {"mark", {{"type", "point"}, {"filled", true}}},
                 {"encoding", {{"y", yname},
                               {"x", {{"field", "ns"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", nullptr},
                                      {"axis", duration_axis()}}},
                               {"color", color},
                               {"shape", {{"field", "percentile"}, {"type", "nominal"}, {"sort", {"p50", "p99", "p99.9"}}}},
                               {"tooltip", json::array({{{"field", "series"}, {"title", "method"}},
                                                        {{"field", "percentile"}},
                                                        {{"field", "ns"}, {"type", "quantitative"}, {"format", ",.0f"}}})}}}};
    if (any_cpu)
      cpu = {{"title", f.bytes_metric ? "CPU seconds per GiB" : "CPU µs per operation"},
             {"width", 250},
             {"transform", json::array({{{"filter", "datum.cpu > 0"}}})},
             {"mark", {{"type", "bar"}}},
             {"encoding", {{"y", yname},
                           {"x", {{"field", "cpu"}, {"type", "quantitative"}, {"title", f.bytes_metric ? "s/GiB" : "µs/op"}}},
                           {"color", color},
                           {"tooltip", json::array({{{"field", "series"}, {"title", "method"}}, {{"field", "cpu_t"}, {"title", "CPU"}}})}}}};
  }
  json lower_row = json::array();
  if (!latency.is_null()) lower_row.push_back(latency);
  if (!cpu.is_null()) lower_row.push_back(cpu);
  json parts = json::array({throughput});
  if (!lower_row.empty()) parts.push_back({{"hconcat", lower_row}});
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"data", {{"values", rows}}},
          {"vconcat", parts},
          {"config", {{"font", "system-ui, sans-serif"},
                      {"view", {{"stroke", "#ddd"}}},
                      {"legend", {{"symbolOpacity", 1}}},
                      {"axisY", {{"tickCount", 6}}}}}};
}

std::string figures_table(const Family& f) {
  std::string h = "<table class=\"figures\"><thead><tr><th>method</th>";
  if (f.axis != Axis::None) h += "<th>" + e(axis_title(f)) + "</th>";
  h += fmt::format("<th>median {}</th><th>slowest .. fastest</th><th>cv</th><th>reps</th><th>latency p50 / p99</th>"
                   "<th>CPU user + sys</th><th>faults minor / major</th><th>I/O calls</th><th>cache</th><th>verified</th>"
                   "<th>published (theirs)</th></tr></thead><tbody>",
                   f.bytes_metric ? "MiB/s" : "ops/s");
  for (const auto& p : f.points) {
    const auto& r = *p.result;
    Rate rt = rate(r);
    harness::Summary s = r.seconds();
    h += "<tr><td>" + e(p.series) + "</td>";
    if (f.axis != Axis::None) h += "<td>" + e(x_text(f, p.x)) + "</td>";
    h += "<td class=\"num\">" + sig(rt.median, 3) + "</td><td class=\"num\">" + sig(rt.slowest, 3) + " .. " +
         sig(rt.fastest, 3) + "</td><td class=\"num\">" + percent(s.cv) + "</td><td class=\"num\">" + std::to_string(s.n) +
         "</td><td class=\"num\">" +
         (r.latency_ns ? duration_text(r.latency_ns->p50 * 1e-9) + " / " + duration_text(r.latency_ns->p99 * 1e-9)
                       : std::string("—")) +
         "</td><td class=\"num\">" + sig(r.user_s, 2) + " + " + sig(r.sys_s, 2) + " s</td><td class=\"num\">" +
         grouped(static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.minor_faults))) + " / " +
         grouped(static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.major_faults))) + "</td><td class=\"num\">" +
         e(calls_text(r)) + "</td><td>" + e(cache_text(r)) + "</td><td>" + (r.verified ? "yes" : "no") + "</td><td>" +
         (r.reference ? e(reference_text(*r.reference)) : std::string()) + "</td></tr>";
  }
  return h + "</tbody></table>";
}

std::string record_name(const harness::Result& r) {
  std::string s = method_label(r) + ", " + r.experiment;
  s += " (" + std::string(harness::to_string(r.op)) + (r.block_size ? " " + bytes_text(r.block_size) : "") + ")";
  return s;
}

std::string warnings_list(const SuiteView& suite, const std::vector<Source>& sources) {
  std::string items, skipped;
  std::size_t flagged = 0, skipped_count = 0;
  std::map<std::string, std::size_t> kinds;  // "too short", "noisy", ... -> records
  auto from = [&](std::size_t src) { return sources.size() > 1 ? " [" + sources[src].label + "]" : std::string(); };
  for (const auto& [r, src] : suite.records) {
    if (r->skipped) {
      skipped += "<li><b>" + e(record_name(*r) + from(src)) + "</b>: " + e(*r->skipped) + "</li>";
      ++skipped_count;
      continue;
    }
    // Warnings are grouped by their kind, never by their wording.
    std::vector<std::string> notes;
    for (const auto& w : r->warnings) {
      notes.push_back(w.text);
      ++kinds[std::string(harness::to_string(w.kind))];
    }
    // Files from elsewhere (or schema 1) may hold a "cold" figure whose file was not cold.
    if (r->cache == harness::CacheState::Cold && r->resident_fraction &&
        *r->resident_fraction > harness::thresholds::kColdResidentMax && !r->has_warning(harness::WarningKind::NotCold)) {
      notes.push_back("\"cold\" but " + percent(*r->resident_fraction) + " of the file was resident before a timed run");
      ++kinds["not_cold"];
    }
    if (measured(*r)) {
      harness::Summary s = r->seconds();
      if (s.n >= 2 && s.cv > 0.10 && !r->has_warning(harness::WarningKind::Outliers)) {
        notes.push_back("noisy: cv " + percent(s.cv) + " over " + std::to_string(s.n) + " repetitions");
        ++kinds["noisy"];
      }
      if (!r->verified && r->op == harness::Op::Read) {
        notes.push_back("data read was not verified");
        ++kinds["not verified"];
      }
    }
    if (notes.empty()) continue;
    ++flagged;
    std::string joined;
    for (const auto& n : notes) joined += (joined.empty() ? "" : "; ") + n;
    items += "<li><b>" + e(record_name(*r) + from(src)) + "</b>: " + e(joined) + "</li>";
  }
  // Collapsed with counts in the summary: at small scales nearly every run is "too short".
  std::string h;
  if (!items.empty()) {
    std::string counts;
    for (const auto& [kind, n] : kinds) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    h += "<details class=\"warnings\"><summary>Warnings on " + std::to_string(flagged) + " of " +
         std::to_string(suite.records.size()) + " records" + (counts.empty() ? "" : " (" + counts + ")") +
         "</summary><ul class=\"warnings\">" + items + "</ul></details>";
  }
  if (!skipped.empty())
    h += "<details class=\"skipped\" open><summary>Skipped here: " + std::to_string(skipped_count) +
         "</summary><ul class=\"skipped\">" + skipped + "</ul></details>";
  return h;
}

std::string environment_table(const harness::Environment& env, const std::string& label) {
  auto row = [](std::string_view k, const std::string& v) {
    return "<tr><th>" + e(k) + "</th><td>" + e(v.empty() ? "unknown" : v) + "</td></tr>";
  };
  std::string h = "<table class=\"env\"><caption>" + e(label) + "</caption>";
  h += row("host", env.hostname);
  h += row("CPU", env.cpu_model + (env.cores ? " (" + std::to_string(env.cores) + " cores)" : ""));
  h += row("RAM", env.ram_bytes ? bytes_text(env.ram_bytes) : "");
  h += row("kernel", env.kernel);
  h += row("scratch directory", env.scratch_dir);
  h += row("filesystem", env.fs_type + (env.mount_options.empty() ? "" : " (" + env.mount_options + ")"));
  h += row("device", env.device + (env.rotational ? (*env.rotational ? ", rotational" : ", not rotational") : "") +
                         (env.scheduler.empty() ? "" : ", scheduler " + env.scheduler));
  h += row("iolab", env.iolab_version + (env.build_type.empty() ? "" : ", " + env.build_type) +
                        (env.compiler.empty() ? "" : ", " + env.compiler));
  h += row("privileges", std::string(env.root ? "root" : "not root") +
                             (env.can_drop_caches ? ", can drop caches" : ", cannot drop caches (cold = fadvise)"));
  h += row("created", env.created);
  h += row("command", env.command);
  return h + "</table>";
}

std::string decision_html(const DecisionTable& table) {
  std::string h =
      "<table class=\"decision\"><thead><tr><th>op</th><th>packet size</th><th>flush</th><th>reads: warm cache<br>writes: "
      "to a fresh file</th><th>reads: cold cache or O_DIRECT</th></tr></thead><tbody>";
  for (const auto& c : table.cells) {
    if (c.cache != "warm") continue;
    const Cell* cold = table.find(c.op, c.band, c.flush, "cold");
    auto cell = [&](const Cell* x) {
      if (!x || (x->methods.empty() && x->op == "write" && x->cache == "cold"))
        return std::string("<td class=\"nodata\">") + (c.op == "write" ? "—" : "no data") + "</td>";
      std::string cls = x->clear ? "clear" : x->methods.empty() ? "nodata" : "unclear";
      return "<td class=\"" + cls + "\">" + html_escape(x->summary()) + "</td>";
    };
    h += "<tr><td>" + e(c.op) + "</td><td>" + e(to_string(c.band)) + "</td><td>" + e(c.op == "read" ? "—" : c.flush) +
         "</td>" + cell(&c) + cell(cold) + "</tr>";
  }
  return h + "</tbody></table>";
}

std::string make_nonce() {
  std::random_device rd;
  std::string n;
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  for (int i = 0; i < 24; ++i) n += alphabet[rd() % 62];
  return n;
}

constexpr const char* kStyle = R"(
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1120px;padding:1em 1.5em;color:#222}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #ccc;margin-top:2em}h3{margin:1.6em 0 .4em}
.sub{color:#555}.family{margin-bottom:2em}.explain{max-width:60em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}caption{text-align:left;font-weight:600;padding:4px 0}
.env th{background:#f6f6f6;width:11em}.decision td.clear{background:#e8f5e9}.decision td.unclear{background:#fff8e1}
.decision td.nodata{color:#888}.warnings li,.skipped li{margin:.2em 0}.chart{min-height:40px}
details{margin:.4em 0}summary{cursor:pointer;color:#345}#iolab-errors{color:#b00}
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

}  // namespace

std::string render_html_report(const std::vector<harness::Results>& runs, const ReportOptions& options) {
  std::vector<Source> sources;
  for (std::size_t i = 0; i < runs.size(); ++i)
    sources.push_back({&runs[i], i < options.source_names.size() && !options.source_names[i].empty()
                                     ? options.source_names[i]
                                     : "run " + std::to_string(i + 1)});
  std::vector<SuiteView> suites = group_results(sources);
  std::string nonce = make_nonce();

  std::size_t measured_count = 0, skipped_count = 0;
  for (const auto& run : runs)
    for (const auto& r : run.results) (r.skipped ? skipped_count : measured_count) += measured(r) || r.skipped ? 1 : 0;

  std::string body;
  body += "<h1>" + e(options.title) + "</h1>";
  body += "<p class=\"sub\">" + std::to_string(measured_count) + " experiments measured, " + std::to_string(skipped_count) +
          " skipped, from ";
  for (std::size_t i = 0; i < sources.size(); ++i)
    body += (i ? ", " : "") + std::string("<b>") + e(sources[i].label) + "</b>" +
            (runs[i].environment.created.empty() ? "" : " (" + e(runs[i].environment.created) + ")");
  body += ". Throughput is bytes moved per second of wall time, median over repetitions (MiB = 2<sup>20</sup> bytes); "
          "bars show the slowest and fastest repetition. Every figure names its cache state; details are in each "
          "chart's table.</p>";
  if (!suites.empty()) {
    body += "<nav><b>Suites:</b> ";
    for (std::size_t i = 0; i < suites.size(); ++i)
      body += (i ? " · " : "") + std::string("<a href=\"#suite-") + std::to_string(i) + "\">" + e(suites[i].suite) + "</a>";
    body += " · <a href=\"#decision\">decision table</a> · <a href=\"#environment\">environment</a></nav>";
  }

  json charts = json::array();
  std::size_t family_index = 0;
  for (std::size_t si = 0; si < suites.size(); ++si) {
    const SuiteView& suite = suites[si];
    body += "<section class=\"suite\" id=\"suite-" + std::to_string(si) + "\"><h2>Suite: " + e(suite.suite) + "</h2>";
    if (suite.families.empty()) body += "<p>No experiment of this suite produced figures here.</p>";
    for (const auto& f : suite.families) {
      std::string id = "chart-" + std::to_string(family_index++);
      body += "<div class=\"family\"><h3>" + e(f.title) + "</h3>";
      std::vector<std::string> experiments;
      for (const auto& p : f.points)
        if (std::find(experiments.begin(), experiments.end(), p.result->experiment) == experiments.end())
          experiments.push_back(p.result->experiment);
      std::string names;
      for (const auto& x : experiments) names += (names.empty() ? "" : "; ") + x;
      body += "<p class=\"sub\">" + std::string(experiments.size() == 1 ? "Experiment: " : "Experiments: ") + e(names) + "</p>";
      body += "<div class=\"chart\" id=\"" + id + "\" data-suite=\"" + e(suite.suite) + "\"></div>";
      std::string text;
      for (const auto& s : explain(f)) text += (text.empty() ? "" : " ") + s;
      body += "<p class=\"explain\">" + e(text) + "</p>";
      bool has_ref = std::any_of(f.points.begin(), f.points.end(), [](const Point& p) { return p.result->reference.has_value(); });
      if (has_ref) body += "<p class=\"sub\">◆ marks a figure published by the seed write-up (their machine, Java): a reference point, not a target.</p>";
      body += "<details><summary>Figures</summary>" + figures_table(f) + "</details></div>";
      charts.push_back({{"id", id}, {"spec", chart_spec(f)}});
    }
    body += warnings_list(suite, sources);
    body += "</section>";
  }

  body += "<section id=\"decision\"><h2>Decision table: which method to use on this machine</h2>"
          "<p class=\"explain\">For each operation, packet size, flush policy and cache state: the method ahead of every "
          "method it met (geometric mean of median-throughput ratios where both ran at the same size, file and pattern), "
          "its margin over its closest competitor, and the margin at worst: the winner's slowest repetition against the "
          "competitor's fastest, at the least favourable condition. The winner is clear only when even that is above 1. "
          "Reads have no flush policy; writes go to a fresh file, buffered or O_DIRECT.</p>";
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (sources.size() > 1) body += "<h3>" + e(sources[i].label) + "</h3>";
    body += decision_html(decide(runs[i].results));
  }
  body += "</section>";

  body += "<section id=\"environment\"><h2>Environment</h2>";
  for (std::size_t i = 0; i < sources.size(); ++i) body += environment_table(runs[i].environment, sources[i].label);
  body += "</section>";

  std::string versions;
  for (const auto& b : chart_bundles()) versions += (versions.empty() ? "" : ", ") + std::string(b.name);
  body += "<footer>Charts drawn by " + e(versions) +
          " (BSD-3-Clause), inlined in this file: it makes no network requests. <span id=\"iolab-status\" "
          "data-charts=\"" + std::to_string(charts.size()) +
          "\" data-rendered=\"0\" data-errors=\"0\">charts not drawn (JavaScript off?)</span><ul id=\"iolab-errors\"></ul></footer>";

  std::string page;
  page.reserve(1 << 20);
  page += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  // Nothing may load from outside the file; only our own scripts (nonce) run.
  page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'nonce-" + nonce +
          "' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:\">";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  page += "<title>" + e(options.title) + "</title><style>" + kStyle + "</style>";
  page += "<script nonce=\"" + nonce + "\">" + kErrorCapture + "</script>";
  page += "</head><body>" + body;
  page += "<script type=\"application/json\" id=\"iolab-charts\">" + script_json(charts) + "</script>\n";
  for (const auto& b : chart_bundles()) {
    page += "<script nonce=\"" + nonce + "\" data-bundle=\"" + std::string(b.name) + "\">";
    // Without its source map comment: nothing in the page refers outside the file.
    std::string_view text = b.text;
    if (auto map = text.rfind("\n//# sourceMappingURL="); map != std::string_view::npos) text = text.substr(0, map + 1);
    page += text;
    page += "</script>\n";
  }
  page += "<script nonce=\"" + nonce + "\">" + kRender + "</script></body></html>\n";
  return page;
}

void write_html_report(const std::vector<harness::Results>& runs, const std::filesystem::path& out,
                       const ReportOptions& options) {
  std::string page = render_html_report(runs, options);
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("write report", out.string(), errno);
  f.write(page.data(), static_cast<std::streamsize>(page.size()));
  f.close();
  if (!f) throw Error("write report", out.string(), errno ? errno : EIO);
}

}  // namespace iolab::report
