// A full filesystem is an Error from put, never a SIGBUS: the mmap backend
// allocates blocks (posix_fallocate) before it stores into them.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "iolab/base/error.h"
#include "iolab/io/scratch.h"
#include "iolab/store/record_store.h"
#include "store/store_test_util.h"

namespace iolab::store {
namespace {

TEST(StoreFullDisk, PutFailsCleanlyOnEveryBackend) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  io::ScratchDir scratch;
  auto mnt = scratch.path() / "small-fs";
  std::filesystem::create_directory(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=256k") != 0) {
    int err = errno;
    std::filesystem::remove(mnt);
    GTEST_SKIP() << "cannot mount tmpfs: " << std::strerror(err);
  }
  for (Backend b : kAllBackends) {
    SCOPED_TRACE(std::string(to_string(b)));
    auto path = mnt / std::string(to_string(b));
    StoreOptions o;
    o.backend = b;
    o.mmap_grow_step = 64 * 1024;
    o.stage_buffer = 16 * 1024;
    bool failed = false;
    std::uint64_t stored = 0;
    {
      RecordStore s(path, o);
      try {
        for (int i = 0; i < 100000; ++i) {
          Employee e = testing::make_employee(testing::key_name(i), 1);
          e.comments.assign(900, 'c');
          s.put(e);
          s.commit();  // buffered: reach the file now
          ++stored;
        }
      } catch (const Error& e) {
        failed = true;
        EXPECT_EQ(e.error_number(), ENOSPC) << e.what();
      }
      EXPECT_TRUE(failed) << "the 256 KiB filesystem never filled";
      EXPECT_GT(stored, 10u);
      try {
        s.close();
      } catch (const Error&) {  // the close may also find the disk full
      }
    }
    std::filesystem::remove(path);
  }
  ::umount(mnt.c_str());
  std::filesystem::remove(mnt);
}

}  // namespace
}  // namespace iolab::store
