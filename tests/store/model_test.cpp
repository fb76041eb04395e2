// Random put / replace / remove / reopen / compact sequences on every
// backend, checked against a std::map after every step.
#include <map>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "iolab/io/scratch.h"
#include "iolab/store/record_store.h"
#include "store/store_test_util.h"

namespace iolab::store {
namespace {

using testing::contents;
using testing::key_name;
using testing::make_employee;

struct ModelCase {
  Backend backend;
  io::FlushPolicy sync;
  std::size_t small_buffers;  // 1: 1 KiB mmap growth and a 4 KiB staging buffer
};

std::string case_name(const ::testing::TestParamInfo<ModelCase>& info) {
  std::string s(to_string(info.param.backend));
  switch (info.param.sync.schedule) {
    case io::FlushSchedule::None: s += "_none"; break;
    case io::FlushSchedule::EveryOps: s += "_every" + std::to_string(info.param.sync.interval); break;
    case io::FlushSchedule::EveryWrite: s += "_everyput"; break;
    case io::FlushSchedule::End: s += "_atclose"; break;
    case io::FlushSchedule::EveryBytes:
    case io::FlushSchedule::AsyncBytes: s += "_refused"; break;  // the store refuses them
  }
  return s + (info.param.small_buffers ? "_small" : "");
}

class StoreModel : public ::testing::TestWithParam<ModelCase> {};

void check_equal(RecordStore& s, const std::map<std::string, Employee>& model, bool full) {
  ASSERT_EQ(s.size(), model.size());
  if (!full) return;
  EXPECT_EQ(contents(s), model);
}

TEST_P(StoreModel, RandomOperationsMatchStdMap) {
  const ModelCase& c = GetParam();
  io::ScratchDir scratch(testing::fast_scratch_parent());
  auto path = scratch.create_file("journal");
  StoreOptions opt;
  opt.backend = c.backend;
  opt.sync = c.sync;
  if (c.small_buffers) {
    opt.mmap_grow_step = 1024;
    opt.stage_buffer = 4096;
  }
  const int kSteps = c.sync.schedule == io::FlushSchedule::EveryWrite ? 300 : 1500;
  const int kKeys = 48;
  std::mt19937_64 rng(1234 + static_cast<unsigned>(c.backend));
  std::map<std::string, Employee> model;
  std::map<std::string, std::uint64_t> version;
  auto store = std::make_unique<RecordStore>(path, opt);
  EXPECT_TRUE(store->open_report().created);
  std::uint64_t reopens = 0, compacts = 0, holes_reused = 0;
  Employee got;
  for (int step = 0; step < kSteps; ++step) {
    std::string key = key_name(rng() % kKeys);
    unsigned what = rng() % 100;
    SCOPED_TRACE("step " + std::to_string(step) + " key " + key + " op " + std::to_string(what));
    if (what < 55) {  // put: insert or replace
      Employee e = make_employee(key, ++version[key]);
      store->put(e);
      model[key] = e;
    } else if (what < 85) {
      bool had = model.erase(key) > 0;
      EXPECT_EQ(store->remove(key), had);
    } else if (what < 95) {
      auto it = model.find(key);
      ASSERT_EQ(store->get(key, got), it != model.end());
      if (it != model.end()) {
        EXPECT_EQ(got, it->second);
      }
    } else if (what < 98) {
      if (rng() % 2) store->close();  // else: the destructor closes
      holes_reused += store->stats().holes_reused;
      store.reset();
      store = std::make_unique<RecordStore>(path, opt);
      const OpenReport& r = store->open_report();
      EXPECT_EQ(r.torn_tail_bytes, 0u);
      EXPECT_TRUE(r.salvaged.empty());
      EXPECT_EQ(r.stale_versions_freed, 0u);
      EXPECT_EQ(r.records, model.size());
      ++reopens;
    } else {
      store->compact();
      EXPECT_EQ(store->stats().free_bytes, 0u);
      ++compacts;
    }
    check_equal(*store, model, true);
    if (::testing::Test::HasFailure()) return;
  }
  holes_reused += store->stats().holes_reused;
  EXPECT_GT(holes_reused, 0u) << "the sequence should reuse holes";
  EXPECT_GT(reopens, 0u);
  EXPECT_GT(compacts, 0u);
  store->close();
  RecordStore again(path, opt);
  check_equal(again, model, true);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, StoreModel,
    ::testing::Values(ModelCase{Backend::Fields, io::FlushPolicy{}, 0},
                      ModelCase{Backend::Gather, io::FlushPolicy{}, 0},
                      ModelCase{Backend::Mmap, io::FlushPolicy{}, 0},
                      ModelCase{Backend::Mmap, io::FlushPolicy{io::FlushSchedule::EveryOps, io::Durability::Fdatasync, 7}, 1},
                      ModelCase{Backend::Buffered, io::FlushPolicy{}, 0},
                      ModelCase{Backend::Buffered, io::FlushPolicy{io::FlushSchedule::EveryOps, io::Durability::Fdatasync, 7}, 1},
                      ModelCase{Backend::Fields, io::FlushPolicy{io::FlushSchedule::EveryOps, io::Durability::Fdatasync, 5}, 0},
                      ModelCase{Backend::Gather, io::FlushPolicy{io::FlushSchedule::End, io::Durability::Fdatasync}, 0},
                      ModelCase{Backend::Gather, io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync}, 0},
                      ModelCase{Backend::Buffered, io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync}, 1}),
    case_name);

// Every backend reads a journal written by every other backend.
TEST(StoreFormat, BackendsShareOneFormat) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  for (Backend writer : kAllBackends) {
    auto path = scratch.create_unique_file("journal");
    std::map<std::string, Employee> model;
    {
      StoreOptions o;
      o.backend = writer;
      RecordStore s(path, o);
      for (int i = 0; i < 200; ++i) {
        Employee e = make_employee(key_name(i), 1);
        s.put(e);
        model[e.last] = e;
      }
      for (int i = 0; i < 200; i += 3) {
        s.remove(key_name(i));
        model.erase(key_name(i));
      }
      for (int i = 0; i < 60; ++i) {
        Employee e = make_employee(key_name(i + 1000), 2);
        s.put(e);
        model[e.last] = e;
      }
      s.close();
    }
    for (Backend reader : kAllBackends) {
      StoreOptions o;
      o.backend = reader;
      RecordStore s(path, o);
      EXPECT_EQ(contents(s), model) << to_string(writer) << " -> " << to_string(reader);
    }
  }
}

}  // namespace
}  // namespace iolab::store
