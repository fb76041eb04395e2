// seed 000: the employee record store. The same workload on every backend
// of iolab::store (fields, gather, mmap, buffered) and on LMDB and SQLite:
// insert all records; get all in a random order (fixed seed; every field
// checked in an untimed verification pass); remove 10%; insert 10% new ones
// (into the freed space); reopen (our store rebuilds its index from the
// journal). Each table compares engines that commit at the same points with
// the same durability (the cadences of store_data_set.h), and says what a
// commit gives in each (atomic or not): each phase is one result: suite
// "store", method = engine, op = phase, extra.commits = the commits its pass
// made, extra.commit_atomicity what they gave.
#include <algorithm>
#include <span>

#include "iolab/suites/kv_store.h"
#include "seed_common.h"
#include "store_data_set.h"

namespace iolab::suites {

namespace {

using namespace seeds;
using namespace store_suite;

class StoreSuite final : public Suite {
 public:
  using Suite::Suite;

  void check(const SuiteOptions& options) const override {
    const std::uint64_t n = options.records;
    if (n != 0 && n < 10) throw UsageError("--records " + std::to_string(n), "the store suite needs at least 10 records");
    if (n > 50000000) throw UsageError("--records " + std::to_string(n), "at most 50,000,000 (all are kept in memory)");
  }

  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    check(options);
    std::uint64_t n = options.records != 0
                          ? options.records
                          : by_scale<std::uint64_t>(options.scale, 2000, 10000, 20000, 100000);
    StoreDataSet w = make_data_set(n, runner.config().seed);
    // LMDB's map must hold the data with B-tree overhead; the file stays sparse.
    std::uint64_t map_bytes = std::max<std::uint64_t>(64 * MiB, w.data_bytes * 4);
    std::vector<results::Result> out;
    // The quick scale: the first table (commit every 1,000 ops, page cache),
    // insert and get (the phases the seed published) only; the default scale
    // leaves out the last table (one fdatasync per phase).
    const bool quick = options.scale == Scale::Quick;
    std::span<const Cadence> tables = cadences();
    if (quick) tables = tables.first(1);
    if (options.scale == Scale::Default) tables = tables.first(3);
    for (const Cadence& cadence : tables) {
      for (const std::string& method : kv_store_names())
        for (auto& r : run_kv_store(runner, w, method, cadence, map_bytes, quick)) out.push_back(std::move(r));
    }
    return out;
  }
};

const SuiteRegistration store_registration{std::make_unique<StoreSuite>(catalogued("store"))};

}  // namespace
}  // namespace iolab::suites
