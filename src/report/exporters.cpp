#include "iolab/report/exporter.h"

#include "common.h"

#include <fmt/format.h>

#include "iolab/base/units.h"
#include "iolab/results/console.h"
#include "iolab/report/cost_model.h"
#include "iolab/report/html.h"

namespace iolab::report {
namespace {

class JsonExporter final : public Exporter {
 public:
  std::string_view name() const override { return "json"; }
  std::string_view extension() const override { return ".json"; }
  // The records, and the cost model of their sweeps when they hold any
  // (docs/model.md): derived from the records, so a reader may ignore it.
  std::string render(const results::Results& r, const ExportContext&) const override {
    nlohmann::json j = results::to_json(r);
    if (CostModel m = fit_cost_model(r.results); !m.fits.empty()) j["model"] = to_json(m);
    return j.dump(2) + "\n";
  }
  bool wrote(std::string_view head) const override {
    return head.starts_with("{") && head.find("\"format\": \"iolab-results\"") != std::string_view::npos;
  }
};

class CsvExporter final : public Exporter {
 public:
  std::string_view name() const override { return "csv"; }
  std::string_view extension() const override { return ".csv"; }
  std::string render(const results::Results& r, const ExportContext&) const override { return results::to_csv(r); }
  bool wrote(std::string_view head) const override { return head.starts_with("suite,experiment,method,"); }
};

class HtmlExporter final : public Exporter {
 public:
  std::string_view name() const override { return "html"; }
  std::string_view extension() const override { return ".html"; }
  std::string render(const results::Results& r, const ExportContext& c) const override {
    ReportOptions options;
    options.source_names = {c.json.filename().string()};
    options.title = c.title.empty() ? "iolab run " + c.json.stem().string() : c.title;
    return render_html_report({r}, options);
  }
  bool wrote(std::string_view head) const override {
    return head.starts_with("<!DOCTYPE html>") && (head.find("<meta name=\"generator\" content=\"iolab\">") != std::string_view::npos ||
                                                   head.find("<title>iolab") != std::string_view::npos);
  }
};

// One table of every record: what it measured and its median rate; the
// full figures stay in the JSON.
class MarkdownExporter final : public Exporter {
 public:
  static constexpr std::string_view kFirstLine = "<!-- iolab results (Markdown) -->";
  std::string_view name() const override { return "markdown"; }
  std::string_view extension() const override { return ".md"; }
  std::string render(const results::Results& rs, const ExportContext& c) const override {
    auto cell = markdown_cell;
    std::string out = fmt::format("{}\n# iolab results{}\n\n", kFirstLine,
                                  c.json.empty() ? "" : " (" + cell(c.json.filename().string()) + ")");
    if (rs.incomplete) out += "**Incomplete:** " + cell(*rs.incomplete) + "\n\n";
    using A = MarkdownTable::Align;
    MarkdownTable table({"suite", "experiment", "method", "op", "block", "file", "cache", "median", "reps", "verified"},
                        {A::Left, A::Left, A::Left, A::Left, A::Right, A::Right, A::Left, A::Right, A::Right});
    for (const auto& r : rs.results) {
      const std::string median = r.skipped ? "skipped: " + *r.skipped : format_rate(r.median_mib_per_s() * 1048576.0);
      table.add({r.suite, r.experiment, r.method, std::string(results::to_string(r.op)),
                 format_bytes(static_cast<double>(r.block_size)), format_bytes(static_cast<double>(r.file_size)),
                 results::cache_name(r), median, std::to_string(r.reps), r.verified ? "yes" : "no"});
    }
    return out + table.render();
  }
  bool wrote(std::string_view head) const override { return head.starts_with(kFirstLine); }
};

class ConsoleExporter final : public Exporter {
 public:
  std::string_view name() const override { return "console"; }
  std::string_view extension() const override { return ""; }
  std::string render(const results::Results& r, const ExportContext& c) const override {
    return results::format_tables(r.results, c.color);
  }
  bool wrote(std::string_view) const override { return false; }  // never a file
};

// Each exporter is stateless: one instance of each serves every caller.
template <typename E>
const Exporter& the_exporter() {
  static const E e;
  return e;
}

}  // namespace

const Exporter& json_exporter() { return the_exporter<JsonExporter>(); }
const Exporter& csv_exporter() { return the_exporter<CsvExporter>(); }
const Exporter& html_exporter() { return the_exporter<HtmlExporter>(); }
const Exporter& markdown_exporter() { return the_exporter<MarkdownExporter>(); }
const Exporter& console_exporter() { return the_exporter<ConsoleExporter>(); }

std::vector<const Exporter*> results_exporters() { return {&json_exporter(), &csv_exporter(), &html_exporter()}; }

}  // namespace iolab::report
