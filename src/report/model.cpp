#include "model.h"


#include <algorithm>
#include <cctype>
#include <cmath>

#include "charts.h"
#include "charts_commitlog.h"
#include "common.h"
#include "explain.h"
#include "family_charts.h"
#include "iolab/base/proc.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/results/thresholds.h"

namespace iolab::report {

namespace {


std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A published figure in the chart's units (MiB/s or ops/s), when its unit converts.
std::optional<double> reference_value(const results::Reference& ref, bool bytes_metric) {
  std::string u = lower(ref.unit);
  u.erase(std::remove(u.begin(), u.end(), ' '), u.end());
  std::optional<double> v;
  if (bytes_metric) {
    if (u == "mib/s") v = ref.value;
    else if (u == "kib/s") v = ref.value / 1024;
    else if (u == "gib/s") v = ref.value * 1024;
    else if (u == "b/s" || u == "bytes/s") v = ref.value / kMiB;
    else if (u == "kb/s") v = ref.value * 1e3 / kMiB;
    else if (u == "mb/s") v = ref.value * 1e6 / kMiB;
    else if (u == "gb/s") v = ref.value * 1e9 / kMiB;
  } else if (u == "ops/s" || u == "op/s" || u == "calls/s") {
    v = ref.value;
  }
  // A log axis shows positive finite values only.
  if (v && !(std::isfinite(*v) && *v > 0)) v.reset();
  return v;
}

std::string reference_text(const results::Reference& ref) {
  return ref.source + ": " + sig(ref.value, 3) + " " + ref.unit + " (theirs)";
}

std::string cache_text(const results::Result& r) {
  if (!r.cache) return "";
  std::string t = results::cache_name(r);
  if (!r.cache_method.empty()) t += " (" + r.cache_method + ")";
  if (r.resident_fraction) t += ", " + format_percent(*r.resident_fraction) + " resident";
  return t;
}

std::string calls_text(const results::Result& r) {
  double calls = per_pass(r, static_cast<double>(r.io_calls));
  if (calls <= 0) return "0";
  return count(calls) + " (" + duration_text(seconds_per_call(r)) + " each)";
}

std::string record_name(const results::Result& r) {
  std::string s = method_label(r);
  if (std::string q = queue_label(r); !q.empty()) s += " " + q;
  s += ", " + r.experiment + " (" + std::string(results::to_string(r.op)) + (r.block_size ? " " + bytes_text(r.block_size) : "") + ")";
  return visible(s);
}

// The warnings and skips of one suite, with counts by kind.
void collect_notes(SuiteSection& section, const SuiteView& suite, const std::vector<Source>& sources, ReportModel& model) {
  auto from = [&](std::size_t src) { return sources.size() > 1 ? " [" + visible(sources[src].label) + "]" : std::string(); };
  section.records = suite.records.size();
  for (const auto& [r, src] : suite.records) {
    if (r->skipped) {
      section.skipped.push_back({record_name(*r) + from(src), visible(*r->skipped)});
      continue;
    }
    // Warnings are grouped by their kind, never by their wording.
    std::vector<std::string> notes;
    auto note = [&](std::string kind, std::string text) {
      notes.push_back(std::move(text));
      ++section.warning_kinds[kind];
    };
    if (std::string why = unusable_reason(*r); !why.empty()) {
      note("no_figures", why);
      ++model.unusable;
    }
    for (const auto& w : r->warnings) note(std::string(results::to_string(w.kind)), visible(w.text));
    // Files from elsewhere (or schema 1) may hold a "cold" figure whose file was not cold.
    if (r->cache == results::CacheState::Cold && r->resident_fraction &&
        *r->resident_fraction > results::thresholds::kColdResidentMax && !r->has_warning(results::WarningKind::NotCold))
      note("not_cold", "\"cold\" but " + format_percent(*r->resident_fraction) + " of the file was resident before a timed run");
    if (measured(*r)) {
      results::Summary s = r->seconds();
      if (s.n >= 2 && s.cv > 0.10 && !r->has_warning(results::WarningKind::Outliers))
        note("noisy", "noisy: cv " + format_percent(s.cv) + " over " + std::to_string(s.n) + " repetitions");
      if (!r->verified && r->op == results::Op::Read) note("not_verified", "data read was not verified");
    }
    if (notes.empty()) continue;
    std::string joined;
    for (const auto& n : notes) joined += (joined.empty() ? "" : "; ") + n;
    section.warnings.push_back({record_name(*r) + from(src), joined});
  }
}

std::vector<std::pair<std::string, std::string>> environment_rows(const results::Environment& env) {
  auto v = [](const std::string& s) { return s.empty() ? std::string("unknown") : visible(s); };
  std::string queue;
  for (const auto& [k, value] : env.block_queue) queue += (queue.empty() ? "" : ", ") + k + " " + value;
  return {
      {"host", v(env.hostname)},
      {"CPU", v(env.cpu_model + (env.cores ? " (" + std::to_string(env.cores) + " cores)" : ""))},
      {"RAM", env.ram_bytes ? bytes_text(env.ram_bytes) : "unknown"},
      {"kernel", v(env.kernel)},
      {"scratch directory", v(env.scratch_dir)},
      {"filesystem", v(env.fs_type + (env.mount_options.empty() ? "" : " (" + env.mount_options + ")"))},
      {"device", v(env.device + (env.rotational ? (*env.rotational ? ", rotational" : ", not rotational") : "") +
                   (env.scheduler.empty() ? "" : ", scheduler " + env.scheduler))},
      {"block queue", queue.empty() ? "not recorded" : visible(queue)},
      {"memory", env.free_page_reporting_order
                     ? "free page reporting: memory the machine frees goes back to the host in " +
                           bytes_text(proc::page_block_bytes(*env.free_page_reporting_order)) +
                           " blocks, and a first touch of it again takes a host fault per page (a run after "
                           "a pause or after another run's freed memory is slower)"
                     : "no free page reporting recorded"},
      {"iolab", v(env.iolab_version + (env.git_commit.empty() ? "" : ", commit " + env.git_commit) +
                  (env.build_type.empty() ? "" : ", " + env.build_type) +
                  (env.compiler.empty() ? "" : ", " + env.compiler))},
      {"privileges", std::string(env.root ? "root" : "not root") +
                         (env.can_drop_caches ? ", can drop caches" : ", cannot drop caches (cold = fadvise)")},
      {"created", v(env.created)},
      {"command", v(env.command)},
  };
}

}  // namespace

PointFacts facts_of(const Family& f, const Point& p) {
  const results::Result& r = *p.result;
  PointFacts out;
  Rate rt = f.bytes_metric ? rate(r) : ops_rate(r);
  results::Summary s = r.seconds();
  std::string unit = f.bytes_metric ? " MiB/s" : " ops/s";
  out.series = p.series;
  out.x = p.x;
  out.x_text = x_text(f, p.x);
  out.experiment = visible(r.experiment);
  out.rate = rt.median;
  out.slowest = rt.slowest;
  out.fastest = rt.fastest;
  out.rate_t = sig(rt.median, 3) + unit;
  out.spread_t = sig(rt.slowest, 3) + " .. " + sig(rt.fastest, 3) + unit +
                 (r.pass_s ? " (single passes; repetitions' cv " : " (repetitions; cv ") + format_percent(s.cv) + ")";
  out.reps_t = std::to_string(s.n) + (s.n == 1 ? " rep" : " reps") + " of " + count(passes(r)) +
               (passes(r) == 1 ? " pass" : " passes");
  // A repetition is `passes` passes: what one pass and one operation took
  // is what a reader compares with another tool's run of the same work.
  out.per_pass_t = duration_text(r.seconds_per_pass()) + " per pass" +
                   (r.ns_per_op() ? "; " + duration_text(*r.ns_per_op() * 1e-9) + " per op" : "");
  if (r.latency_ns && std::isfinite(r.latency_ns->p50) && r.latency_ns->p50 > 0) {
    auto ns = [](double v) { return std::isfinite(v) && v > 0 ? std::optional<double>(v) : std::nullopt; };
    out.p50 = ns(r.latency_ns->p50);
    out.p99 = ns(r.latency_ns->p99);
    out.p999 = ns(r.latency_ns->p999);
    out.latency_t = duration_text(r.latency_ns->p50 * 1e-9) + " / " + duration_text(r.latency_ns->p99 * 1e-9);
    out.latency_source_t = latency_source_text(r);
    switch (r.latency_ns->source) {
      case results::LatencySource::EveryCall: out.latency_kind = "call"; break;
      case results::LatencySource::EveryRequest: out.latency_kind = "request"; break;
      case results::LatencySource::EveryOp: out.latency_kind = "operation"; break;
    }
  }
  double cpu = f.bytes_metric ? cpu_per_gib(r) : (r.ops ? (r.user_s + r.sys_s) / static_cast<double>(r.ops) * 1e6 : 0);
  out.cpu = std::isfinite(cpu) ? cpu : 0;
  out.cpu_t = sig(per_pass(r, r.user_s), 2) + " s user + " + sig(per_pass(r, r.sys_s), 2) + " s sys per pass" +
              (r.bytes ? "; " + sig(cpu_per_gib(r), 2) + " s/GiB" : "");
  out.faults_t = count(per_pass(r, static_cast<double>(r.minor_faults))) + " minor, " +
                 count(per_pass(r, static_cast<double>(r.major_faults))) + " major per pass";
  out.calls_t = calls_text(r) + " per pass";
  out.cache_t = visible(cache_text(r));
  out.destination_t = destination(r);
  out.flushes_t = flushes_text(r);
  out.verified = r.verified;
  if (r.reference) {
    out.published = reference_value(*r.reference, f.bytes_metric);
    out.published_t = visible(reference_text(*r.reference));
  }
  return out;
}

ReportModel build_model(const std::vector<results::Results>& runs, const ReportOptions& options) {
  ReportModel model;
  model.title = visible(options.title);
  std::vector<Source> sources;
  for (std::size_t i = 0; i < runs.size(); ++i)
    sources.push_back({&runs[i], i < options.source_names.size() && !options.source_names[i].empty()
                                     ? options.source_names[i]
                                     : "run " + std::to_string(i + 1)});
  for (const auto& run : runs)
    for (const auto& r : run.results) {
      if (r.skipped) ++model.skipped;
      else if (measured(r)) ++model.measured;
    }

  // Each run's cost model, fitted once: its section and its line on the sweep charts.
  std::vector<std::optional<CostModel>> cost_models;
  for (const auto& run : runs)
    if (CostModel cm = fit_cost_model(run.results); !cm.fits.empty()) cost_models.emplace_back(std::move(cm));
    else cost_models.emplace_back();

  std::size_t family_index = 0;
  for (SuiteView& suite : group_results(sources)) {
    SuiteSection section;
    section.suite = visible(suite.suite);
    section.families.reserve(suite.families.size());
    for (Family& f : suite.families) {
      FamilySection fs;
      fs.id = "chart-" + std::to_string(family_index++);
      fs.explanation = f.chart && f.chart->explain ? f.chart->explain(f) : explain(f);
      fs.points.reserve(f.points.size());
      for (const auto& p : f.points) {
        fs.points.push_back(facts_of(f, p));
        if (f.axis == Axis::BlockSize && f.bytes_metric && p.source < cost_models.size() && cost_models[p.source])
          if (auto s = modeled_seconds_per_pass(*cost_models[p.source], *p.result))
            fs.points.back().model = per_pass(*p.result, static_cast<double>(p.result->bytes)) / kMiB / *s;
        fs.has_reference |= p.result->reference.has_value();
        fs.has_flushes |= !fs.points.back().flushes_t.empty();
      }
      ChartSpec chart = f.chart ? ChartSpec{f.chart->spec(f, fs.points), {}} : chart_spec(f, fs.points);
      add_per_second_panel(f, fs.points, chart.spec);  // commit-log records: their per-second series
      fs.chart_json = chart_script_json(chart);
      fs.family = std::move(f);  // not copied: group_results' view is not used again
      section.families.push_back(std::move(fs));
    }
    collect_notes(section, suite, sources, model);
    model.suites.push_back(std::move(section));
  }

  for (std::size_t i = 0; i < runs.size(); ++i) {
    RunSection run;
    run.label = visible(sources[i].label);
    run.created = visible(runs[i].environment.created);
    if (decision::holds_decision(runs[i].results)) {
      try {
        run.decision = decision::decision_from_records(runs[i].results);
        run.seed_rules = decision::seed_rules(*run.decision);
        if (!run.decision->conditions.empty()) run.predictions = predict_decision(*run.decision, runs[i].results);
      } catch (const Error& e) {
        run.decision_problem = e.what();
      }
    }
    run.cost_model = std::move(cost_models[i]);
    run.environment = environment_rows(runs[i].environment);
    if (runs[i].incomplete) run.incomplete = visible(*runs[i].incomplete);
    run.traces = trace_sections(runs[i], run.decision, i);
    model.runs.push_back(std::move(run));
  }
  for (const auto& b : chart_bundles()) model.bundle_names.emplace_back(b.name);
  return model;
}

}  // namespace iolab::report
