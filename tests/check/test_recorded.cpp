// Every trace recorded on the H100 (tests/vectors/check/<case>/, or <case>/launch-<n>/ for a
// program with several launches) replayed and compared with its expect.json: the rule and
// file:line of every diagnosis, the outcome, and "clean": zero findings. Passes with no
// directories; checks every one that exists.
#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>

#include "trace_builder.hpp"

namespace {

using namespace check_test;

std::vector<fs::path> recorded_dirs() {
  std::vector<fs::path> out;
  const fs::path root = fs::path(TMAKIT_SOURCE_DIR) / "tests/vectors/check";
  if (!fs::is_directory(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().filename() == "expect.json") out.push_back(e.path().parent_path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CheckRecorded, EveryRecordedTraceGivesTheExpectedDiagnoses) {
  const auto dirs = recorded_dirs();
  std::printf("tests/vectors/check: %zu recorded traces\n", dirs.size());
  for (const fs::path& dir : dirs) {
    SCOPED_TRACE(dir.string());
    const auto expect = nlohmann::json::parse(read(dir / "expect.json"));
    tmakit::check::Report r;
    ASSERT_NO_THROW({ r = tmakit::check::replay(tmakit::check::load_trace_dir(dir)); });
    const std::string text = tmakit::check::to_text(r);
    if (expect.contains("outcome")) {
      EXPECT_EQ(r.outcome, expect["outcome"].get<std::string>());
    }
    if (expect.value("clean", false)) {
      EXPECT_TRUE(r.findings.empty()) << text;
      continue;
    }
    // Each expected diagnosis is found (rule, file's basename, line), and nothing else is an error;
    // the same diagnosis may come more than once (at several byte ranges of one read, say).
    auto matches = [](const tmakit::check::Finding& f, const nlohmann::json& d) {
      return f.rule == d["rule"].get<std::string>() &&
             (!d.contains("file") || fs::path(f.file).filename() == d["file"].get<std::string>()) &&
             (!d.contains("line") || f.line == d["line"].get<int>());
    };
    std::vector<bool> used(r.findings.size(), false);
    for (const auto& d : expect["diagnoses"]) {
      bool found = false;
      for (size_t i = 0; i < r.findings.size(); ++i)
        if (matches(r.findings[i], d)) used[i] = found = true;
      EXPECT_TRUE(found) << "expected " << d.dump() << "\n" << text;
    }
    for (size_t i = 0; i < r.findings.size(); ++i)
      EXPECT_TRUE(used[i] || r.findings[i].severity != "error") << "unexpected: " << r.findings[i].rule << "\n" << text;
  }
}

// A race is one finding for each pair of source lines, however many instructions the compiler
// made of either line (the ring's refill reads its stage in an unrolled loop: four load sites
// at ring.cu:67, which were four errors of one bug). The other line is the one the message names.
TEST(CheckRecorded, ARaceIsOneFindingForEachPairOfLines) {
  const std::regex other(R"( at (\S+:[0-9]+) \(cta )");
  size_t races = 0;
  for (const fs::path& dir : recorded_dirs()) {
    SCOPED_TRACE(dir.string());
    tmakit::check::Report r;
    ASSERT_NO_THROW({ r = tmakit::check::replay(tmakit::check::load_trace_dir(dir)); });
    std::map<std::string, int> pairs;  // rule, line, other line -> findings
    for (const auto& f : r.findings) {
      std::smatch m;
      if (f.rule.rfind("check.race-", 0) != 0 || !std::regex_search(f.message, m, other)) continue;
      ++races;
      EXPECT_EQ(++pairs[f.rule + " " + f.file + ":" + std::to_string(f.line) + " with " + m[1].str()], 1)
          << tmakit::check::to_text(r);
    }
  }
  if (fs::is_directory(fs::path(TMAKIT_SOURCE_DIR) / "tests/vectors/check/ring-refill")) {
    EXPECT_GT(races, 0u);
  }
}

// CuTe DSL's TMA copy with its load's copy called by thread 0 alone, as it hung on the H200: the
// hang names the copy's elect.sync after thread 0's last record, which waits for the lanes of its
// warp that wait for the copy instead.
TEST(CheckRecorded, TheHangOfACopyCalledByOneLaneNamesItsWarpWideInstruction) {
  const fs::path dir = fs::path(TMAKIT_SOURCE_DIR) / "tests/vectors/check/cutedsl-tma-copy-elect-by-one-thread";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  const auto r = tmakit::check::replay(tmakit::check::load_trace_dir(dir));
  ASSERT_EQ(r.findings.size(), 1u) << tmakit::check::to_text(r);
  const std::string& msg = r.findings[0].message;
  EXPECT_NE(msg.find("cta 0 thread 0 arrived on it before (last at module.ptx:45) and did not arrive again: its last "
                     "record is at module.ptx:45; the first warp-wide instruction after that record, module.ptx:46 "
                     "`elect.sync %r10|%p2, -1;`, waits for every lane its mask names, and 31 lanes of its warp wait at "
                     "module.ptx:58 instead"),
            std::string::npos)
      << msg;
}

// The same traces read with a bound on records of threads below their own, so that the
// replay expands and replays one cluster at a time (TraceDir::compact), as it does a launch
// too large to expand whole: every report is the same as the whole trace's — its findings,
// their places, the records replayed — except for the note that says how it was read.
TEST(CheckRecorded, ATraceReplayedAClusterAtATimeGivesTheSameReport) {
  size_t compared = 0;
  for (const fs::path& dir : recorded_dirs()) {
    const auto whole = tmakit::check::load_trace_dir(dir);
    size_t largest = 0;
    std::map<std::array<uint32_t, 3>, size_t> per_cluster;
    for (const auto& r : whole.records)
      if (r.op != 0) ++per_cluster[{r.clusterid_x, r.clusterid_y, r.clusterid_z}];
    for (const auto& [c, n] : per_cluster) largest = std::max(largest, n);
    if (per_cluster.size() < 2 || whole.compact) continue;
    SCOPED_TRACE(dir.string());
    const auto by_cluster = tmakit::check::load_trace_dir(dir, largest);
    ASSERT_TRUE(by_cluster.compact);
    const auto a = tmakit::check::replay(whole), b = tmakit::check::replay(by_cluster);
    EXPECT_EQ(a.records, b.records);
    EXPECT_EQ(a.replayed, b.replayed);
    EXPECT_EQ(a.clusters_replayed, b.clusters_replayed);
    EXPECT_EQ(a.skipped, b.skipped);
    ASSERT_EQ(a.findings.size(), b.findings.size()) << tmakit::check::to_text(b);
    for (size_t i = 0; i < a.findings.size(); ++i) {
      EXPECT_EQ(a.findings[i].rule, b.findings[i].rule) << i;
      EXPECT_EQ(a.findings[i].file, b.findings[i].file) << i;
      EXPECT_EQ(a.findings[i].line, b.findings[i].line) << i;
      EXPECT_EQ(a.findings[i].severity, b.findings[i].severity) << i;
    }
    ++compared;
  }
  std::printf("tests/vectors/check: %zu recorded traces of several clusters replayed a cluster at a time\n", compared);
  if (fs::is_directory(fs::path(TMAKIT_SOURCE_DIR) / "tests/vectors/check/ring-refill")) {
    EXPECT_GT(compared, 0u);
  }
}

}  // namespace
