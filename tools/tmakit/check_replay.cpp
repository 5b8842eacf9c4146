// `tmakit check --replay DIR [--json]`: a trace directory (docs/check-replay.md) replayed on the
// model and reported. DIR is one launch's directory, or a run's directory holding launch-<n>/
// directories (each replayed in turn, under a header line). Exit 0 without errors, 1 errors
// (with --strict: any finding, warnings too), 3 none but checks were skipped (Report::skipped),
// 2 unusable input. The `check` subcommand is registered by check_command.cpp,
// which calls this for `--replay`.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "commands.hpp"
#include "tmakit/check/replay.hpp"

namespace tmakit::cli {
namespace {

namespace fs = std::filesystem;

// DIR itself when it holds meta.json, else its launch-<n>/ directories in launch order.
std::vector<fs::path> launch_dirs(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "meta.json", ec) || !fs::is_directory(dir, ec)) return {dir};
  std::vector<std::pair<unsigned long, fs::path>> launches;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind("launch-", 0) != 0 || name.size() == 7 || name.size() > 16 ||
        name.find_first_not_of("0123456789", 7) != std::string::npos)
      continue;
    launches.push_back({std::stoul(name.substr(7)), e.path()});
  }
  if (launches.empty()) return {dir};
  std::sort(launches.begin(), launches.end());
  std::vector<fs::path> out;
  for (auto& [n, p] : launches) out.push_back(p);
  return out;
}

// A trace records the source paths of the machine that ran the kernel (the PTX's .loc files,
// absolute). Shown here relative to the project: the longest tail of the path that names a file
// under the current folder (the same project, checked out anywhere); else the path itself where
// it exists on this machine; `moved` collects the others, for a note that says where they came from.
std::string shown_path(const std::string& file, std::vector<std::string>& moved) {
  std::error_code ec;
  const fs::path p(file);
  if (!p.is_absolute()) return file;
  std::vector<fs::path> parts(p.begin(), p.end());
  for (size_t i = 1; i < parts.size(); ++i) {
    fs::path tail;
    for (size_t k = i; k < parts.size(); ++k) tail /= parts[k];
    if (fs::is_regular_file(tail, ec)) return tail.string();
  }
  if (fs::exists(p, ec)) return file;
  if (std::find(moved.begin(), moved.end(), file) == moved.end()) moved.push_back(file);
  return file;
}

void show_paths_here(check::Report& r) {
  std::vector<std::string> moved;
  for (auto& f : r.findings) {
    if (f.file.empty()) continue;
    const std::string recorded = f.file;
    f.file = shown_path(recorded, moved);
    // Messages quote other sites of the same file ("initialised at FILE:168").
    for (size_t at; f.file != recorded && (at = f.message.find(recorded)) != std::string::npos;)
      f.message.replace(at, recorded.size(), f.file);
    for (auto& frame : f.frames) frame.file = shown_path(frame.file, moved);  // the notes' places too
  }
  if (!moved.empty())
    r.notes.push_back("source paths are those of the machine that recorded the trace (" + moved.front() +
                      (moved.size() > 1 ? ", ..." : "") + "); they are not on this machine");
}

}  // namespace

int check_replay(const fs::path& dir, bool json, bool strict) {
  const std::vector<fs::path> dirs = launch_dirs(dir);
  std::vector<std::pair<fs::path, check::Report>> reports;
  for (const fs::path& d : dirs) {
    try {  // every directory is read before anything is printed: unusable input prints nothing
      reports.emplace_back(d, check::replay(check::load_trace_dir(d)));
      show_paths_here(reports.back().second);
    } catch (const check::TraceError& e) {
      std::fprintf(stderr, "%s: error: %s [check.trace-dir]\n", d.string().c_str(), e.what());
      return 2;
    }
  }
  bool clean = true, complete = true;
  std::string out;
  if (json && dirs.size() == 1 && dirs[0] == dir) {
    out = check::to_json(reports[0].second).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& [d, r] : reports) all.push_back({{"dir", d.string()}, {"report", check::to_json(r)}});
    out = nlohmann::json{{"launches", all}}.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  for (const auto& [d, r] : reports) {
    clean = clean && (strict ? r.clean() : !r.has_errors());
    complete = complete && r.skipped.empty();
    if (json) continue;
    if (reports.size() > 1 || d != dir) out += "== " + d.string() + "\n";
    out += check::to_text(r);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return !clean ? 1 : complete ? 0 : 3;
}

}  // namespace tmakit::cli
