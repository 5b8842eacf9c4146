// The replay of a trace directory (replay.hpp): records grouped by cluster, each cluster
// replayed on its own engine (cluster.cpp), findings merged by rule and site, and the
// report in clang's style (placed at the user's line, the inlined frames as notes) or as JSON.
#include <algorithm>
#include <optional>

#include "cluster.hpp"
#include "races.hpp"
#include "tmakit/terminal_text.hpp"
#include "tmakit/check/replay.hpp"
#include "tmakit/check/names.hpp"

namespace tmakit::check {

bool Report::has_errors() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == "error"; });
}

bool Report::clean() const {
  return std::none_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity != "note"; });
}

Report replay(const TraceDir& t, const ReplayOptions& options) {
  Report report;
  report.outcome = t.meta.outcome;
  report.kernel = t.meta.kernel;
  report.records = t.compact ? t.lane_records : t.records.size();  // records of threads, as replayed
  std::map<std::array<uint32_t, 3>, std::vector<size_t>> clusters;
  for (size_t i = 0; i < t.records.size(); ++i) {
    if (t.records[i].op == 0) {
      report.holes++;  // reserved and never written: a hang or fault cut the writer short
      continue;
    }
    clusters[detail::who(t.records[i], t.meta).cluster].push_back(i);
  }
  if (report.holes)
    report.notes.push_back(std::to_string(report.holes) + " records were reserved but never written (a thread "
                           "stopped between taking an index and writing its record); they are skipped");
  // Records the replay does not have (dropped past the capacity, or not read past the bound on
  // records of single threads): the end-of-program checks need them all. A hang's analysis keeps
  // going: there the missing records are polls of waits that never returned.
  const bool hung = t.meta.outcome == "timeout";
  const std::string end_checks = "the end-of-program checks (unbalanced transaction counts, deadlocks): ";
  if (const uint64_t dropped = t.meta.records_dropped()) {
    // Past the capacity: whole chunks of a lane's slots, or (traces recorded before chunks)
    // records past a counter's share or the buffer's end.
    const std::string why = std::to_string(dropped) + " records were dropped past the trace's capacity of " +
                            std::to_string(t.meta.capacity);
    if (!hung) report.skipped.push_back(end_checks + why + " (tmakit check --capacity raises it)");
    report.notes.push_back(why + ": the replay sees only those that fit" +
                           (hung ? std::string(", so waits may look unsatisfied")
                                 : std::string(", so no end-of-program check (unbalanced transaction counts, "
                                               "deadlocks) is made")) +
                           " (tmakit check --capacity raises it)");
  }
  if (t.compact)
    report.notes.push_back("the trace's warp records stand for more than " + std::to_string(t.max_lane_records) +
                           " records of single threads: each cluster is expanded and replayed on its own, and record "
                           "numbers count from the start of their cluster");
  if (!t.meta.records_lost.empty())
    report.skipped.push_back("every check of this launch: " + t.meta.records_lost);
  report.clusters = static_cast<int>(clusters.size());
  if (const auto& c = t.meta.clusters_traced) {
    const uint64_t launch_clusters = uint64_t{t.meta.grid[0]} * t.meta.grid[1] * t.meta.grid[2] /
                                     std::max<uint64_t>(1, uint64_t{t.meta.cluster[0]} * t.meta.cluster[1] * t.meta.cluster[2]);
    report.notes.push_back("only clusters " + std::to_string((*c)[0]) + " to " + std::to_string((*c)[1] - 1) +
                           " (by linear %clusterid) were traced (tmakit check --ctas); the launch's other " +
                           std::to_string(launch_clusters > (*c)[1] - (*c)[0] ? launch_clusters - ((*c)[1] - (*c)[0]) : 0) +
                           " ran untraced");
  }
  detail::FindingSink sink(t);
  // A compact trace: each cluster's records, warp records expanded, as a trace of their own, in a
  // frame (the sites, maps and meta) made once.
  std::optional<TraceDir> own;
  if (t.compact) own = cluster_frame(t);
  for (auto& [id, records] : clusters) {
    if (report.clusters_replayed >= options.max_clusters) {
      report.notes.push_back(std::to_string(report.clusters - report.clusters_replayed) +
                             " clusters past the first " + std::to_string(options.max_clusters) + " are not replayed");
      report.skipped.push_back("every check of " + std::to_string(report.clusters - report.clusters_replayed) +
                               " clusters: not replayed (past the first " + std::to_string(options.max_clusters) + ")");
      break;
    }
    if (own) {
      expand_cluster(t, records, *own);
      records.resize(own->records.size());
      for (size_t i = 0; i < records.size(); ++i) records[i] = i;
    }
    const TraceDir& c = own ? *own : t;
    sink.reading(c);
    if (c.meta.not_expanded) {
      const std::string why = std::to_string(c.meta.not_expanded) + " records at the end of cluster (" +
                              std::to_string(id[0]) + "," + std::to_string(id[1]) + "," + std::to_string(id[2]) +
                              ")'s trace were not read: with warp records expanded they stand for more than " +
                              std::to_string(t.max_lane_records) +
                              " records of single threads, the most one cluster is replayed with (a smaller launch "
                              "of the kernel records fewer; --ctas cannot split a cluster)";
      if (!hung) report.skipped.push_back(end_checks + why);
      report.notes.push_back(why);
    }
    // CTA barriers order threads for the race check; the model has nothing to run for them.
    std::vector<size_t> model_records;
    model_records.reserve(records.size());
    for (size_t idx : records)
      if (!instrument::is_cta_barrier(static_cast<instrument::TraceOp>(c.records[idx].op))) model_records.push_back(idx);
    detail::ClusterReplay cluster(c, std::move(model_records), options, sink, report);
    cluster.run();
    detail::find_races(c, records, cluster, options, sink, report);
    report.clusters_replayed++;
  }
  if (t.meta.outcome == "launch_error" && report.outcome_explained.empty())
    report.outcome_explained = "the launch failed (" + t.meta.driver_result + "): no kernel ran";
  if (t.meta.outcome == "timeout" && report.outcome_explained.empty())
    report.outcome_explained = "the kernel hung, and the trace holds no wait that did not complete";
  report.findings = sink.take();
  return report;
}

namespace {

// "1 error", "2 errors".
std::string counted(int n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// "file:line:col: ", or the kernel's name where the finding has no site (end of program).
std::string place(const Finding& f, const std::string& kernel) {
  if (f.file.empty()) return (kernel.empty() ? std::string("kernel") : readable_kernel_name(kernel)) + ": ";
  return f.file + ":" + std::to_string(f.line) + ":" + std::to_string(f.column) + ": ";
}

// Where a frame is and which function holds it: "FILE:LINE:COL (function)".
std::string frame_text(const instrument::SourceFrame& f) {
  std::string s = f.file + ":" + std::to_string(f.line) + ":" + std::to_string(f.column);
  if (f.function) s += " (" + readable_function_name(*f.function) + ")";
  return s;
}

// The lines after a finding for its site's other frames: the library frames inside the user's
// line, innermost first ("inlined from"; past kShown, the middle ones are counted, not listed),
// then the frames outside it ("called from").
std::string frame_notes(const Finding& f) {
  constexpr size_t kShown = 4;
  std::string out;
  const size_t inner = std::min(f.frame, f.frames.size());
  for (size_t i = 0; i < inner; ++i) {
    if (inner > kShown && i == kShown / 2) {
      const size_t skipped = inner - kShown;
      out += "note: … " + std::to_string(skipped) + " more inlined frame" + (skipped > 1 ? "s" : "") +
             " (the JSON report lists every frame)\n";
      i += skipped - 1;
      continue;
    }
    out += "note: inlined from " + terminal_line(frame_text(f.frames[i])) + "\n";
  }
  for (size_t i = inner + 1; i < f.frames.size(); ++i)
    out += "note: called from " + terminal_line(frame_text(f.frames[i])) + "\n";
  return out;
}

nlohmann::json frames_json(const Finding& f) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : f.frames) {
    nlohmann::json j = {{"file", x.file}, {"line", x.line}, {"column", x.column},
                        {"library", instrument::library_file(x.file)}};
    if (x.function) j["function"] = *x.function;
    out.push_back(std::move(j));
  }
  return out;
}

std::string who_text(const Finding& f) {
  if (f.cta < 0) return "";
  std::string s = " (cta " + std::to_string(f.cta) + ", thread " + std::to_string(f.thread);
  if (f.cluster != std::array<uint32_t, 3>{0, 0, 0})
    s += ", cluster (" + std::to_string(f.cluster[0]) + "," + std::to_string(f.cluster[1]) + "," +
         std::to_string(f.cluster[2]) + ")";
  if (f.count > 1) s += "; " + std::to_string(f.count) + " times";
  return s + ")";
}

}  // namespace

std::string to_text(const Report& r) {
  std::string out;
  int errors = 0, warnings = 0;
  for (const Finding& f : r.findings) {
    // The place and message quote the trace (file names, kernel names, site texts): escaped.
    out += terminal_line(place(f, r.kernel)) + f.severity + ": " + terminal_line(f.message) + who_text(f) + " [" +
           f.rule + "]\n" + frame_notes(f);
    errors += f.severity == "error";
    warnings += f.severity == "warning";
  }
  if (!r.outcome_explained.empty()) {  // its lines are the replay's own: each is escaped
    out += "note: ";
    for (size_t at = 0, nl; at <= r.outcome_explained.size(); at = nl + 1) {
      nl = std::min(r.outcome_explained.find('\n', at), r.outcome_explained.size());
      out += terminal_line(std::string_view(r.outcome_explained).substr(at, nl - at)) + "\n";
    }
  }
  for (const std::string& n : r.notes) out += "note: " + terminal_line(n) + "\n";
  for (const std::string& n : r.skipped) out += "skipped: " + terminal_line(n) + "\n";
  out += "tmakit check: " + r.outcome + "; " + std::to_string(r.records) + " records (" + std::to_string(r.holes) +
         " holes), " + std::to_string(r.replayed) + " replayed on the model, " + std::to_string(r.clusters_replayed) +
         " of " + std::to_string(r.clusters) + " clusters; " + counted(errors, "error") + ", " + counted(warnings, "warning") +
         (r.skipped.empty() ? std::string() : "; " + std::to_string(r.skipped.size()) + " checks skipped") + "\n";
  return out;
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : r.findings)
    findings.push_back({{"rule", f.rule},     {"severity", f.severity}, {"message", f.message}, {"site", f.site},
                        {"file", f.file},     {"line", f.line},         {"column", f.column},   {"cta", f.cta},
                        {"thread", f.thread}, {"cluster", f.cluster},   {"count", f.count},
                        {"frames", frames_json(f)}, {"frame", f.frame}});
  return {{"kernel", r.kernel},
          {"outcome", r.outcome},
          {"outcome_explained", r.outcome_explained},
          {"records", r.records},
          {"holes", r.holes},
          {"replayed", r.replayed},
          {"clusters", r.clusters},
          {"clusters_replayed", r.clusters_replayed},
          {"clean", r.clean()},
          {"findings", findings},
          {"notes", r.notes},
          {"skipped", r.skipped}};
}

}  // namespace tmakit::check
