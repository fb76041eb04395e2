// The designed decision table (`iolab recommend`, measured by
// suites::run_decision): per cell its declared candidates and conditions,
// the verdict of the interleaved rounds (harness::decide: winner, tie or
// undecided) with the interval it rests on, the rounds taken, and one line
// of why from the counters. Built from records alone, so a results file
// saved by `iolab recommend --save` gives the same table again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/harness/comparison.h"
#include "iolab/harness/result.h"
#include "iolab/io/file.h"

namespace iolab::report {

struct DesignedCell {
  std::string op, band, flush, column;
  std::vector<std::string> candidates;    // declared, in the design's order
  // Each candidate's method traits as its records name them
  // (extra.decision_traits); nullopt when they name none (an older file).
  std::vector<std::optional<io::MethodTraits>> traits;
  std::vector<std::uint64_t> conditions;  // packet sizes
  std::string unmeasurable;               // why the cell could not be measured here
  std::vector<std::string> skipped;       // "libaio QD1 at 8 B: why"
  // Records left out: data not verified, or a figure from the wrong cache
  // state or too short to trust (distrust()); outliers stay in (the
  // interval is rank-based) and are counted.
  std::size_t unverified = 0, untrusted = 0, with_outliers = 0;
  std::map<std::string, std::size_t> untrusted_kinds;  // warning kind -> records
  harness::Verdict verdict;               // indices into candidates
  unsigned rounds = 0;
  std::string stop;                       // "decided", "budget", "max_rounds"
  double margin = 1.05;
  std::string why;                        // the counters of the winner (or first tied) and its closest rival
  std::string summary() const;            // one line
};

struct DesignedTable {
  std::vector<DesignedCell> cells;
  std::size_t unverified = 0;             // over the whole file
};

// Whether the records come from the designed experiment (extra.decision_cell).
bool is_designed(std::span<const harness::Result> results);
DesignedTable designed_table(std::span<const harness::Result> results);

// Measured cells only (an unmeasurable one in a closing list with its reason).
std::string format_text(const DesignedTable& table);
std::string format_markdown(const DesignedTable& table);
// {"format": "iolab-decision-table", "format_version": 3, "cells": [...]}.
nlohmann::json to_json(const DesignedTable& table);

}  // namespace iolab::report
