// The decision's section of the HTML report (html_text.h): the map, the
// model's predicted cells between the measured sizes, the safe choices and
// the seeds' rules.
#include <algorithm>
#include <map>
#include <set>

#include "common.h"
#include "html_text.h"
#include "iolab/base/units.h"
#include "iolab/report/decision_prediction.h"
#include "iolab/report/decision_text.h"
#include "model.h"

namespace iolab::report {

// The decision's map: rows (op, flush, column) x packet sizes, each cell
// the pick coloured by method, the ratio over the best method ruled out and
// its interval on hover (title), "~" where others stood within the zone,
// "!" where the budget ended it.
// A cell the model predicts (decision_prediction.h): lighter and hatched, the
// model's ratio and resample share on hover; empty when it predicts none.
Html predicted_cell(const DecisionPredictions& p, const decision::Row& row, std::uint64_t size,
                    const std::map<std::string, const char*>& colour) {
  for (const auto& x : p.predicted) {
    if (!(x.condition.row == row) || x.condition.size != size) continue;
    const ModelRanking& m = x.model;
    std::string hover = "predicted by the model, not measured: " + m.ranked.front().label + " at " +
                        exact_size(size) + ", between the measured " + exact_size(x.from) + " and " + exact_size(x.to) +
                        "; " + sig(m.pick_over_next, 3) + "x ahead of " + m.ranked[1].label + ", " + resample_text(m);
    for (const auto& l : x.left_out) hover += "; " + l.label + " left out: " + l.why;
    return "<td class=\"predicted\" style=\"background-color:" + Html::text(colour.at(m.ranked.front().label)) +
           "\" title=\"" + text(hover) + "\">" + text(predicted_cell_text(x)) + "</td>";
  }
  return Html("<td></td>");
}

Html decision_html(const RunSection& run) {
  if (!run.decision) {
    if (!run.decision_problem.empty()) return "<p class=\"explain\">" + text(run.decision_problem) + "</p>";
    return Html("<p class=\"explain\">This run holds no decision: no method is ranked from records that were not "
                "measured side by side. <code>iolab recommend</code> measures one for every condition (about 10 "
                "minutes), or for your own in seconds (<code>iolab recommend --op write --bs 700 --flush "
                "every-16k</code>), and <code>iolab report</code> of its <code>--save</code> file draws it here.</p>");
  }
  const decision::Decision& d = *run.decision;
  if (d.conditions.empty())
    return Html("<p class=\"explain\">This run decided for replayed traces only (<code>iolab recommend "
                "--trace</code>): their picks are under Replayed traces. No condition of the design was measured.</p>");
  std::set<std::uint64_t> all;
  std::set<std::string> picked;
  for (const auto& c : d.conditions) {
    all.insert(c.condition.size);
    if (c.measured() && c.pick) picked.insert(c.candidates[*c.pick].label);
  }
  for (const auto& p : run.predictions.predicted) {
    all.insert(p.condition.size);
    picked.insert(p.model.ranked.front().label);
  }
  // A colour per method picked anywhere in the map, in the labels' order.
  static constexpr const char* kPalette[] = {"#cfe8fc", "#d7f5d0", "#ffe3b8", "#f6d0f2", "#fff4a8", "#d9d4fb",
                                             "#c9f0ec", "#ffd1d1", "#e6e6c8", "#dcebc2", "#f5dccb", "#d0e0e3"};
  std::map<std::string, const char*> colour;
  for (const auto& label : picked) colour[label] = kPalette[colour.size() % std::size(kPalette)];
  Html h("<table class=\"decision map\"><thead><tr><th>op</th><th>flush</th><th>column</th>");
  for (auto size : all) h += "<th>" + text(exact_size(size)) + "</th>";
  h += "</tr></thead><tbody>";
  for (const auto& row : d.rows) {
    h += "<tr>" + td(std::string(results::to_string(row.row.op))) +
         td(row.row.op == results::Op::Read ? "—" : row.row.flush) + td(std::string(decision::to_string(row.row.column)));
    for (auto size : all) {
      auto it = std::find_if(row.conditions.begin(), row.conditions.end(),
                             [&](std::size_t ci) { return d.conditions[ci].condition.size == size; });
      if (it == row.conditions.end()) {
        h += predicted_cell(run.predictions, row.row, size, colour);
        continue;
      }
      const decision::ConditionVerdict& c = d.conditions[*it];
      if (!c.measured() || !c.pick) {
        h += "<td class=\"nodata\" title=\"" + text(std::string(decision::to_string(c.stop)) + ": " + c.why) + "\">.</td>";
        continue;
      }
      const std::string& label = c.candidates[*c.pick].label;
      std::string hover = label + " at " + exact_size(c.condition.size);
      if (c.within.size() > 1) {
        hover += "; within " + sig(c.indifference, 3) + "x, not told apart:";
        for (std::size_t k = 1; k < c.within.size(); ++k) hover += " " + c.candidates[c.within[k]].label;
      }
      if (c.runner_up) {
        const auto& r = c.candidates[*c.runner_up].pick_over;
        hover += "; over " + c.candidates[*c.runner_up].label + " " + sig(r.estimate, 3) + "x" +
                 (r.available ? " (" + sig(r.lo, 3) + ".." + sig(r.hi, 3) + ", " + format_percent(r.coverage) +
                                    " interval, within this run)"
                              : "");
      }
      hover += "; " + std::string(decision::to_string(c.stop)) + " after " + std::to_string(c.rounds) + " rounds";
      std::string mark = short_label(label) + (c.within.size() > 1 ? "~" : "") + (c.stop == decision::Stop::Budget ? "!" : "");
      h += "<td class=\"pick\" style=\"background:" + Html::text(colour[label]) + "\" title=\"" + text(hover) + "\">" +
           text(mark) + "</td>";
    }
    h += "</tr>";
  }
  h += "</tbody></table><p class=\"explain\"><b>~</b> other methods within the zone (not told apart from the pick); "
       "<b>!</b> the budget ended it (the best so far); <b>.</b> not measured here (hover for why). " +
       (run.predictions.predicted.empty()
            ? Html()
            : Html("<b>(x)</b>, hatched: predicted by the cost model fitted on this decision's records, between the "
                   "measured sizes on each side; not measured, never counted as measured (hover for the model's "
                   "figures). ")) +
       text(procedure_text(d)) + "</p>";
  h += "<details><summary>Safe choice per row</summary><ul>";
  for (const auto& row : d.rows)
    if (row.safe)
      h += "<li>" + text(std::string(results::to_string(row.row.op)) + " " + row.row.flush + " " +
                         std::string(decision::to_string(row.row.column)) + ": " + row.safe->method + ", at worst " +
                         sig(row.safe->worst_ratio, 3) + "x behind the pick (at " + exact_size(row.safe->worst_at) + ")") +
           "</li>";
  h += "</ul></details>";
  if (!run.seed_rules.empty()) {
    h += "<table class=\"decision seeds\"><caption>The seeds' rules beside this run's picks, size by size</caption><thead><tr>"
         "<th>seed</th><th>seed says</th><th>row, sizes</th><th>this machine says</th><th>agrees?</th></tr></thead><tbody>";
    for (const auto& r : run.seed_rules) {
      const char* cls = r.agrees == "yes" ? "clear" : r.agrees == "no" || r.agrees == "partly" ? "unclear" : "nodata";
      h += "<tr>" + td(r.seed) + td(r.says + (r.expects.empty() ? "" : " (" + r.expects + ")")) +
           td(r.row.empty() ? "—" : r.row + " " + r.sizes) + td(r.machine) + "<td class=\"" + text(cls) + "\">" +
           text(r.agrees) + "</td></tr>";
    }
    h += "</tbody></table>";
  }
  return h;
}

}  // namespace iolab::report
