// libFuzzer target for traces (issue 41): any bytes are, as a trace, either
// refused in one line naming the trace (UsageError) or read into operations
// that write back to text that reads back the same; as strace's output, a
// trace the reader takes, with as many operations as the converter said;
// as a fio iolog, refused in one line or such a trace.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "iolab/base/error.h"
#include "iolab/trace/import.h"
#include "iolab/trace/trace.h"

using namespace iolab;
using iolab::fuzz::require;

namespace {

bool one_line_naming(const std::exception& e, const char* name) {
  const std::string what = e.what();
  return what.find(name) != std::string::npos && what.find('\n') == std::string::npos;
}

// Reads `text` whole; the operations, and their count through `count`.
std::vector<trace::Op> read_back(const std::string& text, trace::Header& header) {
  std::istringstream in(text);
  trace::Reader r(in, "back");
  header = r.header();
  std::vector<trace::Op> ops;
  trace::Op op;
  while (r.next(op)) ops.push_back(op);
  return ops;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);

  // As a trace.
  {
    std::istringstream in(bytes);
    trace::Header header;
    std::vector<trace::Op> ops;
    bool read = false;
    try {
      trace::Reader r(in, "fuzz.iotrace");
      header = r.header();
      trace::Op op;
      while (r.next(op)) ops.push_back(op);
      read = true;
    } catch (const UsageError& e) {
      require(one_line_naming(e, "fuzz.iotrace"));
    }
    if (read) {
      std::ostringstream out;
      trace::Writer w(out, header);
      for (const auto& op : ops) w.write(op);
      trace::Header again;
      require(read_back(out.str(), again) == ops);
      require(again.files.size() == header.files.size());
      require(again.op_count == header.op_count);
    }
  }

  // As strace's output: whatever it holds, a trace the reader takes.
  {
    std::istringstream in(bytes);
    std::ostringstream out;
    trace::ImportSummary s;
    bool converted = false;
    try {
      s = trace::strace_to_trace(in, "fuzz", trace::StraceSettings{}, out);
      converted = true;
    } catch (const Error& e) {  // more files than a trace holds
      require(std::string(e.what()).find("files") != std::string::npos);
    }
    if (converted) {
      trace::Header header;
      require(read_back(out.str(), header).size() == s.ops);
      require(header.files.size() == s.files);
    }
  }

  // As a fio iolog.
  {
    std::istringstream in(bytes);
    std::ostringstream out;
    try {
      const trace::ImportSummary s = trace::fio_iolog_to_trace(in, "fuzz.iolog", out);
      trace::Header header;
      require(read_back(out.str(), header).size() == s.ops);
    } catch (const UsageError& e) {
      require(one_line_naming(e, "fuzz.iolog"));
    }
  }
  return 0;
}
