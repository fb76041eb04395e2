#include "charts_commitlog.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common.h"

namespace iolab::report {

using nlohmann::json;

namespace {

// The page draws at most this many points per record: a longer series is
// shown as means over equal runs of seconds (the JSON keeps every second), so
// a 1 M-second series cannot make the page huge (issue 29 item 8).
constexpr std::size_t kMaxPointsPerRecord = 600;
// And at most this many rows in one panel, over all its records.
constexpr std::size_t kMaxRows = 20000;

// A finite, non-negative number from a series entry, or a negative when not.
double number(const json& entry, const char* key) {
  if (!entry.is_object()) return -1;
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_number()) return -1;
  double v = it->get<double>();
  return std::isfinite(v) && v >= 0 ? v : -1;
}

}  // namespace

void append_per_second_rows(const json& series, const char* required, const std::vector<SecondField>& fields,
                            const json& base, json& rows) {
  if (!series.is_array()) return;
  std::vector<const json*> usable;
  for (const json& s : series)
    if (number(s, "t") >= 0 && number(s, required) >= 0) usable.push_back(&s);
  // Seconds per drawn point: 1 when the series fits, else equal runs.
  std::size_t run = (usable.size() + kMaxPointsPerRecord - 1) / kMaxPointsPerRecord;
  if (run == 0) return;
  for (std::size_t from = 0; from < usable.size() && rows.size() < kMaxRows; from += run) {
    std::size_t to = std::min(usable.size(), from + run);
    json row = base;
    row["t"] = number(*usable[from], "t");
    for (const SecondField& field : fields) {
      double sum = 0, most = 0, last = -1;
      std::size_t n = 0;
      for (std::size_t k = from; k < to; ++k)
        if (double v = number(*usable[k], field.key); v >= 0) sum += v, most = std::max(most, v), last = v, ++n;
      switch (field.over) {
        case SecondField::Over::Mean: row[field.as] = n ? json(sum / static_cast<double>(n)) : json(nullptr); break;
        case SecondField::Over::Max: row[field.as] = most > 0 ? json(most) : json(nullptr); break;
        case SecondField::Over::Last: row[field.as] = n ? json(last) : json(nullptr); break;
      }
    }
    if (run > 1) row["seconds"] = to - from;
    rows.push_back(std::move(row));
  }
}

void add_per_second_panel(const Family& f, const std::vector<PointFacts>& points, json& spec) {
  json rows = json::array();
  const bool by_x = f.axis != Axis::None;
  for (std::size_t i = 0; i < f.points.size() && i < points.size(); ++i) {
    const results::Result& r = *f.points[i].result;
    auto it = r.extra.find("per_second");
    if (it == r.extra.end()) continue;
    // One line per record: colour by method (the family chart's colours),
    // dashes by the x value when the family has an axis.
    append_per_second_rows(*it, "messages",
                           {{"messages", "messages", SecondField::Over::Mean},
                            {"p99_ns", "p99", SecondField::Over::Max},  // the worst second of the run
                            {"mib", "mib", SecondField::Over::Mean}},
                           {{"series", visible(points[i].series)}, {"xl", visible(points[i].x_text)},
                            {"exp", visible(points[i].experiment)}},
                           rows);
  }
  if (rows.empty() || !spec.is_object() || !spec.contains("vconcat") || !spec["vconcat"].is_array()) return;

  // The same colour field and order as chart_spec's, so the two share one legend.
  json sort = json::array();
  for (const auto& name : f.series) sort.push_back(visible(name));
  json color{{"field", "series"}, {"type", "nominal"}, {"title", "method"}, {"sort", sort}};
  json x{{"field", "t"}, {"type", "quantitative"}, {"title", "second of the run"}};
  json tooltip = json::array({{{"field", "series"}, {"title", "method"}},
                              {{"field", "xl"}, {"title", by_x ? axis_title(f) : "point"}},
                              {{"field", "t"}, {"title", "second"}},
                              {{"field", "messages"}, {"title", "messages acknowledged"}, {"format", ",.0f"}},
                              {{"field", "mib"}, {"title", "MiB"}, {"format", ",.1f"}},
                              {{"field", "p99"}, {"title", "p99 append latency (ns)"}, {"format", ",.0f"}},
                              {{"field", "exp"}, {"title", "experiment"}}});
  json throughput{{"title", "Messages acknowledged per second"},
                  {"width", 270},
                  {"height", 170},
                  {"mark", {{"type", "line"}, {"point", true}}},
                  {"encoding", {{"x", x},
                                {"y", {{"field", "messages"}, {"type", "quantitative"}, {"title", "messages/s"}}},
                                {"color", color},
                                {"detail", {{"field", "xl"}}},
                                {"tooltip", tooltip}}}};
  json p99{{"title", "p99 append latency per second (log)"},
           {"width", 270},
           {"height", 170},
           {"transform", json::array({{{"filter", "isValid(datum.p99) && datum.p99 > 0"}}})},
           {"mark", {{"type", "line"}, {"point", true}}},
           {"encoding", {{"x", x},
                         {"y", {{"field", "p99"},
                                {"type", "quantitative"},
                                {"scale", {{"type", "log"}}},
                                {"title", "p99 (ms)"},
                                {"axis", {{"tickCount", 5}, {"labelExpr", "format(datum.value / 1e6, '~g')"}}}}},
                         {"color", color},
                         {"detail", {{"field", "xl"}}},
                         {"tooltip", tooltip}}}};
  if (by_x) {
    json dash{{"field", "xl"}, {"type", "nominal"}, {"title", axis_title(f)}};
    throughput["encoding"]["strokeDash"] = dash;
    p99["encoding"]["strokeDash"] = dash;
    // The latency panel dashes by percentile: its own scale, not a union with ours.
    spec["resolve"]["scale"]["strokeDash"] = "independent";
  }
  spec["vconcat"].push_back({{"data", {{"values", rows}}}, {"hconcat", json::array({throughput, p99})}});
}

}  // namespace iolab::report
