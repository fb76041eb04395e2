#include "charts.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <string>
#include <utility>

#include "common.h"

namespace iolab::report {

using nlohmann::json;

json series_color(const Family& f) {
  return {{"field", "series"}, {"type", "nominal"}, {"title", "method"}, {"sort", f.series}};
}

json field_tooltip(std::initializer_list<std::pair<const char*, const char*>> fields) {
  json t = json::array();
  for (const auto& [field, title] : fields) t.push_back({{"field", field}, {"title", title}});
  return t;
}

json x_encoding(const Family& f, const std::vector<double>& xs) {
  json enc{{"field", "x"}, {"type", "quantitative"}, {"title", axis_title(f)}};
  bool pow2 = f.axis == Axis::BlockSize || f.axis == Axis::Threads || f.axis == Axis::TotalDepth ||
              f.axis == Axis::WorkingSetRatio;
  enc["scale"] = pow2 ? json{{"type", "log"}, {"base", 2}, {"nice", false}} : json{{"type", "log"}, {"nice", false}};
  // Ticks exactly at the measured sizes, thinned to about ten.
  std::vector<double> ticks;
  std::size_t step = (xs.size() + 9) / 10;
  for (std::size_t i = 0; i < xs.size(); i += step) ticks.push_back(xs[i]);
  json axis{{"values", ticks}, {"labelOverlap", "greedy"}, {"grid", true}};
  if (f.axis == Axis::BlockSize || (f.axis == Axis::WorkPerPass && f.bytes_metric))
    axis["labelExpr"] =
        "datum.value >= 1073741824 ? format(datum.value / 1073741824, '~g') + ' GiB' : "
        "datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB' : "
        "datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB' : format(datum.value, '~g') + ' B'";
  else if (f.axis == Axis::WorkingSetRatio)
    axis["labelExpr"] = "format(datum.value, '~g') + 'x'";
  else
    axis["labelExpr"] = "format(datum.value, '~s')";
  enc["axis"] = axis;
  return enc;
}

json duration_axis() {
  return {{"tickCount", 5},
          {"labelOverlap", "greedy"},
          {"labelExpr",
           "datum.value >= 1e9 ? format(datum.value / 1e9, '~g') + ' s' : datum.value >= 1e6 ? format(datum.value / 1e6, "
           "'~g') + ' ms' : datum.value >= 1e3 ? format(datum.value / 1e3, '~g') + ' µs' : format(datum.value, '~g') + ' ns'"}};
}

void make_visible(json& j) {
  if (j.is_string()) {
    // Printable ASCII is shown as it is (most of a spec's strings): copied only when it is not.
    std::string& s = j.get_ref<std::string&>();
    if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F; }))
      s = visible(s);
  } else if (j.is_array() || j.is_object())
    for (auto& v : j) make_visible(v);
}

namespace {

// stacked_spec's frame: the series named in the rows are `series`; data.values is left empty.
json charts_stacked_frame(const std::set<std::string>& series, json parts) {
  // Vega shows at most 30 entries of a legend (its symbolLimit) and drops the rest: 11 input
  // files of 3 methods each lost their last lines' names (issue 29 item 15). Every series is named.
  constexpr std::size_t kVegaSymbolLimit = 30;
  json legend{{"symbolOpacity", 1}};
  if (series.size() > kVegaSymbolLimit) legend["symbolLimit"] = series.size();
  json spec{{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
            {"data", {{"values", json::array()}}},
            {"vconcat", std::move(parts)},
            {"config", {{"font", "system-ui, sans-serif"},
                        {"view", {{"stroke", "#ddd"}}},
                        {"legend", std::move(legend)},
                        {"axisY", {{"tickCount", 6}}}}}};
  make_visible(spec);
  return spec;
}

}  // namespace

json stacked_spec(json rows, json parts) {
  std::set<std::string> series;
  for (const auto& row : rows)
    if (auto it = row.find("series"); it != row.end() && it->is_string()) series.insert(it->get<std::string>());
  json spec = charts_stacked_frame(series, std::move(parts));
  make_visible(rows);
  spec["data"]["values"] = std::move(rows);
  return spec;
}

namespace {

// The tooltip of a throughput point: every fact the row has.
json tooltip(const Family& f, bool flushes) {
  json t = json::array();
  t.push_back({{"field", "series"}, {"title", "method"}});
  if (f.axis != Axis::None) t.push_back({{"field", "xl"}, {"title", axis_title(f)}});
  t.push_back({{"field", "rate_t"}, {"title", "median"}});
  t.push_back({{"field", "spread_t"}, {"title", "spread"}});
  t.push_back({{"field", "reps_t"}, {"title", "repetitions"}});
  t.push_back({{"field", "per_pass_t"}, {"title", "time per pass / per op"}});
  t.push_back({{"field", "cpu_t"}, {"title", "CPU"}});
  t.push_back({{"field", "faults_t"}, {"title", "page faults"}});
  t.push_back({{"field", "calls_t"}, {"title", "I/O calls"}});
  t.push_back({{"field", "latency_t"}, {"title", "latency p50 / p99"}});
  t.push_back({{"field", "cache_t"}, {"title", "cache / bytes ended"}});
  if (flushes) t.push_back({{"field", "flushes_t"}, {"title", "flushes"}});
  t.push_back({{"field", "exp"}, {"title", "experiment"}});
  return t;
}

json latency_transform() {
  return json::array({{{"fold", {"p50", "p99", "p999"}}, {"as", {"pk", "ns"}}},
                      {{"filter", "isValid(datum.ns) && datum.ns > 0"}},
                      {{"calculate", "datum.pk == 'p999' ? 'p99.9' : datum.pk"}, {"as", "percentile"}}});
}

}  // namespace

namespace {

// JSON text as nlohmann's dump() writes it, for the rows of a chart (a report
// of many records has as many rows: they are not built as trees).
void charts_append_string(std::string& out, std::string_view raw) {
  // Printable ASCII is what visible() leaves as it is; else visible() first. Its output has no
  // control characters and is valid UTF-8: only '"' and '\' are escaped, as dump() does.
  bool plain = std::all_of(raw.begin(), raw.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
  std::string shown = plain ? std::string() : visible(raw);
  std::string_view s = plain ? raw : std::string_view(shown);
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}
void charts_append_number(std::string& out, std::optional<double> v) {
  out += v ? json(*v).dump() : "null";  // dump(): the shortest exact form; "null" when not finite
}

// One point's row: its members in the order dump() writes them (sorted by key).
void charts_append_row(std::string& out, const PointFacts& p) {
  auto text = [&](const char* key, std::string_view v) {
    out += key;
    charts_append_string(out, v);
    out += ',';
  };
  auto number = [&](const char* key, std::optional<double> v) {
    out += key;
    charts_append_number(out, v);
    out += ',';
  };
  out += '{';
  text("\"cache_t\":", p.destination_t.empty() ? p.cache_t : p.destination_t);
  text("\"calls_t\":", p.calls_t);
  number("\"cpu\":", p.cpu);
  text("\"cpu_t\":", p.cpu_t);
  text("\"exp\":", p.experiment);
  text("\"faults_t\":", p.faults_t);
  text("\"flushes_t\":", p.flushes_t);
  number("\"hi\":", p.fastest);
  text("\"latency_t\":", p.latency_t + (p.latency_source_t.empty() ? "" : " (" + p.latency_source_t + ")"));
  text("\"lk\":", p.latency_kind);
  number("\"lo\":", p.slowest);
  number("\"model\":", p.model);
  number("\"p50\":", p.p50);
  number("\"p99\":", p.p99);
  number("\"p999\":", p.p999);
  text("\"per_pass_t\":", p.per_pass_t);
  number("\"rate\":", p.rate);
  text("\"rate_t\":", p.rate_t);
  text("\"reps_t\":", p.reps_t);
  text("\"series\":", p.series);
  text("\"spread_t\":", p.spread_t);
  number("\"x\":", p.x);
  text("\"xl\":", p.x_text);
  out.back() = '}';
}

// `j` as dump() writes it, but the member at `path` (object keys) written as `text`.
void charts_dump_replacing(std::string& out, const json& j, const std::vector<std::string>& path, std::size_t depth,
                           std::string_view text) {
  auto dump = [](const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); };
  if (depth == path.size()) {
    out += text;
    return;
  }
  if (!j.is_object()) {
    out += dump(j);
    return;
  }
  out += '{';
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!first) out += ',';
    first = false;
    out += dump(json(it.key()));
    out += ':';
    if (it.key() == path[depth]) charts_dump_replacing(out, *it, path, depth + 1, text);
    else out += dump(*it);
  }
  out += '}';
}

}  // namespace

std::string chart_script_json(const ChartSpec& chart) {
  if (chart.values.empty()) return script_json(chart.spec);
  std::string out;
  charts_dump_replacing(out, chart.spec, {"data", "values"}, 0, chart.values);
  return script_safe(std::move(out));
}

ChartSpec chart_spec(const Family& f, const std::vector<PointFacts>& points) {
  std::string rows = "[";
  json refs = json::array();
  std::set<double> xset;
  std::set<std::string> series;
  bool any_cpu = false, any_flushes = false, any_model = false;
  // Latency of one call and of one queued request (submission to completion)
  // are different quantities: a panel each, never one axis.
  std::vector<std::string> latency_kinds;
  for (const auto& p : points) {
    xset.insert(p.x);
    series.insert(p.series);
    if (rows.size() > 1) rows += ',';
    charts_append_row(rows, p);
    any_flushes |= !p.flushes_t.empty();
    any_model |= p.model.has_value();
    if (p.p50 && std::find(latency_kinds.begin(), latency_kinds.end(), p.latency_kind) == latency_kinds.end())
      latency_kinds.push_back(p.latency_kind);
    any_cpu |= p.cpu > 0;
    if (p.published)
      refs.push_back({{"series", p.series}, {"x", p.x}, {"value", *p.published}, {"text", p.published_t}, {"xl", p.x_text}});
  }
  rows += ']';
  std::vector<double> xs(xset.begin(), xset.end());
  std::string y_unit = f.bytes_metric ? "MiB/s" : "ops/s";
  json color = series_color(f);
  json diamond{{"type", "point"}, {"shape", "diamond"}, {"filled", true}, {"size", 110}, {"color", "#222"}};
  std::string cpu_title = f.bytes_metric ? "CPU seconds per GiB" : "CPU µs per operation";
  std::string cpu_unit = f.bytes_metric ? "s/GiB (user+sys)" : "µs/op (user+sys)";

  json throughput, cpu;
  std::vector<json> latency;  // one panel per kind of latency sample
  auto latency_title = [&](const std::string& kind) {
    return "Latency per " + kind + ": p50, p99, p99.9 (log)";
  };
  auto latency_rows = [&](const std::string& kind) {
    json t = latency_transform();
    if (latency_kinds.size() > 1) t.insert(t.begin(), {{"filter", "datum.lk == '" + kind + "'"}});
    return t;
  };
  if (f.axis != Axis::None) {
    json x = x_encoding(f, xs);
    json y{{"field", "rate"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}},
           {"title", y_unit + " (median; bars: slowest..fastest pass)"}};
    json layers = json::array();
    layers.push_back({{"mark", {{"type", "rule"}, {"strokeWidth", 2}, {"opacity", 0.6}}},
                      {"encoding", {{"x", x}, {"y", {{"field", "lo"}, {"type", "quantitative"}}}, {"y2", {{"field", "hi"}}},
                                    {"color", color}}}});
    layers.push_back({{"mark", {{"type", "line"}, {"point", true}}},
                      {"encoding", {{"x", x}, {"y", y}, {"color", color}, {"tooltip", tooltip(f, any_flushes)}}}});
    if (any_model)  // dashed, per method: the cost model's rate at each measured size (docs/model.md)
      layers.push_back({{"transform", json::array({{{"filter", "isValid(datum.model)"}}})},
                        {"mark", {{"type", "line"}, {"strokeDash", {5, 4}}, {"strokeWidth", 1.5}}},
                        {"encoding", {{"x", x}, {"y", {{"field", "model"}, {"type", "quantitative"}}}, {"color", color},
                                      {"tooltip", json::array({{{"field", "series"}, {"title", "method"}},
                                                               {{"field", "xl"}, {"title", axis_title(f)}},
                                                               {{"field", "model"}, {"title", "cost model, " + y_unit},
                                                                {"format", ",.4~r"}}})}}}});
    if (!refs.empty())
      layers.push_back({{"data", {{"values", refs}}},
                        {"mark", diamond},
                        {"encoding", {{"x", x}, {"y", {{"field", "value"}, {"type", "quantitative"}}},
                                      {"tooltip", json::array({{{"field", "text"}, {"title", "published"}},
                                                               {{"field", "series"}, {"title", "our method"}},
                                                               {{"field", "xl"}, {"title", axis_title(f)}}})}}}});
    throughput = {{"title", any_model ? "Throughput (log-log; dashed: the cost model)" : "Throughput (log-log)"},
                  {"width", 560}, {"height", 260}, {"layer", layers}};
    for (const std::string& kind : latency_kinds)
      latency.push_back({{"title", latency_title(kind)},
                 {"width", 250},
                 {"height", 170},
                 {"transform", latency_rows(kind)},
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
                                                        {{"field", "ns"}, {"type", "quantitative"}, {"format", ",.0f"}},
                                                        {{"field", "latency_t"}, {"title", "latency"}}})}}}});
    if (any_cpu)
      cpu = {{"title", cpu_title + " (log)"},
             {"width", 250},
             {"height", 170},
             {"transform", json::array({{{"filter", "datum.cpu > 0"}}})},
             {"mark", {{"type", "line"}, {"point", true}}},
             {"encoding", {{"x", x},
                           {"y", {{"field", "cpu"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", cpu_unit}}},
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
                                    {"tooltip", tooltip(f, any_flushes)}}}});
    layers.push_back({{"mark", {{"type", "rule"}, {"color", "#222"}}},
                      {"encoding", {{"y", yname}, {"x", {{"field", "lo"}, {"type", "quantitative"}}}, {"x2", {{"field", "hi"}}}}}});
    if (!refs.empty())
      layers.push_back({{"data", {{"values", refs}}},
                        {"mark", diamond},
                        {"encoding", {{"y", yname}, {"x", {{"field", "value"}, {"type", "quantitative"}}},
                                      {"tooltip", json::array({{{"field", "text"}, {"title", "published"}}})}}}});
    throughput = {{"title", "Throughput"}, {"width", 560}, {"layer", layers}};
    for (const std::string& kind : latency_kinds)
      latency.push_back({{"title", latency_title(kind)},
                 {"width", 250},
                 {"transform", latency_rows(kind)},
                 {"mark", {{"type", "point"}, {"filled", true}}},
                 {"encoding", {{"y", yname},
                               {"x", {{"field", "ns"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", nullptr},
                                      {"axis", duration_axis()}}},
                               {"color", color},
                               {"shape", {{"field", "percentile"}, {"type", "nominal"}, {"sort", {"p50", "p99", "p99.9"}}}},
                               {"tooltip", json::array({{{"field", "series"}, {"title", "method"}},
                                                        {{"field", "percentile"}},
                                                        {{"field", "ns"}, {"type", "quantitative"}, {"format", ",.0f"}},
                                                        {{"field", "latency_t"}, {"title", "latency"}}})}}}});
    if (any_cpu)
      cpu = {{"title", cpu_title},
             {"width", 250},
             {"transform", json::array({{{"filter", "datum.cpu > 0"}}})},
             {"mark", {{"type", "bar"}}},
             {"encoding", {{"y", yname},
                           {"x", {{"field", "cpu"}, {"type", "quantitative"}, {"title", cpu_unit}}},
                           {"color", color},
                           {"tooltip", json::array({{{"field", "series"}, {"title", "method"}}, {{"field", "cpu_t"}, {"title", "CPU"}}})}}}};
  }
  json lower_row = json::array();
  for (json& panel : latency) lower_row.push_back(std::move(panel));
  if (!cpu.is_null()) lower_row.push_back(cpu);
  json parts = json::array({throughput});
  if (!lower_row.empty()) parts.push_back({{"hconcat", lower_row}});
  return {charts_stacked_frame(series, std::move(parts)), std::move(rows)};
}

}  // namespace iolab::report
