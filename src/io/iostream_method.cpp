// std::fstream with a settable buffer (pubsetbuf before open). The stream is
// opened through /proc/self/fd of a descriptor opened with O_NOFOLLOW, so it
// is the very file that was checked, and that descriptor serves fsync.
#include <fstream>

#include "iolab/io/buffer.h"
#include "methods.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kIostreamFacts{
    "iostream", "std::fstream with a settable buffer (default 4 KiB); the BufferedInput/OutputStream analogue",
    {.user_space_buffer = true,
     .library_calls = true,  // the filebuf decides when to call the kernel
     .positional = false}};

class IostreamFile final : public File {
 public:
  IostreamFile(const std::filesystem::path& p, Access a, const FileOptions& o)
      : File(p), fd_(sys::open_existing(p, a)), writable_(a == Access::ReadWrite) {
    if (o.stream_buffer > 0) {
      buffer_ = Buffer(o.stream_buffer, BufferKind::Heap);
      stream_.rdbuf()->pubsetbuf(reinterpret_cast<char*>(buffer_.data()),
                                 static_cast<std::streamsize>(o.stream_buffer));
    } else {
      stream_.rdbuf()->pubsetbuf(nullptr, 0);  // unbuffered
    }
    auto mode = std::ios::binary | std::ios::in | (a == Access::ReadWrite ? std::ios::out : std::ios::openmode{});
    stream_.open("/proc/self/fd/" + std::to_string(fd_.get()), mode);
    if (!stream_.is_open()) sys::fail("open (fstream)", p, errno ? errno : EIO);
  }

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    position(offset, Last::Read);
    stream_.read(reinterpret_cast<char*>(dst.data()), static_cast<std::streamsize>(dst.size()));
    auto n = static_cast<std::size_t>(stream_.gcount());
    if (stream_.bad()) failed("read");
    stream_.clear();  // eof/fail after a short read is not an error
    pos_ += n;
    counters_.bytes_read += n;
    return n;
  }

  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    // A filebuf opened for input fails a write without a system call, so
    // errno would say nothing: name the cause here.
    if (!writable_) throw Error("write", path().string(), "file was opened for reading only", EBADF);
    position(offset, Last::Write);
    errno = 0;
    stream_.write(reinterpret_cast<const char*>(src.data()), static_cast<std::streamsize>(src.size()));
    if (!stream_) failed("write");
    pos_ += src.size();
    counters_.bytes_written += src.size();
  }

  void sync(Durability d) override {
    if (!supports(d)) sys::unsupported(d, kIostreamFacts.name, path());
    if (d == Durability::None) return;
    flush();
    sys::sync_fd(fd_.get(), d, path(), counters_);
  }
  bool supports(Durability d) const override { return sys::fd_supports(d); }
  std::uint64_t size() override {
    flush();
    return sys::file_size(fd_.get(), path());
  }
  void close() override {
    if (!stream_.is_open()) return;
    errno = 0;
    stream_.close();
    if (stream_.fail()) {
      stream_.clear();
      failed("close (final flush)");
    }
    fd_.close(path());
  }

 private:
  enum class Last { None, Read, Write };
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};

  [[noreturn]] void failed(const char* op) {
    int err = errno != 0 ? errno : EIO;  // filebuf keeps no errno of its own
    stream_.clear();
    pos_ = kUnknown;
    sys::fail(op, path(), err);
  }
  // A filebuf, like C stdio, needs a seek between writing and reading.
  void position(std::uint64_t offset, Last next) {
    if (offset != pos_ || (last_ != Last::None && last_ != next)) {
      stream_.seekg(static_cast<std::streamoff>(offset));
      if (!stream_) failed("seek");
      pos_ = offset;
    }
    last_ = next;
  }
  void flush() {
    errno = 0;
    stream_.flush();
    if (!stream_) failed("flush");
  }

  sys::Fd fd_;
  bool writable_;
  Buffer buffer_;
  std::fstream stream_;
  std::uint64_t pos_ = 0;
  Last last_ = Last::None;
};

}  // namespace

const Method& iostream_method() { return the_method<FileMethod<IostreamFile>>(kIostreamFacts); }

}  // namespace iolab::io
