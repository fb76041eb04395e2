// crosscheck's JSON: a row per experiment with every round's figures.
#include <cmath>

#include "crosscheck_figures.h"
#include "iolab/fio/crosscheck.h"

namespace iolab::fio {

namespace {
nlohmann::json number_or_null(double v) { return v > 0 && std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json side_json(const SideFigures& s) {
  nlohmann::json j{{"ops", s.ops},
                   {"bytes", s.bytes},
                   {"wall_s", s.wall_s},
                   {"cpu_s", s.cpu_s},
                   {"user_s", s.user_s},
                   {"per_cpu_s", number_or_null(s.per_cpu_s())},
                   {"per_wall_s", number_or_null(s.per_wall_s())},
                   {"context_switches", s.context_switches},
                   {"page_faults", s.page_faults}};
  j["io_calls"] = s.io_calls ? nlohmann::json(*s.io_calls) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

nlohmann::json to_json(const CrosscheckRow& row, double tolerance) {
  const results::Result& l = row.labels;
  nlohmann::json j{{"name", row_name(row)},
                   {"method", l.method},
                   {"op", to_string(l.op)},
                   {"pattern", results::pattern_name(l)},
                   {"block_size", l.block_size},
                   {"file_size", l.file_size},
                   {"cache", results::cache_name(l)},
                   {"buffer", results::buffer_name(l)}};
  j["queue_depth"] = l.queue_depth ? nlohmann::json(*l.queue_depth) : nlohmann::json(nullptr);
  j["skipped"] = row.skipped ? nlohmann::json(*row.skipped) : nlohmann::json(nullptr);
  j["fio_engine"] = row.job ? nlohmann::json(row.job->engine) : nlohmann::json(nullptr);
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& r : row.rounds) {
    nlohmann::json jr{{"round", r.number},
                      {"first", r.iolab_first ? "iolab" : "fio"},
                      {"fio_command", r.fio_command},
                      {"iolab", side_json(r.iolab)},
                      {"fio", side_json(r.fio)},
                      {"iolab_reps", r.iolab_reps},
                      {"iolab_passes", r.iolab_passes},
                      {"cpu_ratio", number_or_null(r.cpu_ratio())},
                      {"wall_ratio", number_or_null(r.wall_ratio())},
                      {"iolab_warnings", r.iolab_warnings}};
    jr["fio_null"] = r.fio_null ? side_json(*r.fio_null) : nlohmann::json(nullptr);
    jr["fio_null_command"] = r.fio_null_command;
    jr["cpu_ratio_without_fio_own"] = number_or_null(r.cpu_ratio_without_fio_own());
    jr["iolab_resident"] = r.iolab_resident ? nlohmann::json(*r.iolab_resident) : nlohmann::json(nullptr);
    jr["fio_resident"] = r.fio_resident ? nlohmann::json(*r.fio_resident) : nlohmann::json(nullptr);
    rounds.push_back(std::move(jr));
  }
  j["rounds"] = std::move(rounds);
  const auto m = row.medians();
  j["median"] = {{"iolab_per_cpu_s", number_or_null(m.iolab_per_cpu_s)},
                 {"fio_per_cpu_s", number_or_null(m.fio_per_cpu_s)},
                 {"iolab_per_wall_s", number_or_null(m.iolab_per_wall_s)},
                 {"fio_per_wall_s", number_or_null(m.fio_per_wall_s)},
                 {"cpu_ratio", number_or_null(m.cpu_ratio)},
                 {"wall_ratio", number_or_null(m.wall_ratio)},
                 {"fio_own_cpu_per_op_s", number_or_null(m.fio_own_cpu_per_op)},
                 {"cpu_ratio_without_fio_own", number_or_null(m.cpu_ratio_without_fio_own)}};
  j["within_tolerance"] = row.within(tolerance);
  j["differences"] = differences(row);
  return j;
}

nlohmann::json crosscheck_document(const std::vector<CrosscheckRow>& rows, const CrosscheckSettings& settings,
                                   const std::string& fio_version, const results::Environment& environment,
                                   const std::vector<nlohmann::json>& fio_jobs) {
  nlohmann::json j{{"format", "iolab-crosscheck"},
                   {"fio_version", fio_version},
                   {"fio", settings.fio.string()},
                   {"rounds", settings.rounds},
                   {"tolerance", settings.tolerance},
                   {"environment", to_json(environment)}};
  j["rows"] = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    j["rows"].push_back(to_json(rows[i], settings.tolerance));
    if (i < fio_jobs.size()) j["rows"].back()["fio_job"] = fio_jobs[i];  // a row per experiment, in order
  }
  return j;
}

}  // namespace iolab::fio
