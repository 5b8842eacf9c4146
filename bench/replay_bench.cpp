// Throughput of `tmakit check --replay` on one core (docs/benchmarks.md, "Replay"): every
// recorded whole-launch trace of real programs in tests/vectors/check/real-*/ (CUTLASS and
// Triton kernels the H100 ran under `tmakit check`) replayed on the model, in records a second
// (counted after warp records are expanded: the records the replay steps). The baseline beside
// it is reading the same directory (load_trace_dir: files, JSON, records), so the ratio says
// what the replay itself costs. TMAKIT_BENCH_TRACES (a folder of launch directories) replaces
// the recorded set. BM_ReplayByCluster replays them a cluster at a time, as a launch too large
// to expand whole is.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tmakit/check/replay.hpp"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> trace_dirs() {
  std::vector<fs::path> out;
  const char* env = std::getenv("TMAKIT_BENCH_TRACES");
  const fs::path root = env ? fs::path(env) : fs::path(TMAKIT_SOURCE_DIR) / "tests/vectors/check";
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(root, ec))
    if (e.path().filename() == "meta.json" && (env || e.path().string().find("/real-") != std::string::npos))
      out.push_back(e.path().parent_path());
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<tmakit::check::TraceDir>& traces() {
  static const std::vector<tmakit::check::TraceDir> all = [] {
    std::vector<tmakit::check::TraceDir> v;
    for (const auto& d : trace_dirs()) v.push_back(tmakit::check::load_trace_dir(d));
    return v;
  }();
  return all;
}

// The same traces read with a bound on records of threads below each one's (but above its
// largest cluster's): warp records kept whole, each cluster expanded and replayed on its own, as
// a launch too large to expand whole is (TraceDir::compact).
const std::vector<tmakit::check::TraceDir>& compact_traces() {
  static const std::vector<tmakit::check::TraceDir> all = [] {
    std::vector<tmakit::check::TraceDir> v;
    const auto dirs = trace_dirs();
    for (size_t i = 0; i < dirs.size(); ++i) {
      // Read again with a bound of one record fewer than the whole: compact, and each cluster
      // fits where there are several (one alone would be cut: left out).
      const auto& m = traces()[i].meta;
      if (uint64_t{m.grid[0]} * m.grid[1] * m.grid[2] <= uint64_t{m.cluster[0]} * m.cluster[1] * m.cluster[2]) continue;
      auto t = tmakit::check::load_trace_dir(dirs[i], traces()[i].records.size() - 1);
      if (t.compact) v.push_back(std::move(t));
    }
    return v;
  }();
  return all;
}

void BM_LoadTraceDir(benchmark::State& state) {
  const auto dirs = trace_dirs();
  if (dirs.empty()) return state.SkipWithError("no recorded traces (tests/vectors/check/real-*)");
  uint64_t records = 0;
  for (auto _ : state)
    for (const auto& d : dirs) {
      auto t = tmakit::check::load_trace_dir(d);
      records += t.records.size();
      benchmark::DoNotOptimize(t.records.data());
    }
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsRate);
}

// Replays every trace of `all` each iteration, in records of threads a second.
void replay_all(benchmark::State& state, const std::vector<tmakit::check::TraceDir>& all, const char* none) {
  if (all.empty()) return state.SkipWithError(none);
  uint64_t records = 0;
  for (auto _ : state)
    for (const auto& t : all) {
      auto report = tmakit::check::replay(t);
      records += report.records;
      benchmark::DoNotOptimize(report.findings.data());
    }
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsRate);
}

void BM_Replay(benchmark::State& state) {
  replay_all(state, traces(), "no recorded traces (tests/vectors/check/real-*)");
}

void BM_ReplayByCluster(benchmark::State& state) {
  replay_all(state, compact_traces(), "no recorded trace of more than one cluster (tests/vectors/check/real-*)");
}

}  // namespace

BENCHMARK(BM_LoadTraceDir)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Replay)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReplayByCluster)->Unit(benchmark::kMillisecond);
