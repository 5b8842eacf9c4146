// The happens-before race check of `tmakit check --replay` (docs/check-replay.md, "Races"):
// traces of tests/check/kernels/pipeline.ptx written as a GPU would write them, each race kind
// with and without the synchronisation that makes the program correct. Every expectation is a
// pair of accesses of the same shared bytes, one by a thread, one by the copy engine, and what
// orders them in the program (or nothing).
#include "race_helpers.hpp"

namespace {

using namespace check_test;

// A stage buffer loaded `phases` times by thread 0 and read by four consumers, who release it on
// the empty barrier that thread 0 waits on before each reload; then an epilogue: the consumers
// write a tile, fence, __syncthreads(), thread 0 stores it, waits for the store's reads, and
// everyone meets again before the tile is written over.
TEST(CheckRaces, ASynchronisedPipelineHasNoRace) {
  Map m;
  Trace t;
  t.encoded(m);
  const std::vector<int> consumers = {32, 33, 64, 65};
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(kInit, 0, 0, {{"addr", {kEmpty}}, {"count", {static_cast<int64_t>(consumers.size())}}});
  t.rec(kFenceInit, 0, 0, {});
  sync(t, {0, 32, 33, 64, 65});
  for (int phase = 0; phase < 3; ++phase) {
    if (phase) t.rec(kWaitParity, 0, 0, {{"addr", {kEmpty}}, {"phaseParity", {(phase - 1) & 1}}}, true);
    load_again(t, m);
    for (int c : consumers) {
      wait_full(t, c, phase & 1);
      read(t, c, kBuf + 16 * c);
      t.rec(kArrive, 0, c, {{"state", {100 + c}}, {"addr", {kEmpty}}});
    }
  }
  for (int c : consumers) write(t, c, kOut + 16 * c), fence(t, c);
  sync(t, {0, 32, 33, 64, 65});
  store_tile(t, m, 0, kOut);
  wait_reads(t, 0);
  sync(t, {0, 32, 33, 64, 65});
  for (int c : consumers) write(t, c, kOut + 16 * c);
  auto r = t.replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
}

// Read after write: the box is read by a thread that neither waited for it nor met a thread
// that did. The model lands the box at thread 0's wait, so only the order can tell.
TEST(CheckRaces, AReadOrderedAfterNoWaitIsARace) {
  Map m;
  auto trace = [&](int ordering) {
    Trace t;
    t.encoded(m);
    produce(t, m, m.box_bytes());
    wait_full(t, 0);
    if (ordering == 1) sync(t, {0, 5});  // thread 0 waited; __syncthreads() passes it on
    if (ordering == 2) wait_full(t, 5);  // its own wait
    read(t, 5, kBuf + 256);
    return t.replay();
  };
  auto r = trace(0);
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.race-raw"}) << tmakit::check::to_text(r);
  const auto& f = r.findings[0];
  EXPECT_EQ(f.line, kLdShared);
  EXPECT_EQ(f.thread, 5);
  EXPECT_NE(f.message.find("reads shared bytes [256, 272) of CTA 0 that the tensor load issued at /src/pipeline.cu:21 "
                           "(cta 0, thread 0) writes"),
            std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("mbarrier at shared offset 65536 of CTA 0"), std::string::npos) << f.message;
  EXPECT_TRUE(trace(1).findings.empty()) << tmakit::check::to_text(trace(1));
  EXPECT_TRUE(trace(2).findings.empty()) << tmakit::check::to_text(trace(2));
}

// A read while the copy is still in flight on the model is the replay's own check.read-before-wait
// (and a wait with the wrong parity its check.wrong-parity): said once, not again as a race.
TEST(CheckRaces, WhatTheReplaySaidAtTheReadIsNotRepeated) {
  Map m;
  Trace early;
  early.encoded(m);
  produce(early, m, m.box_bytes());
  read(early, 5, kBuf);
  wait_full(early, 5);
  EXPECT_EQ(rules(early.replay()), std::vector<std::string>{"check.read-before-wait"});
  Trace parity;
  parity.encoded(m);
  produce(parity, m, m.box_bytes());
  wait_full(parity, 5, 1);  // names the phase before the first: returns at once
  read(parity, 5, kBuf);
  EXPECT_EQ(rules(parity.replay()), std::vector<std::string>{"check.wrong-parity"});
}

// Write after read, the copy later: thread 0 reloads the buffer while a consumer may still read it.
TEST(CheckRaces, AReloadNotOrderedAfterTheReadsIsARace) {
  Map m;
  auto trace = [&](int ordering) {
    Trace t;
    t.encoded(m);
    t.rec(kInit, 0, 0, {{"addr", {kEmpty}}, {"count", {1}}});
    produce(t, m, m.box_bytes());
    wait_full(t, 5);
    read(t, 5, kBuf + 64);
    if (ordering == 1) t.rec(kArrive, 0, 5, {{"state", {9}}, {"addr", {kEmpty}}});
    if (ordering == 2) sync(t, {5, 0});
    wait_full(t, 0);
    if (ordering == 1) t.rec(kWaitParity, 0, 0, {{"addr", {kEmpty}}, {"phaseParity", {0}}}, true);
    load_again(t, m);
    return t.replay();
  };
  auto r = trace(0);
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.race-war"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kLoad);
  EXPECT_EQ(r.findings[0].thread, 0);
  EXPECT_NE(r.findings[0].message.find("writes shared bytes [64, 80) of CTA 0 that an ordinary load at "
                                       "/src/pipeline.cu:23 (cta 0, thread 5) reads"),
            std::string::npos)
      << r.findings[0].message;
  EXPECT_TRUE(trace(1).findings.empty()) << tmakit::check::to_text(trace(1));  // the empty barrier
  EXPECT_TRUE(trace(2).findings.empty()) << tmakit::check::to_text(trace(2));  // __syncthreads()
}

// The arrive on the empty barrier is recorded after the arrive, the producer's wait after it
// returns: the wait's record can come first. The walk holds the producer until the arrive.
TEST(CheckRaces, AWaitRecordedBeforeTheArriveItSawIsNoRace) {
  Map m;
  Trace t;
  t.encoded(m);
  t.rec(kInit, 0, 0, {{"addr", {kEmpty}}, {"count", {1}}});
  produce(t, m, m.box_bytes());
  wait_full(t, 5);
  read(t, 5, kBuf + 64);
  wait_full(t, 0);
  t.rec(kWaitParity, 0, 0, {{"addr", {kEmpty}}, {"phaseParity", {0}}}, true);  // before the arrive's record
  t.rec(kArrive, 0, 5, {{"state", {9}}, {"addr", {kEmpty}}});
  load_again(t, m);
  auto r = t.replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
}

// Write after read, the thread later: the tile a tensor store reads is written over before the
// store's reads are known done (cp.async.bulk.wait_group.read, then a barrier to the writer).
TEST(CheckRaces, OverwritingATensorStoresSourceUnorderedIsARace) {
  Map m;
  auto trace = [&](int ordering) {
    Trace t;
    t.encoded(m);
    write(t, 0, kOut);
    fence(t, 0);
    store_tile(t, m, 0, kOut);
    if (ordering != 2) wait_reads(t, 0);
    if (ordering >= 1) sync(t, {0, 7});
    write(t, 7, kOut + 32);
    return t.replay();
  };
  auto r = trace(0);
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.race-war"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kStShared);
  EXPECT_EQ(r.findings[0].thread, 7);
  EXPECT_NE(r.findings[0].message.find("overwrites shared bytes [8224, 8240) of CTA 0 that the tensor store issued at "
                                       "/src/pipeline.cu:32 (cta 0, thread 0) reads"),
            std::string::npos)
      << r.findings[0].message;
  EXPECT_TRUE(trace(1).findings.empty()) << tmakit::check::to_text(trace(1));
  // A barrier without the wait orders nothing about the store's reads; the model sees the store in
  // flight and says so at the same line (model.use-before-completion): one finding.
  EXPECT_EQ(rules(trace(2)), std::vector<std::string>{"model.use-before-completion"});
}

// Write after write: a thread writes the box's bytes without the box's completion ordered before
// (the thread later), or the copy lands over bytes a thread wrote with nothing ordering the store
// before it (the copy later; a store needs fence.proxy.async on the way, as for a copy's read).
TEST(CheckRaces, WritesOfTheSameBytesUnorderedAreARace) {
  Map m;
  auto after_load = [&](bool ordered) {
    Trace t;
    t.encoded(m);
    produce(t, m, m.box_bytes());
    wait_full(t, 0);
    if (ordered) sync(t, {0, 5});
    write(t, 5, kBuf + 128);
    return t.replay();
  };
  auto r = after_load(false);
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.race-waw"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kStShared);
  EXPECT_TRUE(after_load(true).findings.empty()) << tmakit::check::to_text(after_load(true));

  auto before_load = [&](bool barrier, bool fenced) {
    Trace t;
    t.encoded(m);
    write(t, 5, kBuf + 128);  // e.g. a fill the load is to overwrite
    if (fenced) fence(t, 5);
    if (barrier) sync(t, {5, 0});
    produce(t, m, m.box_bytes());
    wait_full(t, 0);
    return t.replay();
  };
  auto w = before_load(false, true);
  ASSERT_EQ(rules(w), std::vector<std::string>{"check.race-waw"}) << tmakit::check::to_text(w);
  EXPECT_EQ(w.findings[0].line, kLoad);
  EXPECT_NE(w.findings[0].message.find("an ordinary store at /src/pipeline.cu:30 (cta 0, thread 5) also wrote"),
            std::string::npos);
  auto unfenced = before_load(true, false);
  ASSERT_EQ(rules(unfenced), std::vector<std::string>{"model.missing-proxy-fence"}) << tmakit::check::to_text(unfenced);
  EXPECT_EQ(unfenced.findings[0].line, kLoad);
  EXPECT_NE(unfenced.findings[0].message.find("the copy engine overwrites shared bytes [128, 144) of CTA 0"),
            std::string::npos);
  EXPECT_TRUE(before_load(true, true).findings.empty()) << tmakit::check::to_text(before_load(true, true));
}

// Read after write, the copy later: a tensor store reads a tile other threads wrote. Ordered by
// a barrier and fenced on the way (by the writers before it, or by the issuing thread after it),
// it is correct; a fence by a thread the writes are not ordered before fences nothing (the model,
// which takes any thread's fence, is silent there; the order is not).
TEST(CheckRaces, ATensorStoreOfAnotherThreadsTileNeedsABarrierAndAFence) {
  Map m;
  enum Fence { writer, issuer, other, none };
  auto trace = [&](bool barrier, Fence f) {
    Trace t;
    t.encoded(m);
    write(t, 5, kOut + 48);
    if (f == writer) fence(t, 5);
    if (f == other) fence(t, 9);
    if (barrier) sync(t, {5, 9, 0});
    if (f == issuer) fence(t, 0);
    store_tile(t, m, 0, kOut);
    wait_reads(t, 0);
    return t.replay();
  };
  auto r = trace(false, writer);
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.race-raw"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kStore);
  EXPECT_NE(r.findings[0].message.find("reads shared bytes [8240, 8256) of CTA 0 that an ordinary store at "
                                       "/src/pipeline.cu:30 (cta 0, thread 5) wrote"),
            std::string::npos)
      << r.findings[0].message;
  EXPECT_TRUE(trace(true, writer).findings.empty()) << tmakit::check::to_text(trace(true, writer));
  EXPECT_TRUE(trace(true, issuer).findings.empty()) << tmakit::check::to_text(trace(true, issuer));
  auto stray = trace(true, other);
  ASSERT_EQ(rules(stray), std::vector<std::string>{"model.missing-proxy-fence"}) << tmakit::check::to_text(stray);
  EXPECT_NE(stray.findings[0].message.find("ordered before this copy (through a barrier or an mbarrier) but no "
                                           "fence.proxy.async lies on the way"),
            std::string::npos)
      << stray.findings[0].message;
  // No fence at all: the model's own finding, once.
  auto bare = trace(true, none);
  ASSERT_EQ(rules(bare), std::vector<std::string>{"model.missing-proxy-fence"}) << tmakit::check::to_text(bare);
  EXPECT_EQ(bare.findings[0].count, 1);
}

// bar.arrive releases and does not wait: a producer/consumer pair on a named barrier orders the
// arriving thread's writes before the syncing thread's copy, not the other way round.
TEST(CheckRaces, BarArriveReleasesBarSyncAcquires) {
  Map m;
  auto trace = [&](bool writer_arrives) {
    Trace t;
    t.encoded(m);
    write(t, 5, kOut);
    fence(t, 5);
    const int writer_site = writer_arrives ? kBarArrive : kBarSyncCount;
    const int issuer_site = writer_arrives ? kBarSyncCount : kBarArrive;
    t.rec(writer_site, 0, 5, {{"id", {1}}, {"count", {64}}});
    t.rec(issuer_site, 0, 0, {{"id", {1}}, {"count", {64}}});
    store_tile(t, m, 0, kOut);
    wait_reads(t, 0);
    return t.replay();
  };
  EXPECT_TRUE(trace(true).findings.empty()) << tmakit::check::to_text(trace(true));
  EXPECT_EQ(race_rules(trace(false)), std::vector<std::string>{"check.race-raw"}) << tmakit::check::to_text(trace(false));
}

// A bar.red waits as bar.sync does; a barrier of another number orders nothing.
TEST(CheckRaces, BarRedSynchronisesAndBarrierNumbersAreApart) {
  Map m;
  auto trace = [&](int issuer_site, int64_t issuer_id) {
    Trace t;
    t.encoded(m);
    produce(t, m, m.box_bytes());
    wait_full(t, 0);
    t.rec(kBarRed, 0, 0, {{"id", {2}}});
    t.rec(issuer_site, 0, 5, {{"id", {issuer_id}}});
    read(t, 5, kBuf);
    return t.replay();
  };
  EXPECT_TRUE(trace(kBarRed, 2).findings.empty()) << tmakit::check::to_text(trace(kBarRed, 2));
  EXPECT_EQ(race_rules(trace(kBarSync, 0)), std::vector<std::string>{"check.race-raw"});
}

// A multicast box lands in every CTA of its mask and completes on each one's own barrier: a
// reader in CTA 1 is ordered by CTA 1's wait, passed on by CTA 1's barrier.
TEST(CheckRaces, AMulticastBoxIsOrderedByEachDestinationsBarrier) {
  Map m;
  auto trace = [&](bool synced) {
    Trace t;
    t.encoded(m);
    t.meta()["cluster"] = {2, 1, 1};
    t.meta()["grid"] = {2, 1, 1};
    for (int cta = 0; cta < 2; ++cta) {
      t.rec(kInit, cta, 0, {{"addr", {kBar}}, {"count", {1}}});
      t.rec(kFenceInit, cta, 0, {});
    }
    for (int cta = 0; cta < 2; ++cta) t.rec(kClusterArrive, cta, 0, {});
    for (int cta = 0; cta < 2; ++cta) t.rec(kClusterWait, cta, 0, {});
    for (int cta = 0; cta < 2; ++cta)
      t.rec(kArriveTx, cta, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {m.box_bytes()}}});
    t.map_bytes(kMulticast, 0, 0, m.descriptor());
    t.rec(kMulticast, 0, 0,
          {{"dstMem", {kBuf}}, {"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 0}}, {"mbar", {kBar}}, {"ctaMask", {3}}});
    wait_full(t, 0, 0, 1);
    if (synced) sync(t, {0, 3}, 1);
    read(t, 3, kBuf + 32, 16, 1);
    return t.replay();
  };
  auto r = trace(false);
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.race-raw"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].cta, 1);
  EXPECT_NE(r.findings[0].message.find("of CTA 1 that the tensor load issued at /src/pipeline.cu:40 (cta 0, thread 0)"),
            std::string::npos)
      << r.findings[0].message;
  EXPECT_TRUE(trace(true).findings.empty()) << tmakit::check::to_text(trace(true));
}

}  // namespace
