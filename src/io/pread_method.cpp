// pread(2)/pwrite(2): positional calls, no shared file position, so several
// threads may each own a File on one path (the FileChannel analogue).
#include "descriptor_file.h"
#include "methods.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

class PreadFile final : public DescriptorFile {
 public:
  PreadFile(const std::filesystem::path& p, Access a) : DescriptorFile(p, sys::open_existing(p, a), "pread") {}

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    return sys::pread_full(fd_.get(), dst, offset, path(), counters_);
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    sys::pwrite_full(fd_.get(), src, offset, path(), counters_);
  }
};

class PreadMethod final : public Method {
 public:
  std::string_view name() const override { return "pread"; }
  MethodTraits traits(const FileOptions&) const override { return {}; }
  std::string_view description() const override {
    return "pread(2)/pwrite(2) at explicit offsets, no seeks; the FileChannel analogue";
  }
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  std::unique_ptr<File> open(const std::filesystem::path& p, Access a, const FileOptions&) const override {
    return std::make_unique<PreadFile>(p, a);
  }
};

}  // namespace

const Method& pread_method() {
  static const PreadMethod m;
  return m;
}

}  // namespace iolab::io
