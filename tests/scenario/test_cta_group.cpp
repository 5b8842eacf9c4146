// CTA pairs (§10.2, sm_100a/f): which CTA's barrier a tensor load signals under
// .cta_group::1 and ::2, with and without .multicast::cluster, and the cluster
// diagnostics of §10.1 / §13 item 9 that concern destination barriers.
// Barrier routing is observed through the engine's transaction accounting: a run
// is clean only if every armed barrier received exactly its armed bytes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
using nlohmann::json;

namespace {

constexpr int kBox = 1024;  // tmapF: float32 box 32 × 8

// `ctas` CTAs on sm_100a; each symbol mbarN / dstN names CTA N's barrier / tile in the
// shared::cluster window, and `mbar` / `tile` the executing CTA's own.
json cluster(int ctas) {
  json s = {{"format", "tmakit-scenario/1"},
            {"target", "sm_100a"},
            {"ptx_version", "8.7"},
            {"cluster", {{"ctas", ctas}}},
            {"shared_bytes", 16384},
            {"global", {{"A", {{"bytes", 8192}, {"init", {{"random", 9}}}}}}},
            {"tensor_maps",
             {{"tmapF", {{"encode", "tiled"}, {"data_type", "float32"}, {"global", "A"}, {"dims", {32, 64}},
                         {"strides", {128}}, {"box", {32, 8}}}}}},
            {"symbols", {{"tile", "shared:4096"}, {"mbar", "shared:8192"}}},
            {"program", json::array()}};
  for (int c = 0; c < ctas; ++c) {
    s["symbols"]["dst" + std::to_string(c)] = "shared@" + std::to_string(c) + ":4096";
    s["symbols"]["mbar" + std::to_string(c)] = "shared@" + std::to_string(c) + ":8192";
    s["outputs"].push_back({{"name", "cta" + std::to_string(c)}, {"shared", {{"cta", c}, {"offset", 4096}, {"bytes", kBox}}}});
  }
  return s;
}

void add(json& s, int cta, const std::string& ptx) { s["program"].push_back({{"cta", cta}, {"ptx", ptx}}); }
void arm(json& s, int cta, int bytes) {
  add(s, cta, "mbarrier.init.shared::cta.b64 [mbar], 1;");
  add(s, cta, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(bytes) + ";");
}
void wait(json& s, int cta) { add(s, cta, "mbarrier.try_wait.parity.shared::cta.b64 p, [mbar], 0;"); }

std::string tload(const std::string& quals, const std::string& dst, const std::string& mbar, const std::string& mask = "") {
  return "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" + quals + " [" + dst +
         "], [tmapF, {0, 8}], [" + mbar + "]" + (mask.empty() ? "" : ", " + mask) + ";";
}

struct Outcome {
  std::optional<Diagnostic> error;
  scenario::RunResult result;
};
Outcome run(const json& s) {
  Outcome o;
  try {
    o.result = scenario::run(scenario::from_json(json::parse(s.dump()), "."));
  } catch (const DiagnosticError& e) {
    o.error = e.diagnostic();
  }
  return o;
}

std::string rule(const Outcome& o) { return o.error ? o.error->rule : "(clean)"; }
std::string text(const Outcome& o) { return o.error ? format(*o.error) : ""; }

// Rows 8..15 of A (128-byte rows): the box at {0, 8}.
std::vector<uint8_t> box_bytes() {
  std::vector<uint8_t> v;
  for (uint64_t i = 8 * 128; i < 16 * 128; ++i) v.push_back(uint8_t(scenario::splitmix64(9 + i / 8) >> (8 * (i % 8))));
  return v;
}

TEST(CtaGroup, OneKeepsTheBarrierInTheDestinationCta) {
  json s = cluster(2);
  arm(s, 1, kBox);
  add(s, 0, tload(".cta_group::1", "dst1", "mbar1"));
  wait(s, 1);
  Outcome o = run(s);
  ASSERT_EQ(rule(o), "(clean)") << text(o);
  EXPECT_EQ(o.result.outputs[1].second, box_bytes());
  // ::1 (and the default) refuse a barrier in the peer CTA (§10.2).
  for (const std::string q : {".cta_group::1", ""}) {
    json bad = cluster(2);
    arm(bad, 0, kBox);
    add(bad, 0, tload(q, "dst1", "mbar0"));
    Outcome b = run(bad);
    EXPECT_EQ(rule(b), "tensor.mbar-cta") << q;
  }
}

TEST(CtaGroup, TwoSignalsThePeerCtaThatHoldsTheBarrier) {
  // Data lands in CTA 1; the complete-tx goes to the barrier in its peer, CTA 0.
  json s = cluster(2);
  arm(s, 0, kBox);
  add(s, 1, "mbarrier.init.shared::cta.b64 [mbar], 1;");  // CTA 1's own barrier: never signalled
  add(s, 0, tload(".cta_group::2", "dst1", "mbar0"));
  wait(s, 0);
  Outcome o = run(s);
  ASSERT_EQ(rule(o), "(clean)") << text(o);
  EXPECT_EQ(o.result.outputs[1].second, box_bytes());
  EXPECT_EQ(o.result.outputs[0].second, std::vector<uint8_t>(kBox, 0)) << "no data in the barrier's CTA";
  // The same load may still name the destination's own barrier.
  json own = cluster(2);
  arm(own, 1, kBox);
  add(own, 0, tload(".cta_group::2", "dst1", "mbar1"));
  wait(own, 1);
  EXPECT_EQ(rule(run(own)), "(clean)");
  // A .shared::cta destination may also point at the peer's barrier.
  json cta = cluster(2);
  arm(cta, 1, kBox);
  add(cta, 0,
      "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.cta_group::2 [tile], [tmapF, {0, 8}], "
      "[mbar1];");
  wait(cta, 1);
  Outcome c = run(cta);
  ASSERT_EQ(rule(c), "(clean)") << text(c);
  EXPECT_EQ(c.result.outputs[0].second, box_bytes());
}

TEST(CtaGroup, TwoRefusesABarrierOutsideThePair) {
  json s = cluster(4);
  arm(s, 2, kBox);
  add(s, 0, tload(".cta_group::2", "dst1", "mbar2"));  // pair of CTA 1 is {0, 1}
  Outcome o = run(s);
  EXPECT_EQ(rule(o), "tensor.mbar-cta");
  EXPECT_NE(text(o).find("peer CTA 0"), std::string::npos) << text(o);
  // And a peer whose barrier was never initialised is named.
  json missing = cluster(2);
  add(missing, 0, tload(".cta_group::2", "dst1", "mbar0"));
  Outcome m = run(missing);
  EXPECT_EQ(rule(m), "mbarrier.invalid");
  EXPECT_NE(text(m).find("CTA 0"), std::string::npos) << text(m);
}

// §10.2 with multicast: each destination d signals CTA (d & ~1) | (rank of mbar's CTA & 1).
TEST(CtaGroup, MulticastWithPairsSignalsOneBarrierPerPair) {
  for (int parity : {0, 1}) {
    SCOPED_TRACE("mbar in CTA " + std::to_string(parity));
    json s = cluster(4);
    // The barrier CTAs of pairs {0,1} and {2,3}: each receives the bytes of both CTAs of its pair.
    arm(s, parity, 2 * kBox);
    arm(s, 2 + parity, 2 * kBox);
    add(s, 3, tload(".multicast::cluster.cta_group::2", "tile", "mbar" + std::to_string(parity), "0xf"));
    wait(s, parity);
    wait(s, 2 + parity);
    Outcome o = run(s);
    ASSERT_EQ(rule(o), "(clean)") << text(o);
    for (int c = 0; c < 4; ++c) EXPECT_EQ(o.result.outputs[c].second, box_bytes()) << "CTA " << c;
    // Armed for one CTA's bytes only: the pair's second copy over-delivers.
    json under = cluster(4);
    arm(under, parity, kBox);
    arm(under, 2 + parity, 2 * kBox);
    add(under, 3, tload(".multicast::cluster.cta_group::2", "tile", "mbar" + std::to_string(parity), "0xf"));
    Outcome u = run(under);
    EXPECT_EQ(rule(u), "model.tx-mismatch");
    EXPECT_NE(text(u).find("of CTA " + std::to_string(parity)), std::string::npos) << text(u);
  }
  // A mask of one CTA of a pair: only that CTA's data, one box to the pair's barrier.
  json one = cluster(4);
  arm(one, 2, kBox);
  add(one, 0, tload(".multicast::cluster.cta_group::2", "tile", "mbar2", "0x8"));
  wait(one, 2);
  Outcome o = run(one);
  ASSERT_EQ(rule(o), "(clean)") << text(o);
  EXPECT_EQ(o.result.outputs[3].second, box_bytes());
  EXPECT_EQ(o.result.outputs[2].second, std::vector<uint8_t>(kBox, 0));
}

TEST(CtaGroup, MulticastWithPairsNeedsThePeerInTheCluster) {
  // Three CTAs: CTA 2's pair partner 3 does not exist, and an odd mbar routes CTA 2 there.
  json s = cluster(3);
  arm(s, 1, kBox);
  add(s, 0, tload(".multicast::cluster.cta_group::2", "tile", "mbar1", "0x4"));
  Outcome o = run(s);
  EXPECT_EQ(rule(o), "multicast.peer-missing");
  EXPECT_NE(text(o).find("CTA 3"), std::string::npos) << text(o);
}

TEST(CtaGroup, Sm100aOnly) {
  for (const std::string q : {".cta_group::1", ".cta_group::2"}) {
    json s = cluster(2);
    s["target"] = "sm_90a";
    arm(s, 1, kBox);
    add(s, 0, tload(q, "dst1", "mbar1"));
    Outcome o = run(s);
    EXPECT_EQ(rule(o), "ptx.target") << q;
    EXPECT_NE(text(o).find(q), std::string::npos) << text(o);
    s["target"] = "sm_100f";  // the family target from PTX 8.8
    s["ptx_version"] = "8.8";
    EXPECT_EQ(rule(run(s)), "(clean)") << q;
  }
}

// §13 item 9 and §10.1: a destination barrier that is initialised but never armed
// gets bytes it did not expect, and the end-of-program check names its CTA.
TEST(MulticastBarriers, ADestinationBarrierThatWasNeverArmed) {
  json s = cluster(2);
  arm(s, 0, kBox);
  add(s, 1, "mbarrier.init.shared::cta.b64 [mbar], 1;");
  add(s, 0, tload(".multicast::cluster", "tile", "mbar", "0x3"));
  wait(s, 0);
  Outcome o = run(s);
  EXPECT_EQ(rule(o), "model.tx-mismatch");
  EXPECT_NE(text(o).find("of CTA 1"), std::string::npos) << text(o);
  EXPECT_NE(text(o).find("transaction count -1024"), std::string::npos) << text(o);
  // With both armed the same program is clean.
  json ok = cluster(2);
  arm(ok, 0, kBox);
  arm(ok, 1, kBox);
  add(ok, 0, tload(".multicast::cluster", "tile", "mbar", "0x3"));
  wait(ok, 0);
  wait(ok, 1);
  EXPECT_EQ(rule(run(ok)), "(clean)");
}

}  // namespace
