// The decision's one filter of records (trust.h).
#include "iolab/decision/trust.h"

#include <fmt/format.h>

#include "iolab/base/units.h"
#include "iolab/results/thresholds.h"

namespace iolab::decision {

std::optional<Untrusted> untrusted(const results::Result& r) {
  if (r.skipped) return Untrusted{0, "skipped: " + *r.skipped};
  if (!r.verified) return Untrusted{0, "its data was not verified"};
  if (r.bytes == 0 && r.ops == 0) return Untrusted{0, "it moved nothing"};
  for (std::size_t j = 0; j < r.samples_s.size(); ++j)
    if (!(r.samples_s[j] >= results::thresholds::kTooShortSeconds))
      return Untrusted{static_cast<unsigned>(j),
                       fmt::format("repetition {} lasted {}, under the {} a figure needs", j + 1,
                                   format_duration(r.samples_s[j]), format_duration(results::thresholds::kTooShortSeconds))};
  std::string state;
  if (r.has_warning(results::WarningKind::NotWarm) ||
      (r.cache == results::CacheState::Warm && r.resident_fraction &&
       *r.resident_fraction < results::thresholds::kWarmResidentMin))
    state = "its file was not fully resident before a warm pass";
  if (r.has_warning(results::WarningKind::NotCold) ||
      (r.cache == results::CacheState::Cold && r.resident_fraction &&
       *r.resident_fraction > results::thresholds::kColdResidentMax))
    state = "its file was resident before a cold pass";
  if (state.empty()) return std::nullopt;
  if (auto it = r.extra.find(kUntrustedFromRound);
      it != r.extra.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0 && it->get<std::int64_t>() < 1000000)
    return Untrusted{static_cast<unsigned>(it->get<std::int64_t>()), state};
  return Untrusted{0, state, true};
}

}  // namespace iolab::decision
