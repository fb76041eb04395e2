// The store suite's key-value stores (our backends, LMDB, SQLite) behave alike: put,
// replace, get, remove, size, commit, close and reopen, both durabilities.
#include <map>

#include <gtest/gtest.h>

#include "iolab/base/error.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/kv_store.h"
#include "store/store_test_util.h"

namespace iolab::suites {
namespace {

using store::Employee;
using testing::fast_scratch_parent;
using testing::key_name;
using testing::make_employee;

TEST(KvStores, SameBehaviourEverywhere) {
  io::ScratchDir scratch(fast_scratch_parent());
  for (const std::string& name : kv_store_names()) {
    for (bool sync : {false, true}) {
      SCOPED_TRACE(name + (sync ? " sync" : " nosync"));
      auto path = scratch.create_unique_file(name);
      KvStoreOptions o;
      o.sync = sync;
      o.batch = 7;
      o.map_bytes = 64ull << 20;
      std::map<std::string, Employee> model;
      {
        auto e = open_kv_store(name, path, o);
        EXPECT_EQ(e->name(), name);
        for (int i = 0; i < 100; ++i) {
          Employee x = make_employee(key_name(i % 60), static_cast<std::uint64_t>(i));
          e->put(x);
          model[x.last] = x;
        }
        for (int i = 0; i < 60; i += 4) {
          EXPECT_TRUE(e->remove(key_name(i)));
          model.erase(key_name(i));
        }
        EXPECT_FALSE(e->remove("absent"));
        Employee got;
        EXPECT_FALSE(e->get("absent", got));
        for (const auto& [k, v] : model) {
          ASSERT_TRUE(e->get(k, got)) << k;
          EXPECT_EQ(got, v);
        }
        e->commit();
        EXPECT_EQ(e->size(), model.size());
        e->close();
      }
      auto e = open_kv_store(name, path, o);
      EXPECT_EQ(e->size(), model.size());
      Employee got;
      for (const auto& [k, v] : model) {
        ASSERT_TRUE(e->get(k, got)) << k;
        EXPECT_EQ(got, v);
      }
      e->close();
      // Only the file we named is left (no LMDB lock file, no SQLite WAL or shm).
      for (const char* extra : {"-lock", "-wal", "-shm", "-journal"})
        EXPECT_FALSE(std::filesystem::exists(path.string() + extra)) << extra;
    }
  }
  EXPECT_THROW(open_kv_store("tape", scratch.create_file("t"), KvStoreOptions{}), UsageError);
  EXPECT_NE(lmdb_version().find("LMDB 0."), std::string::npos);
  EXPECT_NE(sqlite_version().find("SQLite 3."), std::string::npos);
}

}  // namespace
}  // namespace iolab::suites
