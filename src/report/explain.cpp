#include "explain.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common.h"

namespace iolab::report {

namespace {

// A record's median in the family's unit (a family may count operations of records that moved bytes).
std::string rate_text(const Family& f, const results::Result& r) {
  return f.bytes_metric ? sig(rate(r).median, 3) + " MiB/s" : sig(ops_rate(r).median, 3) + " ops/s";
}

// What a record spent its time on, per pass of the workload: page faults
// for mapped access, else calls.
std::string mechanism(const results::Result& r, const std::string& label) {
  auto per_pass_count = [&](double per_repetition) { return count(per_pass(r, per_repetition)); };
  double calls = static_cast<double>(r.io_calls ? r.io_calls : r.ops);
  double minor = static_cast<double>(std::max<std::int64_t>(0, r.minor_faults));
  double major = static_cast<double>(std::max<std::int64_t>(0, r.major_faults));
  std::string pass = passes(r) > 1 ? " per pass" : "";
  if (minor + major > static_cast<double>(r.io_calls) && minor > 0) {
    std::string out = label + " took " + per_pass_count(minor) + " minor faults";
    if (major > 0) out += " and " + per_pass_count(major) + " major";
    if (r.io_calls > 0) out += " with " + per_pass_count(static_cast<double>(r.io_calls)) + (per_pass(r, static_cast<double>(r.io_calls)) == 1 ? " call" : " calls");
    return out + pass;
  }
  if (calls <= 0) return "";
  bool one = per_pass(r, calls) == 1;
  std::string each = duration_text(seconds_per_call(r)) + (one ? "" : " each");
  std::string out = label + " made " + per_pass_count(calls) + (one ? " call" : " calls") +
                    (pass.empty() ? " of " + each : pass + ", " + each);
  if (major > 0) out += " and took " + per_pass_count(major) + " major faults";
  return out;
}

// Points of each x with at least two lines, in x order.
std::map<double, std::vector<const Point*>> contested(const Family& f) {
  std::map<double, std::vector<const Point*>> by_x;
  for (const auto& p : f.points) by_x[p.x].push_back(&p);
  for (auto it = by_x.begin(); it != by_x.end();) it = it->second.size() < 2 ? by_x.erase(it) : std::next(it);
  return by_x;
}

const Point* fastest(const std::vector<const Point*>& ps) {
  return *std::max_element(ps.begin(), ps.end(), [](auto* a, auto* b) { return rate(*a->result).median < rate(*b->result).median; });
}
const Point* slowest(const std::vector<const Point*>& ps) {
  return *std::min_element(ps.begin(), ps.end(), [](auto* a, auto* b) { return rate(*a->result).median < rate(*b->result).median; });
}

std::string at(const Family& f, double x) { return f.axis == Axis::None ? "" : "At " + x_text(f, x) + ", "; }

}  // namespace

std::vector<std::string> explain(const Family& f) {
  std::vector<std::string> out;
  if (f.points.empty()) return out;
  auto by_x = contested(f);
  if (by_x.empty()) {
    const Point* best = &*std::max_element(f.points.begin(), f.points.end(), [](auto& a, auto& b) {
      return rate(*a.result).median < rate(*b.result).median;
    });
    std::string s = "Only one method ran at each point here; the highest figure is " + best->series + "'s " +
                    rate_text(f, *best->result);
    if (f.axis != Axis::None) s += " at " + x_text(f, best->x);
    out.push_back(s + ".");
  } else {
    // 1. The widest gap between the fastest and the slowest line at one x, and why.
    // Rates of measured records are finite and positive, so every ratio is too.
    auto gap_at = [](const std::vector<const Point*>& ps) {
      return rate(*fastest(ps)->result).median / rate(*slowest(ps)->result).median;
    };
    double gap_x = by_x.begin()->first, gap = gap_at(by_x.begin()->second);
    for (const auto& [x, ps] : by_x)
      if (double r = gap_at(ps); r > gap) gap = r, gap_x = x;
    const Point* hi = fastest(by_x[gap_x]);
    const Point* lo = slowest(by_x[gap_x]);
    std::string s = at(f, gap_x);
    if (s.empty()) s = hi->series;
    else s += hi->series;
    s += " is " + times(gap) + " faster than " + lo->series + " (" + rate_text(f, *hi->result) + " vs " +
         rate_text(f, *lo->result) + ")";
    std::string why_lo = mechanism(*lo->result, lo->series), why_hi = mechanism(*hi->result, hi->series);
    if (!why_lo.empty() && !why_hi.empty()) s += ": " + why_lo + ", " + why_hi;
    else if (!why_lo.empty() || !why_hi.empty()) s += ": " + why_lo + why_hi;

    out.push_back(s + ".");

    // 2. Who leads where: one winner throughout, or where the lead changes.
    if (f.axis != Axis::None && by_x.size() >= 2) {
      std::vector<std::pair<std::string, std::pair<double, double>>> runs;  // winner, first x, last x
      std::vector<double> close;  // x where the lead is inside the noise
      for (const auto& [x, ps] : by_x) {
        const Point* top = fastest(ps);
        const Point* second = nullptr;
        for (const Point* p : ps)
          if (p != top && (!second || rate(*p->result).median > rate(*second->result).median)) second = p;
        if (!clearly_faster(*top->result, *second->result)) close.push_back(x);
        const std::string& w = top->series;
        if (runs.empty() || runs.back().first != w) runs.push_back({w, {x, x}});
        else runs.back().second.second = x;
      }
      // Where the leader is not ahead beyond the noise, say so.
      std::string caveat;
      if (!close.empty()) {
        if (close.size() == by_x.size()) {
          caveat = ", but everywhere within the noise between repetitions";
        } else {
          caveat = ", but within the noise at ";
          std::size_t shown = std::min<std::size_t>(close.size(), 4);
          for (std::size_t i = 0; i < shown; ++i)
            caveat += (i == 0 ? "" : i + 1 == shown && close.size() <= 4 ? " and " : ", ") + x_text(f, close[i]);
          if (close.size() > 4) caveat += " and " + std::to_string(close.size() - 4) + " more";
        }
      }
      if (runs.size() == 1) {
        const char* noun = f.axis == Axis::BlockSize    ? "block size"
                           : f.axis == Axis::Threads    ? "thread count"
                           : f.axis == Axis::TotalDepth ? "depth"
                                                        : "size";
        out.push_back(runs[0].first + " is the fastest at every " + noun + " measured with more than one method, " + x_text(f, runs[0].second.first) + " to " +
                      x_text(f, runs[0].second.second) + caveat + ".");
      } else if (runs.size() <= 3) {
        std::string t = "The lead changes: ";
        for (std::size_t i = 0; i < runs.size(); ++i) {
          const auto& [w, span] = runs[i];
          if (i) t += i + 1 == runs.size() ? " and " : ", ";
          t += w + (span.first == span.second ? " at " + x_text(f, span.first)
                                              : " from " + x_text(f, span.first) + " to " + x_text(f, span.second));
        }
        out.push_back(t + caveat + ".");
      } else {
        out.push_back("The lead changes " + std::to_string(runs.size() - 1) + " times between " +
                      x_text(f, by_x.begin()->first) + " and " + x_text(f, by_x.rbegin()->first) + caveat + ".");
      }
    } else if (f.axis == Axis::None) {
      const auto& ps = by_x.begin()->second;
      std::vector<const Point*> sorted(ps.begin(), ps.end());
      std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return rate(*a->result).median > rate(*b->result).median; });
      const results::Result& first = *sorted[0]->result;
      const results::Result& second = *sorted[1]->result;
      bool noise_known = first.samples_s.size() >= 2 && second.samples_s.size() >= 2;
      out.push_back(sorted[0]->series + " beats the runner-up " + sorted[1]->series + " by " +
                    times(rate(first).median / rate(second).median) +
                    (noise_known ? (clearly_faster(first, second) ? ", more than the noise between repetitions"
                                                                 : ", within the noise between repetitions")
                                 : " (one repetition: noise unknown)") +
                    ".");
    }
  }

  // 3. CPU per unit of work where it differs most.
  if (f.bytes_metric) {
    const Point* most = nullptr;
    const Point* least = nullptr;
    for (const auto& p : f.points) {
      double c = cpu_per_gib(*p.result);
      if (c <= 0) continue;
      if (!most || c > cpu_per_gib(*most->result)) most = &p;
      if (!least || c < cpu_per_gib(*least->result)) least = &p;
    }
    if (most && least && most != least) {
      const auto& m = *most->result;
      double sys_share = (m.user_s + m.sys_s) > 0 ? m.sys_s / (m.user_s + m.sys_s) : 0;
      std::string where_most = f.axis == Axis::None ? "" : " at " + x_text(f, most->x);
      std::string where_least = f.axis == Axis::None ? "" : " at " + x_text(f, least->x);
      out.push_back("CPU per GiB ranges from " + sig(cpu_per_gib(*least->result), 2) + " s (" + least->series +
                    where_least + ") to " + sig(cpu_per_gib(m), 2) + " s (" + most->series + where_most + ", " +
                    format_percent(sys_share) + " of it in the kernel).");
    } else if (most) {
      out.push_back(most->series + " used " + sig(cpu_per_gib(*most->result), 2) + " s of CPU per GiB.");
    }
  }
  return out;
}

}  // namespace iolab::report
