// The decision from its records: per condition the pick, the survivors
// within the indifference zone and how the selection ended; per row the
// map of picks across sizes and the safe choice (the method never far
// behind the per-size best). Rebuilt by replaying the selection over the
// recorded rounds with the one trust filter (trust.h), so a results file
// saved by `iolab recommend --save` gives the same decision the run made.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/decision/design.h"
#include "iolab/decision/selection.h"
#include "iolab/decision/stop.h"
#include "iolab/harness/comparison.h"
#include "iolab/results/record.h"
#include "iolab/io/file.h"

namespace iolab::decision {


struct CandidateVerdict {
  std::string label;
  std::optional<io::MethodTraits> traits;  // nullopt when its records name none
  std::string skipped;                     // why it could not run
  std::string withdrawn;                   // why its figures stopped being trusted, and from which round
  unsigned rounds = 0;                     // trusted rounds it took part in
  double mean_log_rate = 0;                // over those rounds
  double rate = 0;                         // exp(mean_log_rate): bytes (or operations) per second
  std::optional<Selection::Elimination> eliminated;
  // The pick over it (paired Hodges-Lehmann ratio and exact Wilcoxon
  // interval over their common rounds); unavailable for the pick itself.
  harness::RatioInterval pick_over;
  // The why, from its record's counters (medians of its repetitions), per
  // MiB moved: calls, minor faults, kernel CPU; flushes per pass; past
  // memory, major faults per MiB and device bytes read per byte delivered
  // (negative: not recorded).
  double calls_per_mib = -1, minor_faults_per_mib = -1, kernel_ms_per_mib = -1, flushes_per_pass = -1;
  double major_faults_per_mib = -1, device_bytes_per_byte = -1;
};

struct ConditionVerdict {
  Condition condition;
  std::string workload;  // the workload it judges (a replayed trace's name) instead of a condition; else empty
  std::vector<CandidateVerdict> candidates;
  Stop stop = Stop::NotRun;
  std::string why;            // not run, unmeasurable: why
  bool within_zone = false;   // ended with survivors the rounds could not tell apart within the zone
  std::optional<std::size_t> pick;
  std::vector<std::size_t> within;  // the survivors, pick first
  // The best eliminated candidate (the closest the rule ruled out), if any.
  std::optional<std::size_t> runner_up;
  unsigned rounds = 0;
  double indifference = 0, confidence = 0;
  unsigned first_stage = kFirstStage;
  double min_time = 0;
  bool counts_bytes = true;   // rates are bytes per second (else operations)
  // The replay over the records ended as the run recorded (rounds and stop).
  bool replay_agrees = true;
  std::size_t left_out = 0;   // candidates withdrawn or skipped
  bool measured() const { return stop == Stop::Selected || stop == Stop::Budget; }
};

// The safe choice over some sizes of a row: the method whose worst ratio to
// the per-size pick is smallest, among those measured at every one of them.
struct SafeChoice {
  std::string method;
  double worst_ratio = 1;      // the pick's rate over its, at its worst size
  std::uint64_t worst_at = 0;  // that size
  std::uint64_t from = 0, to = 0;
  std::size_t sizes = 0;
};

struct RowVerdict {
  Row row;
  std::vector<std::size_t> conditions;       // into Decision::conditions, sizes ascending
  std::optional<SafeChoice> safe;            // over every measured size
  std::vector<std::pair<std::string, SafeChoice>> bands;  // "< 64 B", "64 B..4 KiB", ...: over its sizes
};

struct Decision {
  std::vector<ConditionVerdict> conditions;
  std::vector<ConditionVerdict> workloads;  // decisions over a workload (`recommend --trace`), in the records' order
  std::vector<RowVerdict> rows;
  std::size_t unverified = 0;  // records left out as unverified, over the file
};

// Whether the records hold a decision (extra.decision_condition or decision_workload).
bool holds_decision(std::span<const results::Result> results);
// Throws Error naming the cause when the records hold a decision of an
// older design (per-band cells: extra.decision_cell), which cannot be replayed.
Decision decision_from_records(std::span<const results::Result> results);

// The band a size falls in ("< 64 B", "64 B..4 KiB", "4 KiB..1 MiB", ">= 1 MiB").
std::string_view band_of(std::uint64_t size);

// {"format": "iolab-decision", "format_version": 5, "conditions": [...], "rows": [...]}: each condition "predicted": false
// (report/decision_prediction.h appends the predicted ones).
nlohmann::json to_json(const Decision& d);

// Keys the records carry (suites/decision_run.cpp writes them).
namespace keys {
inline constexpr const char* kCondition = "decision_condition";    // Condition::key()
inline constexpr const char* kWorkload = "decision_workload";      // a workload's name (a replayed trace), not a condition
inline constexpr const char* kCandidate = "decision_candidate";    // label
inline constexpr const char* kIndex = "decision_candidate_index";  // its place in the design
inline constexpr const char* kTraits = "decision_traits";
inline constexpr const char* kCandidates = "decision_candidates";  // a condition's own record (not measured)
inline constexpr const char* kStop = "decision_stop";
inline constexpr const char* kStopWhy = "decision_stop_why";       // budget: what ran out
inline constexpr const char* kPick = "decision_pick";              // the live selection's, checked by the replay
inline constexpr const char* kWithin = "decision_within";
inline constexpr const char* kRounds = "decision_rounds";          // complete rounds judged
inline constexpr const char* kIndifference = "decision_indifference";
inline constexpr const char* kConfidence = "decision_confidence";
inline constexpr const char* kFirstStage = "decision_first_stage";
inline constexpr const char* kMinTime = "decision_min_time";
inline constexpr const char* kOldCell = "decision_cell";           // the per-band design's
}  // namespace keys

}  // namespace iolab::decision
