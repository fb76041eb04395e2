// Reading a results file's text in one pass (results_from_text, read_results).
#include <exception>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/base/input_file.h"
#include "iolab/results/record.h"
#include "json.h"

namespace iolab::results {

using nlohmann::json;

Results read_results(const std::filesystem::path& path) {
  // Bounded before parsing: an endless or huge input (base/input_file.h).
  // One that cannot be read fails (exit 1), as a missing one does (docs/results-format.md).
  return results_from_text(read_input_file(path, "results file", kResultsFileMaxBytes, Unreadable::Failure),
                           path.string());
}

namespace {

// Builds JSON trees from a parser's events, as nlohmann's own DOM parser does
// (a repeated key: the last value counts).
class TreeBuilder {
 public:
  void value(json&& v) { place(std::move(v)); }
  void start(json&& container) { open_.push_back(place(std::move(container))); }
  void end() { open_.pop_back(); }
  void key(std::string&& k) { slot_ = &(*open_.back())[std::move(k)]; }
  json take() { return std::move(root_); }
  json& root() { return root_; }

 private:
  json* place(json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& top = *open_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  json root_;
  std::vector<json*> open_;  // the containers open, innermost last
  json* slot_ = nullptr;     // the member an object's next value goes to
};

// One parse of a results file (nlohmann's SAX events): everything but the
// records becomes the header tree (its "results" an empty array); each record
// becomes a tree of its own, is read into its Result as soon as it is complete
// (at the schema version `version`), and dropped. The first record that cannot
// be read is kept, not thrown: the syntax and the header are checked first.
class ResultsPass {
 public:
  ResultsPass(const json_detail::Reader& rd, int version) : rd_(&rd), version_(version) {}

  json header() { return header_.take(); }
  std::vector<Result> results;
  std::exception_ptr record_error;

  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) { return scalar(json(v)); }
  bool string(std::string& v) { return scalar(json(std::move(v))); }
  bool binary(json::binary_t& v) { return scalar(json(std::move(v))); }
  bool start_object(std::size_t) { return start(json::object(), false); }
  bool start_array(std::size_t) { return start(json::array(), true); }
  bool end_object() { return end(); }
  bool end_array() { return end(); }
  bool key(std::string& k) {
    if (depth_ == 1) top_results_ = k == "results";  // a member of the top object
    (in_record() ? record_ : header_).key(std::move(k));
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) { throw e; }

 private:
  // Inside the records array, at or below its elements.
  bool in_record() const { return in_records_ && depth_ >= 2; }
  bool scalar(json&& v) {
    if (!in_record()) {
      header_.value(std::move(v));
      return true;
    }
    record_.value(std::move(v));
    if (depth_ == 2) read_record();
    return true;
  }
  bool start(json&& container, bool array) {
    bool records_start = array && depth_ == 1 && top_results_;
    (in_record() ? record_ : header_).start(std::move(container));
    ++depth_;
    if (records_start) {  // a repeated "results" member: the last one counts, as in a whole tree
      in_records_ = true;
      results.clear();
      record_error = nullptr;
      index_ = 0;
    }
    return true;
  }
  bool end() {
    --depth_;
    if (in_record()) {
      record_.end();
      if (depth_ == 2) read_record();
      return true;
    }
    header_.end();
    if (in_records_ && depth_ == 1) in_records_ = false;
    return true;
  }
  void read_record() {
    json record = record_.take();
    std::size_t i = index_++;
    if (record_error) return;  // only the first unreadable record is told
    try {
      results.push_back(json_detail::result_from_json(*rd_, record, "results[" + std::to_string(i) + "]", version_));
    } catch (const std::bad_alloc&) {
      throw;
    } catch (...) {
      record_error = std::current_exception();
    }
  }

  const json_detail::Reader* rd_;
  int version_;
  TreeBuilder header_, record_;
  int depth_ = 0;  // containers open
  bool top_results_ = false, in_records_ = false;
  std::size_t index_ = 0;
};

}  // namespace

Results results_from_text(std::string_view text, const std::string& source) {
  // Nested deep enough to exhaust the stack of whatever walks it: refused unparsed.
  if (json_nesting_depth(text) > kJsonMaxDepth)
    throw UsageError("results file " + source, "nested deeper than " + std::to_string(kJsonMaxDepth) +
                                                   " levels (iolab's results nest about 8): not iolab results");
  // The whole file is never one JSON tree (a tree of 100,000 records is several times the text;
  // issue 29 item 8), and it is parsed once: each record is read as soon as it is parsed, at
  // the current schema (iolab writes "schema_version" after the records). The errors are those
  // of results_from_json on the whole tree, in the same order: syntax, then the header, then
  // the first unreadable record. A file of another schema is parsed again at its own.
  json_detail::Reader rd(source);
  auto pass = [&](int version) {
    ResultsPass p(rd, version);
    try {
      json::sax_parse(text, &p);
    } catch (const json::exception& e) {  // parse errors, and numbers out of range ("1e999")
      throw Error("read results", source, "not JSON (" + std::string(e.what()) + ")", EINVAL);
    }
    return p;
  };
  ResultsPass p = pass(kResultsSchemaVersion);
  int version = 0;
  Results out = json_detail::header_from_json(rd, p.header(), version);
  if (version != kResultsSchemaVersion) p = pass(version);
  if (p.record_error) std::rethrow_exception(p.record_error);
  out.results = std::move(p.results);
  return out;
}

}  // namespace iolab::results
