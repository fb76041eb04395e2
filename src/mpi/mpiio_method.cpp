// MPI-IO behind the io layer's File interface, so the region workload moves
// bytes through MPI_File_read_at/write_at(_all) the same way it moves them
// through pread or mmap.
#include <climits>

#include "iolab/base/error.h"
#include "iolab/mpi/mpi.h"

namespace iolab::mpi {
namespace {

std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<std::size_t>(len));
}

class MpiIoFile final : public io::File {
 public:
  MpiIoFile(const std::filesystem::path& p, io::Access a, MPI_Comm comm, bool collective)
      : File(p), collective_(collective) {
    int rc = MPI_File_open(comm, p.c_str(), a == io::Access::Read ? MPI_MODE_RDONLY : MPI_MODE_RDWR, MPI_INFO_NULL, &fh_);
    if (rc != MPI_SUCCESS) throw Error("MPI_File_open", p.string(), mpi_error_text(rc), EIO);
    MPI_File_set_errhandler(fh_, MPI_ERRORS_RETURN);
    open_ = true;
  }
  ~MpiIoFile() override {
    if (open_) MPI_File_close(&fh_);
  }

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    int got = transfer(false, offset, dst.data(), dst.size());
    counters_.bytes_read += static_cast<std::uint64_t>(got);
    return static_cast<std::size_t>(got);
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    int put = transfer(true, offset, const_cast<std::byte*>(src.data()), src.size());
    counters_.bytes_written += static_cast<std::uint64_t>(put);
    if (static_cast<std::size_t>(put) != src.size() && !error_)
      error_ = Error("MPI_File_write_at", path().string(),
                     "short write: " + std::to_string(put) + " of " + std::to_string(src.size()) + " bytes at offset " +
                         std::to_string(offset),
                     EIO);
  }
  // MPI_File_sync: collective over the file's ranks; ROMIO makes it an fsync.
  void sync(io::Durability d) override {
    if (d == io::Durability::None || d == io::Durability::Flush) return;
    if (!supports(d)) throw Error(std::string(io::to_string(d)), path().string(), "MPI-IO offers MPI_File_sync only", EOPNOTSUPP);
    ++counters_.calls;
    int rc = MPI_File_sync(fh_);
    if (rc != MPI_SUCCESS && !error_) error_ = Error("MPI_File_sync", path().string(), mpi_error_text(rc), EIO);
  }
  bool supports(io::Durability d) const override {
    return d == io::Durability::None || d == io::Durability::Flush || d == io::Durability::Fdatasync ||
           d == io::Durability::Fsync;
  }
  std::uint64_t size() override {
    MPI_Offset s = 0;
    if (MPI_File_get_size(fh_, &s) != MPI_SUCCESS) return 0;
    return static_cast<std::uint64_t>(s);
  }
  // Collective: every rank closes, then the first error kept from a data call is thrown.
  void close() override {
    if (open_) {
      open_ = false;
      int rc = MPI_File_close(&fh_);
      if (rc != MPI_SUCCESS && !error_) error_ = Error("MPI_File_close", path().string(), mpi_error_text(rc), EIO);
    }
    if (error_) {
      Error e = *error_;
      error_.reset();
      throw e;
    }
  }

 private:
  // One call; a failure is kept, not thrown, so this rank keeps making the
  // collective calls every other rank makes (it would deadlock them otherwise).
  int transfer(bool write, std::uint64_t offset, std::byte* data, std::size_t n) {
    if (n > static_cast<std::size_t>(INT_MAX)) throw Error(write ? "write" : "read", path().string(), "MPI counts are int: at most 2 GiB per call", EINVAL);
    MPI_Status st;
    int count = static_cast<int>(n);
    const char* op = write ? (collective_ ? "MPI_File_write_at_all" : "MPI_File_write_at")
                           : (collective_ ? "MPI_File_read_at_all" : "MPI_File_read_at");
    ++counters_.calls;
    int rc;
    if (write)
      rc = collective_ ? MPI_File_write_at_all(fh_, static_cast<MPI_Offset>(offset), data, count, MPI_BYTE, &st)
                       : MPI_File_write_at(fh_, static_cast<MPI_Offset>(offset), data, count, MPI_BYTE, &st);
    else
      rc = collective_ ? MPI_File_read_at_all(fh_, static_cast<MPI_Offset>(offset), data, count, MPI_BYTE, &st)
                       : MPI_File_read_at(fh_, static_cast<MPI_Offset>(offset), data, count, MPI_BYTE, &st);
    if (rc != MPI_SUCCESS) {
      if (!error_) error_ = Error(op, path().string(), mpi_error_text(rc), EIO);
      return 0;
    }
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    return got;
  }

  MPI_File fh_{};
  bool open_ = false;
  bool collective_;
  std::optional<Error> error_;
};

class MpiIoMethod final : public io::Method {
 public:
  MpiIoMethod(MPI_Comm comm, bool collective) : comm_(comm), collective_(collective) {}
  std::string_view name() const override { return collective_ ? "mpiio-collective" : "mpiio"; }
  std::string_view description() const override {
    return collective_ ? "MPI-IO collective MPI_File_read_at_all/write_at_all" : "MPI-IO independent MPI_File_read_at/write_at";
  }
  io::MethodTraits traits(const io::FileOptions&) const override {
    io::MethodTraits t;
    t.library_calls = true;  // ROMIO decides which system calls to make: the kernel counts them
    t.data_sync = io::Durability::Fsync;
    return t;
  }
  io::Availability probe(const std::filesystem::path&) const override { return {}; }
  std::unique_ptr<io::File> open(const std::filesystem::path& p, io::Access a, const io::FileOptions&) const override {
    return std::make_unique<MpiIoFile>(p, a, comm_, collective_);
  }

 private:
  MPI_Comm comm_;
  bool collective_;
};

}  // namespace

std::unique_ptr<io::Method> mpiio_method(MPI_Comm comm, bool collective) {
  return std::make_unique<MpiIoMethod>(comm, collective);
}

}  // namespace iolab::mpi
