// pread(2)/pwrite(2): positional calls, no shared file position, so several
// threads may each own a File on one path (the FileChannel analogue).
#include "descriptor_file.h"
#include "methods.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kPreadFacts{
    "pread", "pread(2)/pwrite(2) at explicit offsets, no seeks; the FileChannel analogue", {}};

class PreadFile final : public DescriptorFile {
 public:
  PreadFile(const std::filesystem::path& p, Access a, const FileOptions&)
      : DescriptorFile(p, sys::open_existing(p, a), kPreadFacts.name) {}

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    return sys::pread_full(fd_.get(), dst, offset, path(), counters_);
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    sys::pwrite_full(fd_.get(), src, offset, path(), counters_);
  }
};

}  // namespace

const Method& pread_method() { return the_method<FileMethod<PreadFile>>(kPreadFacts); }

}  // namespace iolab::io
