// Whether a measured record's figures may stand in the decision, and from
// which round on they may not: the one filter the live judge and the table
// rebuilt from a results file both use, so both see the same rounds.
#pragma once

#include <optional>
#include <string>

#include "iolab/results/record.h"

namespace iolab::decision {

struct Untrusted {
  unsigned from_round = 0;  // 0-based: its rounds before this one stand
  std::string why;
  // A cache state's warning whose round no one recorded yet (from_round is
  // then 0): the live judge records the round it first sees it in.
  bool round_unknown = false;
};
// Skipped, unverified or with no work: from round 0. A repetition shorter
// than thresholds::kTooShortSeconds: from that repetition. A warm file not
// resident, or a cold one resident, before a timed pass (its warning, or
// its resident fraction past the thresholds): from the round recorded in
// extra "untrusted_from_round" (the live judge writes it when it first sees
// the warning), else from round 0. Outliers stand: the procedure averages
// log rates over rounds and a far-off round widens its pair's variance.
std::optional<Untrusted> untrusted(const results::Result& r);

// The key the live judge records the round in.
inline constexpr const char* kUntrustedFromRound = "untrusted_from_round";

}  // namespace iolab::decision
