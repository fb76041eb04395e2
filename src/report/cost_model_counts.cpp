// What the cost model reads from a record (cost_model_counts.h).
#include "cost_model_counts.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "common.h"
#include "iolab/base/units.h"
#include "iolab/results/statistics.h"

namespace iolab::report::costfit {

std::string column_of(const results::Result& r) {
  std::string c = results::cache_name(r);
  if (!c.empty()) return c;
  return r.op == results::Op::Write ? "buffered" : "none";  // a write to a fresh file goes through the page cache
}

constexpr std::uint64_t kPage = 4096;        // x86-64's page: the smallest folio
constexpr unsigned kLargestFolioOrder = 9;   // 2 MiB, a PMD: the largest folio the page cache makes on x86-64
constexpr std::uint64_t kFolioWrites = 4096; // writes walked; the count per write is carried to the rest

// The folios `writes` sequential writes of `write` bytes each, from offset 0
// of a fresh file, allocate. The kernel (generic_perform_write, Linux 6.x's
// large folios on ext4 and XFS) asks for a folio sized by what is left of the
// write, rounded down to a power of two, no larger than the file offset's
// alignment allows and than 2 MiB; a write of a page or less takes a page,
// which the next small writes share. So a 32 KiB write takes one folio, a
// 12 KiB one two (8 + 4 KiB), a 1 KiB one a quarter of one.
double folios_of_writes(double write, double writes) {
  if (!(write > 0) || !(writes > 0)) return 0;
  const auto w = static_cast<std::uint64_t>(std::llround(write));
  if (w <= kPage) return std::ceil(write * writes / static_cast<double>(kPage));
  const std::uint64_t n = std::min<std::uint64_t>(kFolioWrites, static_cast<std::uint64_t>(std::ceil(writes)));
  std::uint64_t covered = 0, folios = 0;  // pages
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t end = (i + 1) * w;
    std::uint64_t page = std::max(covered, i * w / kPage);
    while (page * kPage < end) {
      unsigned order = std::bit_width(end - page * kPage) - 1;
      order = order > 12 ? order - 12 : 0;
      if (page > 0) order = std::min<unsigned>(order, static_cast<unsigned>(std::countr_zero(page)));
      order = std::min(order, kLargestFolioOrder);
      ++folios;
      page += std::uint64_t{1} << order;
    }
    covered = page;
  }
  return static_cast<double>(folios) * writes / static_cast<double>(n);
}

// The page-cache folios a buffered write to a fresh file allocates per pass.
// The writes the kernel saw: the calls for a queued method, else the system
// calls (stdio's and iostream's write(2) of their buffer), each of the bytes
// per pass over their number. Writes that reach their pages through faults
// (a mapping) allocate them in the fault handler, which the fault term counts.
double folios_of(const results::Result& r, const TermCounts& c) {
  if (r.op != results::Op::Write || r.cache || !(c[1] > 0)) return 0;  // a write to a fresh file (no cache state) allocates folios
  if (c[2] / (c[1] / kMiB) >= kFaultsPerMiB) return 0;
  const double writes = queue_label(r).empty() && c[4] > 0 ? c[4] : c[0];
  return writes > 0 ? folios_of_writes(c[1] / writes, writes) : 0;
}

TermCounts counts_of(const results::Result& r) {
  TermCounts c{};
  c[0] = per_pass(r, static_cast<double>(r.ops));
  c[1] = per_pass(r, static_cast<double>(r.bytes));
  c[2] = per_pass(r, static_cast<double>(r.minor_faults + r.major_faults));
  if (auto it = r.extra.find("flushes"); it != r.extra.end() && it->is_number()) c[3] = std::max(0.0, it->get<double>());
  c[4] = per_pass(r, static_cast<double>(r.io_calls));
  c[5] = folios_of(r, c);
  return c;
}

bool sweepable(const results::Result& r) {
  return measured(r) && (r.op == results::Op::Read || r.op == results::Op::Write) && r.threads == 1 &&
         (!r.pattern || *r.pattern == results::AccessPattern::Seq) && r.block_size > 0 && r.bytes > 0;
}

// The share of a repetition's time the process had a core. A record whose
// repetitions never slept (no voluntary context switch: no device wait, no
// writeback throttling) was on a core or waiting for one: CPU time below the
// elapsed time is a neighbour's (another build on a shared machine), not the
// method's, and is taken out. A record that slept keeps its elapsed time.
double own_core_share(const results::Result& r) {
  const double cpu = r.user_s + r.sys_s;
  const double wall = results::median(r.samples_s);
  if (r.voluntary_ctx != 0 || !(cpu > 0) || !(wall > cpu)) return 1.0;
  return cpu / wall;
}

}  // namespace iolab::report::costfit
