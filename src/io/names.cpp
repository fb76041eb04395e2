// Names of the io enums, for options, job files and results.
#include <string>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/io/file.h"

namespace iolab::io {

namespace {

constexpr NameTable<Durability, 6> kDurabilities{
    {{Durability::None, "none"}, {Durability::Flush, "flush"}, {Durability::SyncFileRange, "sync_file_range"},
     {Durability::Fdatasync, "fdatasync"}, {Durability::Fsync, "fsync"}, {Durability::MsyncSync, "msync"}}};
constexpr NameTable<Advice, 4> kAdvice{
    {{Advice::Normal, "normal"}, {Advice::Sequential, "sequential"}, {Advice::Random, "random"}, {Advice::WillNeed, "willneed"}}};

}  // namespace

std::string_view to_string(Durability d) { return name_of(kDurabilities, d); }
Durability parse_durability(std::string_view name) { return parse_name(kDurabilities, name, "durability"); }
std::string_view to_string(Advice a) { return name_of(kAdvice, a); }
Advice parse_advice(std::string_view name) { return parse_name(kAdvice, name, "madvise hint"); }

namespace {
constexpr std::pair<bool MethodTraits::*, std::string_view> kTraitNames[] = {
    {&MethodTraits::bypasses_page_cache, "bypasses_page_cache"},
    {&MethodTraits::needs_alignment, "needs_alignment"},
    {&MethodTraits::direct_optional, "direct_optional"},
    {&MethodTraits::queued, "queued"},
    {&MethodTraits::user_space_buffer, "user_space_buffer"},
    {&MethodTraits::library_calls, "library_calls"},
    {&MethodTraits::maps_file, "maps_file"},
    {&MethodTraits::positional, "positional"},
};
}  // namespace

std::vector<std::string_view> trait_names(const MethodTraits& t) {
  std::vector<std::string_view> out;
  for (const auto& [member, name] : kTraitNames)
    if (t.*member) out.push_back(name);
  return out;
}

MethodTraits traits_from_names(std::span<const std::string> names) {
  MethodTraits t;
  for (const auto& [member, name] : kTraitNames) {
    bool named = false;
    for (const auto& n : names) named = named || n == name;
    t.*member = named;
  }
  return t;
}

std::uint64_t File::read_sequence(std::uint64_t offset, std::uint64_t count, std::span<std::byte> dst) {
  std::uint64_t bytes = 0;
  for (std::uint64_t i = 0; i < count; ++i, offset += dst.size()) {
    std::size_t got = read_at(offset, dst);
    bytes += got;
    if (got < dst.size()) break;
  }
  return bytes;
}

void File::submit(std::span<IoRequest> requests) {
  for (auto& r : requests) {
    if (r.kind == IoRequest::Kind::Read) {
      r.result = read_at(r.offset, r.data);
    } else {
      write_at(r.offset, r.data);
      r.result = r.data.size();
    }
  }
}

// Methods without a queue: one request at a time, in the order given.
void File::stream(RequestSource& source, bool time_requests) {
  IoRequest r;
  while (source.next(r)) {
    if (time_requests) r.submitted_ns = steady_ns();
    if (r.kind == IoRequest::Kind::Read) {
      r.result = read_at(r.offset, r.data);
    } else {
      write_at(r.offset, r.data);
      r.result = r.data.size();
    }
    if (time_requests) r.completed_ns = steady_ns();
    source.done(r);
  }
}

Availability Method::supports_options(const FileOptions&, const std::filesystem::path&) const { return {}; }

}  // namespace iolab::io
