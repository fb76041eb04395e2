// Shared helpers for the io tests: method variants, a tmpfs mounted by the
// test (root only), and error expectations. Whole-file reads that do not go
// through the code under test: iolab/testing/files.h.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/testing/files.h"

namespace iolab::testing {

// Each io_uring option alone, by name: the variants and the option tests run over these.
inline std::vector<std::pair<const char*, void (*)(io::UringOptions&)>> uring_option_settings() {
  return {
      {"registered_files", [](io::UringOptions& u) { u.registered_files = true; }},
      {"fixed_buffers", [](io::UringOptions& u) { u.fixed_buffers = true; }},
      {"sqpoll", [](io::UringOptions& u) { u.sqpoll = true; }},
      {"single_issuer", [](io::UringOptions& u) { u.single_issuer = true; }},
      {"coop_taskrun", [](io::UringOptions& u) { u.coop_taskrun = true; }},
  };
}

// One method with one set of options: the unit the conformance suite runs over.
struct Variant {
  std::string label;    // gtest-safe name: letters, digits, underscores
  std::string method;   // registry name
  io::FileOptions options;
};

// Every file method with its defaults, plus the option settings the issue
// asks to cover: unbuffered stdio, many small iovecs, mmap grown in 4 KiB
// steps, O_DIRECT with the bounce policy, io_uring with O_DIRECT, one
// submission at a time, and each of its io::UringOptions; libaio at a depth
// below the batch sizes, one submission at a time.
inline std::vector<Variant> all_variants() {
  std::vector<Variant> out;
  for (const auto* m : io::file_methods()) {
    std::string label(m->name());
    for (auto& c : label)
      if (c == '-') c = '_';
    out.push_back({label, std::string(m->name()), io::FileOptions{}});
  }
  io::FileOptions o;
  o = {};
  o.stream_buffer = 0;
  out.push_back({"stdio_unbuffered", "stdio", o});
  o = {};
  o.stream_buffer = 0;
  out.push_back({"iostream_unbuffered", "iostream", o});
  o = {};
  o.iov_segment = 100;  // not a power of two; 1 MiB needs ~10k iovecs, > IOV_MAX
  out.push_back({"vectored_iov100", "vectored", o});
  o = {};
  o.mmap_grow_step = 4096;
  o.mmap_window = 8192;  // reads cross many windows
  out.push_back({"mmap_step4k", "mmap", o});
  o = {};
  o.unaligned = io::UnalignedPolicy::Bounce;
  out.push_back({"direct_bounce", "direct", o});
  o = {};
  o.direct = true;
  o.queue_depth = 4;
  out.push_back({"io_direct", "io_uring", o});
  o = {};
  o.queue_depth = 3;
  o.submit_batch = 1;
  out.push_back({"io_batch1", "io_uring", o});
  for (auto [label, set] : uring_option_settings()) {
    if (std::string_view(label) == "fixed_buffers") continue;  // conformance_variants(): needs register_buffers
    o = {};
    o.direct = true;
    o.queue_depth = 4;
    set(o.uring);
    out.push_back({std::string("io_direct_") + label, "io_uring", o});
  }
  o = {};
  o.queue_depth = 2;
  o.submit_batch = 1;
  out.push_back({"libaio_qd2_batch1", "libaio", o});
  return out;
}

// all_variants() and io_uring with fixed buffers, which refuses requests
// outside the buffers given to File::register_buffers: the conformance
// suite registers its buffers, the other suites do not.
inline std::vector<Variant> conformance_variants() {
  std::vector<Variant> out = all_variants();
  io::FileOptions o;
  o.direct = true;
  o.queue_depth = 4;
  o.uring.fixed_buffers = true;
  out.push_back({"io_direct_fixed_buffers", "io_uring", o});
  return out;
}

// gtest prints the label instead of the struct's bytes.
inline void PrintTo(const Variant& v, std::ostream* os) { *os << v.label; }

// True when the variant refuses requests that break O_DIRECT alignment
// (only the direct method has a bounce path).
inline bool rejects_unaligned(const Variant& v) {
  return io::find_file_method(v.method).traits(v.options).needs_alignment &&
         !(v.method == "direct" && v.options.unaligned == io::UnalignedPolicy::Bounce);
}

// Why this kernel cannot run the variant's options here, or "" when it can.
inline std::string unsupported_options(const Variant& v, const std::filesystem::path& dir) {
  io::Availability a = io::find_file_method(v.method).supports_options(v.options, dir);
  return a.available ? "" : a.reason;
}

// Methods that can write (all of them): the write-error tests run over these.
inline std::vector<std::string> write_method_names() {
  std::vector<std::string> out;
  for (const auto* m : io::file_methods()) out.emplace_back(m->name());
  return out;
}

// A new scratch file "<stem>-N" holding `size` pattern bytes, written with pread's pwrite.
inline std::filesystem::path write_pattern_file(io::ScratchDir& scratch, std::string_view stem, std::uint64_t size,
                                                std::uint64_t seed) {
  auto p = scratch.create_unique_file(stem);
  io::Buffer b(static_cast<std::size_t>(size), io::BufferKind::Aligned);
  io::fill_pattern(seed, 0, b.span());
  auto f = io::find_file_method("pread").open(p, io::Access::ReadWrite);
  f->write_at(0, b.span());
  f->close();
  return p;
}

// Changes the byte at `offset` behind every method's back (plain pread and
// pwrite): the data a check must now refuse.
inline void overwrite_byte(const std::filesystem::path& p, std::uint64_t offset) {
  int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << p;
  unsigned char b = 0;
  ASSERT_EQ(::pread(fd, &b, 1, static_cast<off_t>(offset)), 1);
  b ^= 0xFF;
  ASSERT_EQ(::pwrite(fd, &b, 1, static_cast<off_t>(offset)), 1);
  ::close(fd);
}

// A tmpfs mounted by the test in a fresh directory, unmounted (and the
// directory removed) by the destructor, whatever happened in between.
// mount() fails without root (or CAP_SYS_ADMIN): why_not() then says why.
class TmpfsMount {
 public:
  // `type`: "tmpfs", or "ramfs" (no O_TMPFILE, no O_DIRECT, no size limit).
  TmpfsMount(const std::filesystem::path& parent, const std::string& options, const char* type = "tmpfs") {
    if (::geteuid() != 0) {
      why_not_ = "needs root to mount a tmpfs (running as uid " + std::to_string(::geteuid()) + ")";
      return;
    }
    std::string tmpl = (parent / "tmpfs-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      why_not_ = std::string("mkdtemp failed: ") + std::strerror(errno);
      return;
    }
    dir_ = tmpl;
    if (::mount(type, dir_.c_str(), type, MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
      why_not_ = std::string("mount -t ") + type + " -o " + options + " failed: " + std::strerror(errno);
      ::rmdir(dir_.c_str());
      dir_.clear();
      return;
    }
    mounted_ = true;
  }
  ~TmpfsMount() {
    if (mounted_ && ::umount2(dir_.c_str(), 0) != 0) ::umount2(dir_.c_str(), MNT_DETACH);
    if (!dir_.empty()) ::rmdir(dir_.c_str());
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  const std::filesystem::path& dir() const { return dir_; }

  // Remounts read-only; returns an empty string or why it failed.
  std::string remount_read_only() {
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0)
      return std::string("remount ro failed: ") + std::strerror(errno);
    return {};
  }

 private:
  std::filesystem::path dir_;
  std::string why_not_;
  bool mounted_ = false;
};

// Runs f and returns the iolab::Error it threw; fails the test when it threw
// nothing or something else.
template <typename F>
std::optional<Error> expect_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-iolab exception: " << e.what();
    return std::nullopt;
  }
  ADD_FAILURE() << "expected an iolab::Error, nothing was thrown";
  return std::nullopt;
}

}  // namespace iolab::testing
