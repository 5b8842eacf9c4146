// The race check as a whole (docs/check-replay.md, "Races"): findings merged by their pair of
// sites, traces recorded before CTA barriers were, its bounds and speed, the property that one
// ordering event removes a finding, and the H100's own traces with their barriers taken out.
#include <chrono>
#include <cstdio>
#include <random>

#include "race_helpers.hpp"

namespace {

using namespace check_test;

// A pair of sites is one finding, counted once for each access that met the other; another copy
// site racing with another read is a finding of its own.
TEST(CheckRaces, EachPairOfSitesIsOneFindingWithACount) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes());
  wait_full(t, 0);
  for (int thread = 8; thread < 16; ++thread) read(t, thread, kBuf + 16 * thread);
  // A bulk copy (line 60) into another buffer, read as carelessly.
  t.rec(kInit, 0, 0, {{"addr", {kEmpty}}, {"count", {1}}});
  t.rec(kArriveTx, 0, 0, {{"state", {0}}, {"addr", {kEmpty}}, {"txCount", {256}}});
  t.rec(kBulk, 0, 0, {{"dstMem", {kOut}}, {"srcMem", {0x7f1300000000}}, {"size", {256}}, {"mbar", {kEmpty}}});
  t.rec(kWaitParity, 0, 0, {{"addr", {kEmpty}}, {"phaseParity", {0}}}, true);
  read(t, 20, kOut);
  auto r = t.replay();
  ASSERT_EQ(rules(r), (std::vector<std::string>{"check.race-raw", "check.race-raw"})) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].count, 8);
  EXPECT_EQ(r.findings[0].thread, 8);
  EXPECT_EQ(r.findings[1].count, 1);
  EXPECT_NE(r.findings[1].message.find("the bulk copy issued at /src/pipeline.cu:60"), std::string::npos);
  EXPECT_NE(tmakit::check::to_text(r).find("; 8 times)"), std::string::npos) << tmakit::check::to_text(r);
}

// A trace whose site table does not record CTA barriers (an older instrumenter's): the order
// between threads is not known, so races are not checked, and a note says so.
TEST(CheckRaces, ATraceWithoutCtaBarriersIsNotCheckedAndSaysSo) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes());
  wait_full(t, 0);
  read(t, 5, kBuf);
  auto sites = nlohmann::json::parse(t.sites_text());
  sites.erase("cta_barriers");
  auto r = tmakit::check::replay(tmakit::check::parse_trace_dir(t.meta_text(), t.bin(), sites.dump(), t.maps_text()));
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  EXPECT_NE(tmakit::check::to_text(r).find("races between threads and the copy engine are not checked"),
            std::string::npos);
  EXPECT_EQ(race_rules(t.replay()), std::vector<std::string>{"check.race-raw"});  // the same trace, recorded now
}

// Past its bounds the check says so in a note and goes on with less (never a crash or a finding
// it cannot stand behind).
TEST(CheckRaces, BoundsAreNotedWhenReached) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes());
  wait_full(t, 0);
  for (int thread = 1; thread < 40; ++thread) wait_full(t, thread), read(t, thread, kBuf + 4 * thread, 4);
  tmakit::check::ReplayOptions ranges;
  ranges.max_race_ranges = 8;
  auto r = tmakit::check::replay(t.parsed(), ranges);
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  EXPECT_NE(tmakit::check::to_text(r).find("the race check keeps at most 8 shared byte ranges"), std::string::npos)
      << tmakit::check::to_text(r);
  tmakit::check::ReplayOptions clocks;
  clocks.max_race_clock_entries = 16;
  auto c = tmakit::check::replay(t.parsed(), clocks);
  EXPECT_NE(tmakit::check::to_text(c).find("the race check stopped at record"), std::string::npos)
      << tmakit::check::to_text(c);
  EXPECT_TRUE(t.replay().findings.empty());  // within the default bounds: every access checked, none racy
}

// The cost: a pipeline of 1,000 phases, each a box loaded by thread 0, waited for and read by
// 128 consumers that release it on the empty barrier, and a __syncthreads() of all 129 threads:
// 519,001 records, race-free. The time goes to docs/check-replay.md ("Speed").
TEST(CheckRaces, AThousandPhasePipelineIsCheckedWithoutAFinding) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["block"] = {160, 1, 1};
  t.meta()["capacity"] = 1 << 20;
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(kInit, 0, 0, {{"addr", {kEmpty}}, {"count", {128}}});
  for (int phase = 0; phase < 1000; ++phase) {
    if (phase) t.rec(kWaitParity, 0, 0, {{"addr", {kEmpty}}, {"phaseParity", {(phase - 1) & 1}}}, true);
    load_again(t, m);
    for (int c = 32; c < 160; ++c) {
      wait_full(t, c, phase & 1);
      read(t, c, kBuf + 16 * (c - 32));
      t.rec(kArrive, 0, c, {{"state", {c}}, {"addr", {kEmpty}}});
    }
    for (int c = 31; c < 160; ++c) t.rec(kBarSyncCount, 0, c, {{"id", {1}}, {"count", {129}}});
  }
  const auto dir = t.parsed();
  const auto start = std::chrono::steady_clock::now();
  auto r = tmakit::check::replay(dir);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu records replayed and checked for races in %.2f s\n", dir.records.size(), s);
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  EXPECT_TRUE(r.notes.empty()) << tmakit::check::to_text(r);
}

// The property: for each race kind, a trace with random threads, bytes and unrelated traffic has
// the finding, and the same trace with the one ordering event added has none.
TEST(CheckRaces, AddingTheOrderingEventRemovesTheFinding) {
  Map m;
  std::mt19937 rng(23);
  struct Kind {
    const char* name;
    std::string rule;
    std::function<void(Trace&, int, int64_t, bool)> build;  // thread, byte offset, ordered
  };
  const std::vector<Kind> kinds = {
      {"read after a load", "check.race-raw",
       [&](Trace& t, int th, int64_t at, bool ordered) {
         produce(t, m, m.box_bytes());
         wait_full(t, 0);
         if (ordered) sync(t, {0, th});
         read(t, th, at);
       }},
      {"reload over a read", "check.race-war",
       [&](Trace& t, int th, int64_t at, bool ordered) {
         produce(t, m, m.box_bytes());
         wait_full(t, th);
         read(t, th, at);
         wait_full(t, 0);
         if (ordered) sync(t, {th, 0});
         load_again(t, m);
       }},
      {"write over a load", "check.race-waw",
       [&](Trace& t, int th, int64_t at, bool ordered) {
         produce(t, m, m.box_bytes());
         wait_full(t, 0);
         if (ordered) sync(t, {0, th});
         write(t, th, at);
       }},
      {"store of another thread's tile", "check.race-raw",
       [&](Trace& t, int th, int64_t at, bool ordered) {
         write(t, th, kOut + at);
         fence(t, th);
         if (ordered) sync(t, {th, 0});
         store_tile(t, m, 0, kOut);
         wait_reads(t, 0);
       }},
      {"unfenced store of another thread's tile", "model.missing-proxy-fence",
       [&](Trace& t, int th, int64_t at, bool ordered) {
         write(t, th, kOut + at);
         if (ordered) fence(t, th);
         fence(t, 127);  // a fence the write is not ordered before
         sync(t, {th, 127, 0});
         store_tile(t, m, 0, kOut);
         wait_reads(t, 0);
       }},
      {"tile written over before the store read it", "check.race-war",
       [&](Trace& t, int th, int64_t at, bool ordered) {
         store_tile(t, m, 0, kOut);
         wait_reads(t, 0);
         if (ordered) sync(t, {0, th});
         write(t, th, kOut + at);
       }},
  };
  for (const Kind& k : kinds)
    for (int round = 0; round < 12; ++round) {
      const int th = std::uniform_int_distribution<int>(1, 99)(rng);
      const int64_t at = 16 * std::uniform_int_distribution<int>(0, 255)(rng);  // inside the 4 KiB box
      const int noise = std::uniform_int_distribution<int>(0, 6)(rng);
      SCOPED_TRACE(std::string(k.name) + ", thread " + std::to_string(th) + ", byte " + std::to_string(at));
      for (bool ordered : {false, true}) {
        Trace t;
        t.encoded(m);
        // Unrelated traffic before: other threads' accesses of a buffer no copy touches.
        for (int i = 0; i < noise; ++i) write(t, 100 + i, 65536 + 1024 + 16 * i), read(t, 100 + i, 65536 + 1024);
        k.build(t, th, at, ordered);
        auto r = t.replay();
        if (ordered) EXPECT_TRUE(race_rules(r).empty()) << tmakit::check::to_text(r);
        else EXPECT_EQ(race_rules(r), std::vector<std::string>{k.rule}) << tmakit::check::to_text(r);
      }
    }
}

// The H100's own traces of correct kernels, recorded with their CTA barriers
// (tests/vectors/check/h100-cta-barriers/: no finding, CheckRecorded), with the barriers' records
// taken out (made holes): what they ordered is a race now.
TEST(CheckRaces, TheH100sCleanTracesRaceWithoutTheirBarriers) {
  const fs::path root = fs::path(TMAKIT_SOURCE_DIR) / "tests/vectors/check/h100-cta-barriers";
  struct Case {
    const char* dir;
    std::string rule;
    int line;  // in seeded_kernels.cu
  };
  for (const Case& c : {Case{"store_no_fence.clean", "check.race-raw", 136},    // the TMA store of the tile all wrote
                        Case{"read_before_wait.clean", "check.race-waw", 37}}) {  // the load over the -1 fill
    SCOPED_TRACE(c.dir);
    auto t = tmakit::check::load_trace_dir(root / c.dir);
    ASSERT_TRUE(tmakit::check::replay(t).findings.empty());
    size_t removed = 0;
    for (auto& r : t.records)
      if (tmakit::instrument::is_cta_barrier(static_cast<tmakit::instrument::TraceOp>(r.op))) r = {}, ++removed;
    EXPECT_GE(removed, 128u);  // __syncthreads() in each of the 128 threads
    auto r = tmakit::check::replay(t);
    ASSERT_EQ(rules(r), std::vector<std::string>{c.rule}) << tmakit::check::to_text(r);
    EXPECT_EQ(r.findings[0].line, c.line);
    EXPECT_EQ(fs::path(r.findings[0].file).filename(), "seeded_kernels.cu");
  }
}

}  // namespace
