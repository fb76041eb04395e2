// Every limit the harness and the report judge figures by, in one place.
#pragma once

#include <cstddef>
#include <cstdint>

namespace iolab::results::thresholds {

// A timed repetition shorter than this is too short to trust: the clock's
// resolution, a timer interrupt or one page fault is then a visible share.
inline constexpr double kTooShortSeconds = 0.050;
// When min_time asks for at least kTooShortSeconds, the engine sizes a
// repetition's passes so that its fastest pass times the passes reaches
// this multiple of kTooShortSeconds: passes that speed up by less than a
// quarter after calibration still leave every repetition long enough.
inline constexpr double kTooShortHeadroom = 1.3;
// What the engine aims each repetition at (--min-time), by running several
// passes of the workload per repetition (Google Benchmark's min_time).
inline constexpr double kDefaultMinTimeSeconds = 0.100;
// Most wall time one experiment may take when the engine lengthens its
// repetitions (--max-time), the untimed work around every pass included:
// beyond it, fewer passes per repetition.
inline constexpr double kDefaultMaxTimeSeconds = 3.0;
// Times the engine may start an experiment's repetitions again with more
// passes, when passes turn out faster than the warm-ups promised (each time
// the repetitions so far become warm-ups).
inline constexpr unsigned kMaxRecalibrations = 3;
// A warm file must have at least this fraction resident before every pass.
inline constexpr double kWarmResidentMin = 0.99;
// A cold file may have at most this fraction resident before a pass; above
// it the file is evicted again (once), and if still warm the experiment is
// skipped rather than published as cold.
inline constexpr double kColdResidentMax = 0.05;
// A full cache (CacheState::Full): before every timed pass the memory
// group's page cache holds at least this fraction of the room it was given
// (the rest: the group's own small allocations, pages being reclaimed).
inline constexpr double kFullCacheMin = 0.85;
// A full cache's group may hold this much beyond its page cache's room and
// its other memory (set before every pass): what a pass allocates (page
// tables of a mapping, a ring's pages); the cache may use what is left of it.
inline constexpr std::uint64_t kFullCacheMarginBytes = 4ull << 20;
// Modified z-score above which a repetition is an outlier (Iglewicz and
// Hoaglin; hyperfine's rule): 0.6745 * |x - median| / MAD > 3.5.
inline constexpr double kOutlierZ = 3.5;
// Fewest repetitions the outlier rule judges: of three, the median's own
// deviation is 0 and the MAD is the smaller of the other two, so any uneven
// pair of neighbours makes the third an "outlier".
inline constexpr std::size_t kOutlierMinSamples = 5;
// A winner must beat the runner-up by more than this to be named (when the
// repetitions' ranges do not overlap); below it the report calls a tie.
inline constexpr double kTieRatio = 1.05;

}  // namespace iolab::results::thresholds
