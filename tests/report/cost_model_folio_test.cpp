// The cost model's folio term (issue 42, docs/model.md): the page-cache
// folios a buffered write allocates, counted as the kernel sizes them, and
// their cost recovered from synthetic sweeps whose costs are known.
#include "iolab/report/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "internal/report/cost_model_counts.h"

// Named: the report tests are a unity build.
namespace cost_model_folio_test {

using iolab::report::CostTerm;
using iolab::report::costfit::folios_of_writes;
using iolab::results::Result;

constexpr double kCall = 900e-9, kByte = 0.27e-9, kFolio = 2.5e-6;  // seconds each

// A buffered write sweep's record: `file` bytes per pass in `block`-byte
// calls, `syscalls` system calls under them, the time per pass given.
Result writer(const std::string& method, std::uint64_t block, std::uint64_t file, double syscalls, double pass_s) {
  Result r;
  r.suite = "packet-sweep";
  r.experiment = "synthetic";
  r.method = method;
  r.op = iolab::results::Op::Write;
  r.cache = std::nullopt;  // a fresh file through the page cache
  r.block_size = block;
  r.file_size = file;
  r.reps = 5;
  r.passes = 3;
  r.bytes = file * r.passes;
  r.ops = file / block * r.passes;
  r.io_calls = static_cast<std::uint64_t>(syscalls) * r.passes;
  for (double k : {-0.01, 0.004, 0.0, -0.004, 0.01}) r.samples_s.push_back(pass_s * r.passes * (1 + k));
  r.verified = true;
  return r;
}

// pwrite's pass: a system call per call, a folio as the kernel sizes them.
Result pwrite(std::uint64_t block, std::uint64_t file, double folio_cost) {
  const double calls = static_cast<double>(file / block);
  const double folios = folios_of_writes(static_cast<double>(block), calls);
  return writer("pwrite", block, file, calls, calls * kCall + static_cast<double>(file) * kByte + folios * folio_cost);
}

double coefficient(const iolab::report::CostFit& f, CostTerm t) { return f.coefficients[static_cast<std::size_t>(t)]; }

TEST(CostModelFolios, CountsTheFoliosTheKernelAllocatesForEachWrite) {
  // A page or less: the writes share a page (64 B: 64 writes to a page).
  EXPECT_DOUBLE_EQ(folios_of_writes(64, 65536), 1024);
  EXPECT_DOUBLE_EQ(folios_of_writes(1024, 4096), 1024);
  EXPECT_DOUBLE_EQ(folios_of_writes(4096, 100), 100);
  // A power of two up to 2 MiB: one folio of its own size each.
  EXPECT_DOUBLE_EQ(folios_of_writes(32768, 1000), 1000);
  EXPECT_DOUBLE_EQ(folios_of_writes(2u << 20, 16), 16);
  // Larger: 2 MiB folios.
  EXPECT_DOUBLE_EQ(folios_of_writes(8u << 20, 4), 16);
  // Not a power of two: as the offsets' alignment allows. 12 KiB writes at
  // 0, 12, 24, 36 KiB: 8+4, 4+8, 8+4, 4+8 KiB; 20 KiB ones 2.5 folios each.
  EXPECT_DOUBLE_EQ(folios_of_writes(12288, 1000), 2000);
  EXPECT_DOUBLE_EQ(folios_of_writes(20480, 1000), 2500);
  // 3 KiB writes: three quarters of a page each.
  EXPECT_DOUBLE_EQ(folios_of_writes(3072, 4), 3);
}

TEST(CostModelFolios, RecoversAPerFolioCostWithin2Percent) {
  // Below a page a write's folio cost is per byte (a share of a page),
  // from a page on per call: one line in calls and bytes cannot follow both.
  std::vector<Result> rs;
  for (std::uint64_t block : {256u, 1024u, 4096u, 12288u, 32768u, 262144u, 2u << 20})
    rs.push_back(pwrite(block, 24u << 20, kFolio));
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 1u);
  const auto& f = m.fits[0];
  EXPECT_EQ(f.column, "buffered");
  ASSERT_EQ(f.terms.size(), 3u);
  EXPECT_NEAR(coefficient(f, CostTerm::Calls), kCall, 0.02 * kCall);
  EXPECT_NEAR(coefficient(f, CostTerm::Bytes), kByte, 0.02 * kByte);
  EXPECT_NEAR(coefficient(f, CostTerm::Folios), kFolio, 0.02 * kFolio);
  ASSERT_TRUE(f.loo_p90_abs_error);
  EXPECT_LT(*f.loo_p90_abs_error, 0.02);
  EXPECT_NE(iolab::report::format_text(m).find("µs/folio"), std::string::npos);
  const auto j = iolab::report::to_json(m)["fits"][0];
  EXPECT_TRUE(j["coefficients"].contains("folios"));
  EXPECT_TRUE(j["readable"].contains("us_per_folio"));
  EXPECT_EQ(j["points"][0]["folios"].get<double>(), f.points[0].counts[5]);
}

TEST(CostModelFolios, AFitWithoutTheOnlySizeAboveAPageDropsTheTerm) {
  // Leaving 64 KiB out leaves writes of a page or less, whose folios are
  // their bytes over 4 KiB: the fit without it cannot tell the folio term
  // from the byte term, drops it, and predicts 64 KiB from calls and bytes.
  std::vector<Result> rs;
  for (std::uint64_t block : {512u, 1024u, 2048u, 4096u, 65536u}) rs.push_back(pwrite(block, 8u << 20, 0));
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 1u);
  const auto& f = m.fits[0];
  const auto& last = f.points.back();
  ASSERT_EQ(last.size, 65536u);
  ASSERT_TRUE(last.loo_predicted_s);
  EXPECT_NEAR(*last.loo_predicted_s, last.measured_s, 0.01 * last.measured_s);
  EXPECT_TRUE(last.loo_extrapolated);
}

TEST(CostModelFolios, CountsTheWritesTheKernelSawNotTheCallsAbove) {
  // stdio's 64 B fwrites reach the kernel as 4 KiB write(2)s; a mapping's
  // pages come through faults (the fault term's), a read allocates none.
  std::vector<Result> rs;
  for (std::uint64_t block : {64u, 512u, 4096u, 32768u}) {
    const double syscalls = static_cast<double>((4u << 20) / std::max<std::uint64_t>(block, 4096));
    rs.push_back(writer("stdio", block, 4u << 20, syscalls, 1e-3 * (1 + static_cast<double>(block) / 4096)));
    Result mapped = writer("mmap", block, 4u << 20, 1, 1e-3);
    mapped.minor_faults = 1024 * mapped.passes;
    rs.push_back(mapped);
  }
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 2u);
  for (const auto& f : m.fits)
    for (const auto& p : f.points) {
      if (f.method == "stdio")
        EXPECT_DOUBLE_EQ(p.counts[5], p.counts[4]) << p.size;  // one folio per write(2) of 4 KiB or 32 KiB
      else
        EXPECT_EQ(p.counts[5], 0) << p.size;
    }
}

TEST(CostModelBuffers, FitsAnAlignedBufferWithTheHeapOneExceptForODirect) {
  // The seq-read suite's aligned buffer at 3 sizes joins the packet sweep's
  // heap one: one fit, whose call cost the small sizes pin for both. O_DIRECT
  // needs the aligned buffer and keeps it in the key.
  std::vector<Result> rs;
  for (std::uint64_t block : {64u, 512u, 4096u, 32768u}) rs.push_back(pwrite(block, 8u << 20, kFolio));
  for (std::uint64_t block : {1024u, 1u << 20, 4u << 20}) {
    Result r = pwrite(block, 8u << 20, kFolio);
    r.buffer = iolab::io::BufferKind::Aligned;
    rs.push_back(r);
    r.cache = iolab::results::CacheState::Direct;
    rs.push_back(r);
  }
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 2u);
  const auto& direct = m.fits[0].column == "direct" ? m.fits[0] : m.fits[1];
  const auto& buffered = m.fits[0].column == "direct" ? m.fits[1] : m.fits[0];
  EXPECT_EQ(direct.method, "pwrite (aligned)");
  EXPECT_EQ(buffered.method, "pwrite");
  EXPECT_EQ(buffered.points.size(), 7u);
  EXPECT_NEAR(coefficient(buffered, CostTerm::Calls), kCall, 0.02 * kCall);
  EXPECT_EQ(iolab::report::fit_of(m, rs.back()), &direct);
  EXPECT_EQ(iolab::report::fit_of(m, rs[4]), &buffered);  // the aligned 1 KiB record
}

}  // namespace cost_model_folio_test
