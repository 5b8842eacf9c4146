// The replay of traces a GPU would write for tests/check/kernels/pipeline.ptx: a clean
// pipeline, and each seeded bug of issue 18 the trace lets the model diagnose, with the rule
// and the source line (the kernel's `.loc` lines name the sites).
#include "trace_builder.hpp"

namespace {

using namespace check_test;

TEST(CheckReplay, CleanPipelineHasNoFindings) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes());
  t.rec(kWaitParity, 0, 5, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);  // a spin that failed once
  t.rec(kWaitParity, 0, 5, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  t.rec(kLdShared, 0, 5, {{"addr", {kBuf}}, {"size", {4}}});
  // The epilogue: write the tile, fence, store it, and wait for the store's reads.
  t.rec(kStShared, 0, 5, {{"addr", {kBuf}}, {"size", {4}}});
  t.rec(kFenceAsync, 0, 5, {});
  t.map_bytes(kStore, 0, 5, m.descriptor());
  t.rec(kStore, 0, 5, {{"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 32}}, {"srcMem", {kBuf}}});
  t.rec(kCommit, 0, 5, {});
  t.rec(kWaitRead, 0, 5, {{"N", {0}}});
  t.rec(kStShared, 0, 5, {{"addr", {kBuf}}, {"size", {4}}});
  auto r = t.replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.replayed, 11u);  // 17 records but the 4 companions, the failed spin and the shared load
  EXPECT_EQ(r.clusters_replayed, 1);
}

TEST(CheckReplay, BulkCopyAndStateFormWaitsAreClean) {
  Trace t;
  const int64_t src = 0x7f1300000010;  // 16-byte aligned, not 256: the low bits are kept
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {2}}});
  t.rec(kArriveTx, 0, 0, {{"state", {77}}, {"addr", {kBar}}, {"txCount", {4096}}});
  t.rec(kBulk, 0, 0, {{"dstMem", {kBuf}}, {"srcMem", {src}}, {"size", {4096}}, {"mbar", {kBar}}});
  t.rec(kArrive, 0, 1, {{"state", {1234}}, {"addr", {kBar}}});
  t.rec(kTestWait, 0, 1, {{"addr", {kBar}}, {"state", {1234}}}, true);
  t.rec(kLdShared, 0, 1, {{"addr", {kBuf + 4092}}, {"size", {4}}});
  auto r = t.replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
}

// The record of a wait is written after the wait returns, an arrive's after the arrive: a
// waiter's record can come first. Its thread waits on the model until the arrive is replayed.
TEST(CheckReplay, AWaitRecordedBeforeTheArriveThatCompletedItWaits) {
  Map m;
  Trace t;
  t.encoded(m);
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(kWaitParity, 0, 7, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  t.rec(kLdShared, 0, 7, {{"addr", {kBuf}}, {"size", {16}}});
  t.rec(kArriveTx, 0, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {m.box_bytes()}}});
  t.map_bytes(kLoad, 0, 0, m.descriptor());
  t.rec(kLoad, 0, 0, {{"dstMem", {kBuf}}, {"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 0}}, {"mbar", {kBar}}});
  auto r = t.replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
}

TEST(CheckReplay, ExpectTxShortBy16HangsAndSaysSo) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["outcome"] = "timeout";
  t.meta()["timeout_s"] = 5.0;
  produce(t, m, m.box_bytes() - 16);
  for (int i = 0; i < 3; ++i) t.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.hang"}) << tmakit::check::to_text(r);
  const auto& f = r.findings[0];
  EXPECT_EQ(f.file, "/src/pipeline.cu");
  EXPECT_EQ(f.line, kWaitParity);
  EXPECT_NE(f.message.find("16 bytes more were delivered than armed"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("within 5"), std::string::npos) << f.message;
  EXPECT_NE(r.outcome_explained.find("1 threads in a wait that never completes (cta 0 thread 0 at /src/pipeline.cu:22)"),
            std::string::npos)
      << r.outcome_explained;
  EXPECT_NE(f.message.find("mbarrier at shared offset 65536 of CTA 0"), std::string::npos) << f.message;
}

TEST(CheckReplay, ExpectTxLongBy16Hangs) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["outcome"] = "timeout";
  produce(t, m, m.box_bytes() + 16);
  t.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.hang"}) << tmakit::check::to_text(r);
  const std::string& msg = r.findings[0].message;
  EXPECT_NE(msg.find("16 armed bytes were never delivered"), std::string::npos) << msg;
  // Every arrival is in: the producer, waiting itself, owes the barrier no arrive. Only a copy it
  // has yet to issue could bring the bytes (the parity bug below owes its next arrive).
  EXPECT_NE(msg.find("cta 0 thread 0 arrived on it before (last at /src/pipeline.cu:20) and now waits itself at "
                     "/src/pipeline.cu:22: if a copy it has yet to issue was to bring the missing bytes, that copy "
                     "sits behind the wait"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("its next arrive"), std::string::npos) << msg;
}

// Short by 128 bytes: the H100 may complete the phase before the last bytes land (a wait
// that returned); the model, which lands the box whole, cannot complete it and says why.
TEST(CheckReplay, ExpectTxShortBy128CompletedEarlyOnTheHardware) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes() - 128);
  t.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"model.tx-mismatch"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kArriveTx);  // where the barrier was armed
  EXPECT_NE(r.findings[0].message.find("transaction count -128"), std::string::npos) << r.findings[0].message;
  EXPECT_NE(r.findings[0].message.find("bytes arrived after its phase had completed"), std::string::npos);
  EXPECT_NE(r.findings[0].message.find("the hardware's wait at /src/pipeline.cu:22 returned"), std::string::npos);
}

TEST(CheckReplay, WrongArrivalCountHangs) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["outcome"] = "timeout";
  produce(t, m, m.box_bytes(), /*init_count=*/2);
  t.rec(kWaitParity, 0, 3, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.hang"}) << tmakit::check::to_text(r);
  EXPECT_NE(r.findings[0].message.find("1 of 2 arrivals pending"), std::string::npos) << r.findings[0].message;
  EXPECT_EQ(r.findings[0].thread, 3);
}

// A two-stage ring whose wait does not flip its parity when the ring wraps: round 2 waits on
// parity 0 again. On the hardware the refill of round 1 had landed by then (the barrier was in
// phase 2, parity 0), so the poll failed and every thread waited for a phase whose arrive
// thread 0 makes only after its own wait. The model, free to land the refill late, must take
// the failed poll as a fact (land it), and then name the barrier, the phase and the thread
// whose next arrive sits behind the wait.
TEST(CheckReplay, ParityNotFlippedOnWrapHangsAndNamesTheProducerBehindTheWait) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["outcome"] = "timeout";
  produce(t, m, m.box_bytes());                                                 // round 0: phase 0
  for (int th : {0, 5}) t.rec(kWaitParity, 0, th, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  t.rec(kArriveTx, 0, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {m.box_bytes()}}});  // round 1: phase 1
  t.map_bytes(kLoad, 0, 0, m.descriptor());
  t.rec(kLoad, 0, 0, {{"dstMem", {kBuf}}, {"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 32}}, {"mbar", {kBar}}});
  for (int th : {5, 0}) t.rec(kWaitParity, 0, th, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);  // should be 1
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.hang"}) << tmakit::check::to_text(r);
  const std::string& msg = r.findings[0].message;
  EXPECT_NE(msg.find("phase 2 (parity 0): 1 of 1 arrivals pending"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the waiters poll for parity 0, the parity of the phase it is in (2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cta 0 thread 0 arrived on it before (last at /src/pipeline.cu:20) and now waits itself at "
                     "/src/pipeline.cu:22: its next arrive, and the copy that brings the bytes, sit behind that wait"),
            std::string::npos)
      << msg;
  EXPECT_EQ(r.outcome_explained.find("the hang is in code the trace does not show"), std::string::npos)
      << r.outcome_explained;
}

// A failed poll where nothing is in flight and the phase it names completed before the
// polling thread's previous record: no completion the model can choose, and no order of the
// records, makes the phase incomplete when the poll ran. The replay says the model and the
// hardware disagree there.
TEST(CheckReplay, AFailedPollNoScheduleExplainsIsSaid) {
  Trace t;
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(kArrive, 0, 1, {{"state", {0}}, {"addr", {kBar}}});  // record 1 completes phase 0
  t.rec(kLdShared, 0, 5, {{"addr", {kBuf}}, {"size", {4}}});  // thread 5's record 2
  t.rec(kWaitParity, 0, 5, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.wait-disagrees"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].severity, "warning");
  EXPECT_EQ(r.findings[0].line, kWaitParity);
  EXPECT_NE(r.findings[0].message.find("phase 1 (parity 1): 1 of 1 arrivals pending"), std::string::npos)
      << r.findings[0].message;
  EXPECT_NE(r.findings[0].message.find("completed at record 1, before this thread's previous record (2)"),
            std::string::npos)
      << r.findings[0].message;
}

// The same poll where the completion may have come after it: the polling thread's previous
// record comes before the arrive's, so the poll may have run before the arrive (a wait's record
// is written after the poll; CUTLASS's consumers poll while producers arrive). No finding.
TEST(CheckReplay, AFailedPollThatMayPrecedeTheCompletionIsNoFinding) {
  for (bool first : {true, false}) {  // the poll is the thread's first record, or follows another
    Trace t;
    t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
    if (!first) t.rec(kLdShared, 0, 5, {{"addr", {kBuf}}, {"size", {4}}});
    t.rec(kArrive, 0, 1, {{"state", {0}}, {"addr", {kBar}}});
    t.rec(kWaitParity, 0, 5, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);
    t.rec(kWaitParity, 0, 5, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
    auto r = t.replay();
    EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  }
}

// A warp record (one record for the lanes of a warp whose values agree) is read back as one
// record a lane: the clean pipeline's consumers as four warp records (lanes 0-31 of each
// warp, 128 threads) replay as 128 waits, and the same trace with one record a thread is the
// same report.
// Past the bound on records of single threads, the reader keeps warp records whole and the
// replay expands each cluster on its own; a cluster that still passes the bound is cut: the
// records it did not read are counted, the end-of-program checks are skipped (a cut trace would
// look deadlocked), and the report says so and how to trace less.
TEST(CheckReplay, AClusterStandingForTooManyThreadRecordsIsCutAndSaysSo) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes());
  for (int w = 0; w < 4; ++w)
    t.rec(kWaitParity, 0, 32 * w, {{"addr", {kBar}}, {"phaseParity", {0}}}, true).warp(0xFFFFFFFFu);
  const auto whole = tmakit::check::parse_trace_dir(t.meta_text(), t.bin(), t.sites_text(), t.maps_text());
  EXPECT_FALSE(whole.compact);
  const uint64_t read = whole.records.size() - 64;  // room for all but the last two warps
  const auto cut = tmakit::check::parse_trace_dir(t.meta_text(), t.bin(), t.sites_text(), t.maps_text(), read);
  EXPECT_TRUE(cut.compact);
  EXPECT_EQ(cut.records.size(), t.size()) << "warp records kept whole";
  const auto report = tmakit::check::replay(cut);
  EXPECT_TRUE(report.findings.empty()) << tmakit::check::to_text(report);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find("end-of-program checks"), std::string::npos) << report.skipped[0];
  EXPECT_NE(report.skipped[0].find("2 records at the end of cluster (0,0,0)'s trace were not read"), std::string::npos)
      << report.skipped[0];
  EXPECT_TRUE(tmakit::check::replay(whole).skipped.empty());
}

// A trace whose warp records stand for more records of single threads than the bound, but
// each of whose clusters stands for fewer, replays whole, a cluster at a time, with the same
// findings as the trace expanded whole: here two clusters, one clean and one whose barrier is
// armed for 16 bytes too few.
TEST(CheckReplay, ATraceTooLargeToExpandWholeReplaysOneClusterAtATime) {
  Map m;
  Trace t;
  t.meta()["grid"] = {2, 1, 1};
  t.encoded(m);
  for (uint32_t c = 0; c < 2; ++c) {
    const size_t before = t.size();
    produce(t, m, m.box_bytes() - (c == 1 ? 16 : 0), 1, 0);
    for (int w = 0; w < 4; ++w)
      t.rec(kWaitParity, 0, 32 * w, {{"addr", {kBar}}, {"phaseParity", {0}}}, true).warp(0xFFFFFFFFu);
    t.in_cluster(c, t.size() - before);
  }
  const auto whole = tmakit::check::parse_trace_dir(t.meta_text(), t.bin(), t.sites_text(), t.maps_text());
  ASSERT_FALSE(whole.compact);
  const uint64_t one_cluster = whole.records.size() / 2;
  const auto compact =
      tmakit::check::parse_trace_dir(t.meta_text(), t.bin(), t.sites_text(), t.maps_text(), one_cluster + 1);
  ASSERT_TRUE(compact.compact);
  const auto a = tmakit::check::replay(whole), b = tmakit::check::replay(compact);
  EXPECT_EQ(rules(a), rules(b)) << tmakit::check::to_text(b);
  EXPECT_FALSE(rules(b).empty()) << "the under-armed cluster's finding";
  EXPECT_TRUE(b.skipped.empty()) << b.skipped[0];
  EXPECT_EQ(a.clusters_replayed, 2);
  EXPECT_EQ(b.clusters_replayed, 2);
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i) EXPECT_EQ(a.findings[i].line, b.findings[i].line) << i;
}

TEST(CheckReplay, WarpRecordsStandForEveryLaneInTheirMask) {
  Map m;
  auto build = [&](bool warps) {
    Trace t;
    t.encoded(m);
    produce(t, m, m.box_bytes());
    for (int w = 0; w < 4; ++w) {
      if (warps) {
        t.rec(kWaitParity, 0, 32 * w + 3, {{"addr", {kBar}}, {"phaseParity", {0}}}, true).warp(0xFFFFFFF8u);
        for (int l = 0; l < 3; ++l) t.rec(kWaitParity, 0, 32 * w + l, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
      } else {
        for (int l = 0; l < 32; ++l) t.rec(kWaitParity, 0, 32 * w + l, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
      }
    }
    return t;
  };
  Trace warps = build(true), threads = build(false);
  const auto dir = warps.parsed();
  ASSERT_EQ(dir.records.size(), threads.parsed().records.size());
  std::vector<int> seen(128, 0);
  for (const auto& r : dir.records)
    if (r.op == static_cast<uint16_t>(tmakit::instrument::TraceOp::mbar_try_wait)) {
      EXPECT_EQ(r.flags, tmakit::instrument::kFlagWaitComplete);
      seen.at(r.tid_x)++;
    }
  EXPECT_EQ(seen, std::vector<int>(128, 1));
  const auto a = warps.replay(), b = threads.replay();
  EXPECT_TRUE(a.findings.empty()) << tmakit::check::to_text(a);
  EXPECT_EQ(a.replayed, b.replayed);
  // A mask without the recording lane, or one past the block, is refused with the record named.
  Trace bad = build(false);
  bad.rec(kWaitParity, 0, 5, {{"addr", {kBar}}, {"phaseParity", {0}}}, true).warp(0x1u);
  EXPECT_THROW(bad.parsed(), tmakit::check::TraceError);
  Trace past = build(false);
  past.rec(kWaitParity, 0, 96, {{"addr", {kBar}}, {"phaseParity", {0}}}, true).warp(0x3u);
  past.meta()["block"] = {97, 1, 1};
  try {
    past.parsed();
    ADD_FAILURE() << "a lane past the block was accepted";
  } catch (const tmakit::check::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("past the block's 97 threads"), std::string::npos) << e.what();
  }
}

TEST(CheckReplay, WrongParityReturnsBeforeTheData) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes());
  t.rec(kWaitParity, 0, 9, {{"addr", {kBar}}, {"phaseParity", {1}}}, true);  // phase 0 has parity 0
  t.rec(kLdShared, 0, 9, {{"addr", {kBuf + 64}}, {"size", {8}}});
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.wrong-parity"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kLdShared);
  EXPECT_NE(r.findings[0].message.find("waited on parity 1 while the barrier was in phase 0"), std::string::npos);
}

TEST(CheckReplay, DestinationReadBeforeTheWait) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes());
  t.rec(kLdShared, 0, 4, {{"addr", {kBuf}}, {"size", {16}}});
  t.rec(kWaitParity, 0, 4, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.read-before-wait"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kLdShared);
  EXPECT_EQ(r.findings[0].column, 3);
}

TEST(CheckReplay, MisalignedCoordinateFaults) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["outcome"] = "fault";
  t.meta()["driver_result"] = "CUDA_ERROR_ILLEGAL_INSTRUCTION";
  produce(t, m, m.box_bytes(), 1, 0, kBuf, {1, 0});  // 4 bytes off its 16-byte granule
  auto r = t.replay();
  EXPECT_EQ(rules(r), (std::vector<std::string>{"coord.inner-align", "check.fault"})) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kLoad);
  EXPECT_EQ(r.findings[1].line, kLoad);
  EXPECT_NE(r.outcome_explained.find("tensor_load at /src/pipeline.cu:21"), std::string::npos) << r.outcome_explained;
}

TEST(CheckReplay, SharedDestinationOff128Bytes) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes(), 1, 0, 64);
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"tensor.smem-align"}) << tmakit::check::to_text(r);
}

TEST(CheckReplay, SwizzledDestinationOff1024IsAWarningWhenAnOrdinaryLoadReadsIt) {
  // A 128B-swizzled box at a 128- but not 1024-byte aligned offset, read after its wait by ld.shared:
  // a generic reader that may assume the pattern starts at the buffer, a warning at the copy.
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes(), 1, 0, 128);
  t.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  sync(t, {0, 3});  // thread 0 waited for the box; __syncthreads() passes that on to thread 3
  t.rec(kLdShared, 0, 3, {{"addr", {kBuf + 128 + 16}}, {"size", {16}}});
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.swizzle-phase"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].severity, "warning");
  EXPECT_NE(r.findings[0].message.find("ordinary load"), std::string::npos) << r.findings[0].message;
  EXPECT_FALSE(r.clean());
  // The same box read only by the copy engine or wgmma (no ld.shared in the trace): they read by the
  // address bits the copy wrote with, so there is nothing to warn about (a correct CUTLASS GEMM).
  Trace engine_only;
  engine_only.encoded(m);
  produce(engine_only, m, m.box_bytes(), 1, 0, 128);
  engine_only.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  EXPECT_TRUE(engine_only.replay().findings.empty()) << tmakit::check::to_text(engine_only.replay());
  // An ordinary load of other bytes than the box: no warning either.
  Trace elsewhere;
  elsewhere.encoded(m);
  produce(elsewhere, m, m.box_bytes(), 1, 0, 128);
  elsewhere.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  elsewhere.rec(kLdShared, 0, 3, {{"addr", {kBuf + 128 + m.box_bytes() + 4096}}, {"size", {16}}});
  EXPECT_TRUE(elsewhere.replay().findings.empty()) << tmakit::check::to_text(elsewhere.replay());
  // Just inside: 1024-aligned, or a 64B swizzle (512-byte pattern) at 512, each read by ld.shared.
  Trace ok;
  Map m64;
  m64.swizzle = "64b";
  m64.box[0] = 16;
  ok.encoded(m64);
  produce(ok, m64, m64.box_bytes(), 1, 0, 512);
  ok.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  sync(ok, {0, 3});
  ok.rec(kLdShared, 0, 3, {{"addr", {kBuf + 512}}, {"size", {16}}});
  EXPECT_TRUE(ok.replay().findings.empty()) << tmakit::check::to_text(ok.replay());
}

TEST(CheckReplay, MulticastMaskPastTheCluster) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["cluster"] = {2, 1, 1};
  t.meta()["grid"] = {2, 1, 1};
  for (int cta = 0; cta < 2; ++cta) {
    t.rec(kInit, cta, 0, {{"addr", {kBar}}, {"count", {1}}});
    t.rec(kFenceInit, cta, 0, {});
  }
  t.map_bytes(kMulticast, 0, 0, m.descriptor());
  t.rec(kMulticast, 0, 0,
        {{"dstMem", {kBuf}}, {"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 0}}, {"mbar", {kBar}}, {"ctaMask", {0b101}}});
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"multicast.mask-range"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kMulticast);
}

TEST(CheckReplay, StoreAfterStSharedWithoutProxyFence) {
  Map m;
  Trace t;
  t.encoded(m);
  t.rec(kStShared, 0, 2, {{"addr", {kBuf + 16}}, {"size", {4}}});
  t.map_bytes(kStore, 0, 2, m.descriptor());
  t.rec(kStore, 0, 2, {{"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 0}}, {"srcMem", {kBuf}}});
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"model.missing-proxy-fence"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kStore);
}

TEST(CheckReplay, StoreSourceOverwrittenBeforeWaitGroupRead) {
  Map m;
  Trace t;
  t.encoded(m);
  t.map_bytes(kStore, 0, 2, m.descriptor());
  t.rec(kStore, 0, 2, {{"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 0}}, {"srcMem", {kBuf}}});
  t.rec(kCommit, 0, 2, {});
  t.rec(kStShared, 0, 2, {{"addr", {kBuf + 256}}, {"size", {16}}});
  t.rec(kWaitRead, 0, 2, {{"N", {0}}});
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"model.use-before-completion"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kStShared);
}

Trace remote_arrive(bool fenced) {
  Trace t;
  t.meta()["cluster"] = {2, 1, 1};
  t.meta()["grid"] = {2, 1, 1};
  t.rec(kInit, 1, 0, {{"addr", {kBar}}, {"count", {1}}});
  if (fenced) t.rec(kFenceInit, 1, 0, {});
  t.rec(kRemoteArrive, 0, 0, {{"addr", {(int64_t{1} << 24) | kBar}}});  // mapa's address of CTA 1's barrier
  return t;
}

TEST(CheckReplay, InitWithoutFenceBeforeARemoteArrive) {
  auto r = remote_arrive(false).replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.init-fence-missing"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kRemoteArrive);
  EXPECT_EQ(r.findings[0].cta, 0);
  auto ok = remote_arrive(true).replay();
  EXPECT_TRUE(ok.findings.empty()) << tmakit::check::to_text(ok);
}

// Where every shared address carries its CTA's rank (CTA 1 initialises its barrier at
// 1 << 24 | offset), a small address is rank 0's, not the executing CTA's.
TEST(CheckReplay, SharedAddressesThatCarryTheRank) {
  Map m;
  auto trace = [&](bool fence_in_cta0) {
    Trace t;
    t.encoded(m);
    t.meta()["cluster"] = {2, 1, 1};
    t.meta()["grid"] = {2, 1, 1};
    const int64_t rank1 = int64_t{1} << 24;
    t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {2}}});
    if (fence_in_cta0) t.rec(kFenceInit, 0, 0, {});
    t.rec(kInit, 1, 0, {{"addr", {rank1 | kBar}}, {"count", {1}}});
    t.rec(kFenceInit, 1, 0, {});
    t.rec(kArriveTx, 1, 0, {{"state", {0}}, {"addr", {rank1 | kBar}}, {"txCount", {m.box_bytes()}}});
    t.map_bytes(kLoad, 1, 0, m.descriptor());
    t.rec(kLoad, 1, 0,
          {{"dstMem", {rank1 | kBuf}}, {"tensorMap", {kMapAddr}}, {"tensorCoords", {0, 0}}, {"mbar", {rank1 | kBar}}});
    t.rec(kWaitParity, 1, 0, {{"addr", {rank1 | kBar}}, {"phaseParity", {0}}}, true);
    t.rec(kRemoteArrive, 1, 0, {{"addr", {kBar}}});  // CTA 0's barrier
    t.rec(kRemoteArrive, 0, 0, {{"addr", {kBar}}});  // its own, through the cluster window
    return t;
  };
  auto ok = trace(true).replay();
  EXPECT_TRUE(ok.findings.empty()) << tmakit::check::to_text(ok);
  auto r = trace(false).replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.init-fence-missing"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].cta, 1);
  EXPECT_NE(r.findings[0].message.find("of CTA 0"), std::string::npos);
}

// `acquirer`: the thread that acquires the changed map (-1: none); the load is thread 0's.
Trace replaced_map(bool acquire, int acquirer = 0, int acquirer_cta = 0) {
  Map m;
  Trace t;
  t.encoded(m);
  const int64_t map_in_global = 0x7f1400000000;
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  // The map before the change is the one encoded; after it, its bytes are no encoded map's.
  t.map_bytes(kReplace, 0, 0, m.descriptor());
  t.rec(kReplace, 0, 0, {{"addr", {map_in_global}}, {"new_val", {0x7f1500000000}}});
  if (acquire) t.rec(kAcquire, acquirer_cta, acquirer, {{"addr", {map_in_global}}, {"size", {128}}});
  t.rec(kArriveTx, 0, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {m.box_bytes()}}});
  Map changed = m;
  changed.seed = 77;
  t.map_bytes(kLoadFromReg, 0, 0, changed.descriptor());
  t.rec(kLoadFromReg, 0, 0,
        {{"dstMem", {kBuf}}, {"tensorMap", {map_in_global}}, {"tensorCoords", {0, 0}}, {"mbar", {kBar}}});
  t.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  return t;
}

TEST(CheckReplay, MapReplacedWithoutTheTensormapFence) {
  auto r = replaced_map(false).replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.tensormap-fence-missing"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kLoadFromReg);
  auto ok = replaced_map(true).replay();
  EXPECT_TRUE(ok.findings.empty()) << tmakit::check::to_text(ok);
  // Another thread of the CTA acquires it before the use (Triton 3.6: one warp acquires, the CTA
  // barrier orders the copies of the other warps after it): no finding.
  auto other_thread = replaced_map(true, 32).replay();
  EXPECT_TRUE(other_thread.findings.empty()) << tmakit::check::to_text(other_thread);
}

TEST(CheckReplay, UnknownMap) {
  Map m, other;
  other.seed = 9;
  Trace t;
  t.encoded(m);
  produce(t, other, other.box_bytes());
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"check.map-unknown"}) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[0].line, kLoad);
}

// A log line whose map the validator refuses (the driver never wrote such a descriptor) is
// not walked on the model: the operation is left out and the note says which rule.
TEST(CheckReplay, AMapTheValidatorRefusesIsNotReplayed) {
  Map m;
  m.box[0] = 512;  // boxDim above 256
  Trace t;
  t.encoded(m);
  produce(t, m, 4096);
  auto r = t.replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  const std::string text = tmakit::check::to_text(r);
  EXPECT_NE(text.find("its map (maps.jsonl line 1) breaks map."), std::string::npos) << text;
}

TEST(CheckReplay, HolesAreSkippedAndCounted) {
  Map m;
  Trace t;
  t.encoded(m);
  produce(t, m, m.box_bytes());
  t.hole();
  t.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, true);
  t.hole();
  auto r = t.replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  EXPECT_EQ(r.holes, 2u);
  EXPECT_NE(tmakit::check::to_text(r).find("2 records were reserved but never written"), std::string::npos);
}

TEST(CheckReplay, FindingsMergeBySiteWithACount) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["grid"] = {3, 1, 1};
  for (int i = 0; i < 3; ++i) t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  auto parsed = t.parsed();  // three clusters of one CTA each (%clusterid.x 0, 1, 2)
  for (size_t i = 0; i < parsed.records.size(); ++i) parsed.records[i].clusterid_x = static_cast<uint32_t>(i);
  auto r = tmakit::check::replay(parsed);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.clusters, 3);
  EXPECT_EQ(r.clusters_replayed, 3);
  tmakit::check::ReplayOptions one;
  one.max_clusters = 1;
  auto capped = tmakit::check::replay(parsed, one);
  EXPECT_EQ(capped.clusters_replayed, 1);
  EXPECT_NE(tmakit::check::to_text(capped).find("2 clusters past the first 1 are not replayed"), std::string::npos);

  // The same bug in three clusters: one finding, counted three times.
  Map other;
  other.seed = 5;
  Trace u;
  for (int i = 0; i < 3; ++i) produce(u, other, 4096, 1, 0);
  auto parsed2 = u.parsed();
  for (size_t i = 0; i < parsed2.records.size(); ++i) parsed2.records[i].clusterid_x = static_cast<uint32_t>(i / 6);
  auto merged = tmakit::check::replay(parsed2);
  ASSERT_EQ(rules(merged), std::vector<std::string>{"check.map-unknown"}) << tmakit::check::to_text(merged);
  EXPECT_EQ(merged.findings[0].count, 3);
}

TEST(CheckReplay, AHangAfterAModelErrorNamesTheError) {
  Map m;
  Trace t;
  t.encoded(m);
  t.meta()["outcome"] = "timeout";
  produce(t, m, m.box_bytes(), 1, 0, 64);  // the load is refused: its bytes never arrive
  t.rec(kWaitParity, 0, 0, {{"addr", {kBar}}, {"phaseParity", {0}}}, false);
  auto r = t.replay();
  ASSERT_EQ(rules(r), (std::vector<std::string>{"tensor.smem-align", "check.hang"})) << tmakit::check::to_text(r);
  EXPECT_EQ(r.findings[1].line, kWaitParity);
  EXPECT_NE(r.outcome_explained.find("the model stopped at an earlier error, the likely cause:"), std::string::npos)
      << r.outcome_explained;
  EXPECT_NE(r.outcome_explained.find("[tensor.smem-align]"), std::string::npos);
}

TEST(CheckReplay, MemoryPastTheBudgetIsLeftOutAndSaid) {
  Trace t;
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(kArriveTx, 0, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {8192}}});
  t.rec(kBulk, 0, 0, {{"dstMem", {kBuf}}, {"srcMem", {0x7f1300000000}}, {"size", {4096}}, {"mbar", {kBar}}});
  tmakit::check::ReplayOptions small;
  small.max_global_bytes = 2048;
  auto r = tmakit::check::replay(t.parsed(), small);
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);  // no tx-mismatch for a copy left out
  const std::string text = tmakit::check::to_text(r);
  EXPECT_NE(text.find("is past the model's budget of 2048 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("end-of-program checks"), std::string::npos) << text;
  // Within the budget the trace is replayed whole: 8192 bytes armed, 4096 delivered.
  auto whole = t.replay();
  EXPECT_EQ(rules(whole), std::vector<std::string>{"model.tx-mismatch"}) << tmakit::check::to_text(whole);
  EXPECT_EQ(whole.findings[0].line, kArriveTx);  // at the instruction that armed the barrier
}

// Records dropped past the capacity: for a kernel that completed, the copy that completed a
// barrier may be among them, so the end of the trace says nothing (the bench suite's copy and
// transpose kernels on the H100 filled the buffer and were reported unbalanced before).
TEST(CheckReplay, ACompletedKernelWhoseRecordsWereDroppedHasNoEndOfProgramFindings) {
  Trace t;
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(kArriveTx, 0, 0, {{"state", {0}}, {"addr", {kBar}}, {"txCount", {8192}}});
  t.meta()["capacity"] = 2;
  t.meta()["next"] = 5;  // three records past the capacity: the copies among them
  auto r = t.replay();
  EXPECT_TRUE(r.findings.empty()) << tmakit::check::to_text(r);
  const std::string text = tmakit::check::to_text(r);
  EXPECT_NE(text.find("3 records were dropped past the trace's capacity of 2"), std::string::npos) << text;
  EXPECT_NE(text.find("no end-of-program check"), std::string::npos) << text;
  t.meta()["capacity"] = 5;  // the same records, none dropped: the barrier is unbalanced
  t.meta()["next"] = 2;
  EXPECT_EQ(rules(t.replay()), std::vector<std::string>{"model.tx-mismatch"});
}

// A finding with no instruction to stand at (a barrier that no instruction armed ends
// unbalanced) is placed at the kernel: "KERNEL: error: ... [rule]".
TEST(CheckReplay, AFindingWithoutASiteIsPlacedAtTheKernel) {
  Trace t;
  t.rec(kInit, 0, 0, {{"addr", {kBar}}, {"count", {1}}});
  t.rec(kBulk, 0, 0, {{"dstMem", {kBuf}}, {"srcMem", {0x7f1300000000}}, {"size", {4096}}, {"mbar", {kBar}}});
  t.rec(kArrive, 0, 0, {{"state", {5}}, {"addr", {kBar}}});
  auto r = t.replay();
  ASSERT_EQ(rules(r), std::vector<std::string>{"model.tx-mismatch"}) << tmakit::check::to_text(r);
  EXPECT_TRUE(r.findings[0].file.empty());
  EXPECT_EQ(tmakit::check::to_text(r).rfind("check_cases: error: the mbarrier at shared offset 65536", 0), 0u)
      << tmakit::check::to_text(r);
}

TEST(CheckReplay, TextAndJsonReports) {
  auto r = remote_arrive(false).replay();
  const std::string text = tmakit::check::to_text(r);
  EXPECT_EQ(text.rfind("/src/pipeline.cu:42:3: error: CTA 0 uses the mbarrier at shared offset 65536 of CTA 1", 0), 0u)
      << text;
  EXPECT_NE(text.find("[check.init-fence-missing]"), std::string::npos);
  EXPECT_NE(text.find("1 error, 0 warnings"), std::string::npos);
  auto j = tmakit::check::to_json(r);
  EXPECT_EQ(j["findings"][0]["rule"], "check.init-fence-missing");
  EXPECT_EQ(j["findings"][0]["line"], 42);
  EXPECT_EQ(j["clean"], false);
}

}  // namespace
