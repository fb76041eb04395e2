// Internal: a File that is one descriptor moved by plain system calls
// (pread, syscall, vectored, direct): its sync, size and close are the
// descriptor's, written here once.
#pragma once

#include <filesystem>
#include <string_view>
#include <utility>

#include "iolab/io/file.h"
#include "iolab/io/syscall.h"

namespace iolab::io {

class DescriptorFile : public File {
 public:
  void sync(Durability d) override {
    if (!supports(d)) sys::unsupported(d, method_, path());
    sys::sync_fd(fd_.get(), d, path(), counters_);
  }
  bool supports(Durability d) const override { return sys::fd_supports(d); }
  std::uint64_t size() override { return sys::file_size(fd_.get(), path()); }
  void close() override { fd_.close(path()); }

 protected:
  // `method` names the method in the error of a durability it cannot give.
  DescriptorFile(const std::filesystem::path& p, sys::Fd fd, std::string_view method)
      : File(p), fd_(std::move(fd)), method_(method) {}

  sys::Fd fd_;

 private:
  std::string_view method_;
};

}  // namespace iolab::io
