// The model's predictions and checks in the console's words (decision_prediction.h).
#include <fmt/format.h>

#include "common.h"
#include "iolab/base/units.h"
#include "iolab/report/decision_prediction.h"
#include "iolab/report/decision_text.h"

namespace iolab::report {

std::string predicted_cell_text(const PredictedCondition& p) {
  return "(" + short_label(visible(p.model.ranked.front().label)) + (p.model.within > 1 ? "~" : "") + ")";
}

std::string resample_text(const ModelRanking& r) {
  if (!r.resample_share) return "no resamples to say how sure";
  return fmt::format("the same pick in {} of {} resamples", format_percent(*r.resample_share), r.resamples);
}

namespace predict_text {

// "mmap 1.42x ahead of pread by the model, the same pick in 97% of 200 resamples"
std::string ranking_text(const ModelRanking& r) {
  std::string s = fmt::format("{} {}x ahead of {} by the model (its seconds per byte over the pick's), {}",
                              visible(r.ranked.front().label), sig(r.pick_over_next, 3), visible(r.ranked[1].label),
                              resample_text(r));
  if (r.within > 1) {
    s += "; within the zone of it:";
    for (std::size_t i = 1; i < r.within; ++i) s += fmt::format(" {}", visible(r.ranked[i].label));
  }
  return s;
}

}  // namespace predict_text

std::string prediction_explain_text(const decision::Decision& d, const DecisionPredictions& p) {
  std::string out;
  if (!p.predicted.empty()) {
    out += "\nPredicted, not measured (the cost model fitted on this decision's records, docs/report.md):\n";
    for (const auto& x : p.predicted) {
      out += fmt::format("  {} at {}: predicted {}, between the measured {} and {}; {}\n", row_label(x.condition.row),
                         exact_size(x.condition.size), visible(x.model.ranked.front().label), exact_size(x.from),
                         exact_size(x.to), predict_text::ranking_text(x.model));
      for (const auto& l : x.left_out) out += fmt::format("      {}: left out: {}\n", visible(l.label), visible(l.why));
    }
  }
  std::size_t differ = 0;
  std::string lines;
  for (const auto& k : p.checks) {
    if (k.agrees) continue;
    ++differ;
    const auto& c = d.conditions[k.condition];
    lines += fmt::format("  {} at {}: measured {}, the model picks {}{}; {}\n", row_label(c.condition.row),
                         exact_size(c.condition.size), visible(c.candidates[*c.pick].label),
                         visible(k.model.ranked.front().label),
                         k.within_measured_zone ? " (among the measured survivors within the zone)" : "",
                         predict_text::ranking_text(k.model));
  }
  if (!p.checks.empty())
    out += fmt::format("\nThe model asked at the measured sizes (a check of the model; the measurement stands): it picks "
                       "otherwise at {} of {} conditions{}\n{}",
                       differ, p.checks.size(), differ ? ":" : "", lines);
  return out;
}

}  // namespace iolab::report
