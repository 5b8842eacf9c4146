// Every diagnostic of the reference model and the scenario runner: for each rule a
// small scenario that triggers it (the rule id, the step and the offending values
// must appear) and a neighbouring scenario just inside the rule that runs clean.
// Rule table: docs/diagnostics.md; facts: shared/spec/tma-semantics.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unistd.h>
#include <string>
#include <vector>

#include "tmakit/model/engine.hpp"
#include "tmakit/ptx/instruction.hpp"
#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
using nlohmann::json;

namespace {

// One cluster, 16 KiB of shared memory per CTA, two 8 KiB global allocations and
// a handful of maps over them. Tests add symbols and a program.
//   tmapF   float32  32 x 64 over A, box 32 x 8   -> 1024 bytes per box
//   tmapU8  uint8    64 x 128 over A, box 32 x 8  -> 256 bytes per box
//   tmapI64 int64    16 x 64 over B, box 16 x 4   -> 512 bytes per box
//   tmapU64 uint64   the same, unsigned
//   tmapBig uint8    64 x 256 over A (16 KiB of tensor on 8 KiB of memory)
//   tmapIm  im2col   float32 8 x 8 x 8 over A
json base(int ctas = 1) {
  json s = {
      {"format", "tmakit-scenario/1"},
      {"target", "sm_90a"},
      {"ptx_version", "8.7"},
      {"cluster", {{"ctas", ctas}}},
      {"shared_bytes", 16384},
      {"global", {{"A", {{"bytes", 8192}, {"init", {{"random", 1}}}}}, {"B", {{"bytes", 8192}}}}},
      {"tensor_maps",
       {{"tmapF", {{"encode", "tiled"}, {"data_type", "float32"}, {"global", "A"}, {"dims", {32, 64}},
                   {"strides", {128}}, {"box", {32, 8}}}},
        {"tmapU8", {{"encode", "tiled"}, {"data_type", "uint8"}, {"global", "A"}, {"dims", {64, 128}},
                    {"strides", {64}}, {"box", {32, 8}}}},
        {"tmapI64", {{"encode", "tiled"}, {"data_type", "int64"}, {"global", "B"}, {"dims", {16, 64}},
                     {"strides", {128}}, {"box", {16, 4}}}},
        {"tmapU64", {{"encode", "tiled"}, {"data_type", "uint64"}, {"global", "B"}, {"dims", {16, 64}},
                     {"strides", {128}}, {"box", {16, 4}}}},
        {"tmapBig", {{"encode", "tiled"}, {"data_type", "uint8"}, {"global", "A"}, {"dims", {64, 256}},
                     {"strides", {64}}, {"box", {32, 8}}}},
        {"tmapIm", {{"encode", "im2col"}, {"data_type", "float32"}, {"global", "A"}, {"dims", {8, 8, 8}},
                    {"strides", {32, 256}}, {"pixel_box_lower", {0}}, {"pixel_box_upper", {0}},
                    {"channels_per_pixel", 8}, {"pixels_per_column", 8}}}}},
      {"symbols",
       {{"s0", "shared:0"}, {"s1k", "shared:1024"}, {"s2k", "shared:2048"}, {"s4k", "shared:4096"},
        {"mbar", "shared:8192"}, {"ga", "global:A"}, {"gb", "global:B"}}},
      {"program", json::array()},
  };
  if (ctas >= 2) {
    s["symbols"]["peer"] = "shared@1:4096";
    s["symbols"]["peerMbar"] = "shared@1:8192";
    s["symbols"]["self"] = "shared@0:4096";
    s["symbols"]["selfMbar"] = "shared@0:8192";
  }
  return s;
}

json with(json s, std::vector<json> program) {
  s["program"] = program;
  return s;
}
json prog(std::vector<json> program, int ctas = 1) { return with(base(ctas), std::move(program)); }
json on(int cta, const std::string& ptx) { return {{"cta", cta}, {"ptx", ptx}}; }

const std::string kInit = "mbarrier.init.shared::cta.b64 [mbar], 1;";
const std::string kWait = "mbarrier.try_wait.parity.shared::cta.b64 p, [mbar], 0;";
std::string arm(int64_t bytes) { return "mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], " + std::to_string(bytes) + ";"; }
std::string load(const std::string& dst, const std::string& src, const std::string& size, const std::string& mbar = "mbar") {
  return "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [" + dst + "], [" + src + "], " + size + ", [" +
         mbar + "];";
}
std::string store(const std::string& dst, const std::string& src, const std::string& size) {
  return "cp.async.bulk.global.shared::cta.bulk_group [" + dst + "], [" + src + "], " + size + ";";
}
std::string tload(const std::string& map, const std::string& x, const std::string& y, const std::string& dst = "s0") {
  return "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.tile [" + dst + "], [" + map + ", {" +
         x + ", " + y + "}], [mbar];";
}
std::string tstore(const std::string& map, const std::string& x, const std::string& y, const std::string& src = "s0") {
  return "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.tile [" + map + ", {" + x + ", " + y + "}], [" + src + "];";
}
std::string treduce(const std::string& op, const std::string& map, const std::string& x, const std::string& y,
                    const std::string& src = "s0") {
  return "cp.reduce.async.bulk.tensor.2d.global.shared::cta." + op + ".tile.bulk_group [" + map + ", {" + x + ", " + y +
         "}], [" + src + "];";
}
const std::string kCommit = "cp.async.bulk.commit_group;";
const std::string kWaitGroup0 = "cp.async.bulk.wait_group 0;";

struct Outcome {
  std::optional<Diagnostic> error;
  scenario::RunResult result;
};

// Through text, as a scenario file would arrive: a positive integer built in C++
// is a signed JSON number, which the map reader's unsigned fields refuse.
Outcome run(const json& j, const scenario::RunOptions& o = {}) {
  Outcome out;
  try {
    out.result = scenario::run(scenario::from_json(json::parse(j.dump()), TMAKIT_SOURCE_DIR), o);
  } catch (const DiagnosticError& e) {
    out.error = e.diagnostic();
  }
  return out;
}

std::vector<uint8_t> output(const Outcome& o, const std::string& name) {
  for (const auto& [n, bytes] : o.result.outputs)
    if (n == name) return bytes;
  ADD_FAILURE() << "no output " << name;
  return {};
}

// The run fails with `rule`; the diagnostic's place starts with `step`
// ("program[N] (cta C)") and its message names every one of `values`.
Diagnostic expect_error_impl(const json& j, const std::string& rule, const std::string& step,
                             const std::vector<std::string>& values, const scenario::RunOptions& o = {}) {
  Outcome out = run(j, o);
  if (!out.error) {
    ADD_FAILURE() << "expected [" << rule << "] but the scenario ran clean";
    return {};
  }
  const Diagnostic& d = *out.error;
  EXPECT_EQ(d.rule, rule) << format(d);
  EXPECT_EQ(d.where.rfind(step, 0), 0u) << "place should start with \"" << step << "\": " << format(d);
  for (const auto& v : values) EXPECT_NE(d.message.find(v), std::string::npos) << "message lacks \"" << v << "\": " << format(d);
  return d;
}

Outcome expect_clean_impl(const json& j, const scenario::RunOptions& o = {}) {
  Outcome out = run(j, o);
  EXPECT_FALSE(out.error) << "expected a clean run: " << format(*out.error);
  return out;
}

#define EXPECT_ERROR(...) [&] { SCOPED_TRACE("EXPECT_ERROR"); return expect_error_impl(__VA_ARGS__); }()
#define EXPECT_CLEAN(...) [&] { SCOPED_TRACE("EXPECT_CLEAN"); return expect_clean_impl(__VA_ARGS__); }()

scenario::RunOptions target(const char* t) {
  scenario::RunOptions o;
  o.target = spec::parse_target(t);
  return o;
}

// ---- cp.async.bulk (§7, §13 items 1-2) ----

TEST(BulkDiagnostics, SizeNotAMultipleOf16) {
  EXPECT_ERROR(prog({kInit, arm(100), load("s0", "ga", "100"), kWait}), "bulk.size-align", "program[2] (cta 0)",
               {"size 100", "multiple of 16"});
  EXPECT_CLEAN(prog({kInit, arm(112), load("s0", "ga", "112"), kWait}));
}

TEST(BulkDiagnostics, SizeNotAU32) {
  json s = prog({kInit, arm(16), load("s0", "ga", "neg"), kWait});
  s["symbols"]["neg"] = -16;
  EXPECT_ERROR(s, "bulk.size-range", "program[2] (cta 0)", {"-16"});
  s["symbols"]["neg"] = 16;
  EXPECT_CLEAN(s);
}

TEST(BulkDiagnostics, MisalignedAddresses) {
  EXPECT_ERROR(prog({kInit, arm(64), load("s0", "ga+8", "64"), kWait}), "bulk.address-align", "program[2] (cta 0)",
               {"srcMem", "8 is not 16-byte aligned"});
  EXPECT_ERROR(prog({kInit, arm(64), load("s0+8", "ga", "64"), kWait}), "bulk.address-align", "program[2] (cta 0)",
               {"dstMem 0x8 "});
  EXPECT_ERROR(prog({store("gb+4", "s0", "64")}), "bulk.address-align", "program[0] (cta 0)", {"dstMem", "4 is not"});
  EXPECT_CLEAN(prog({kInit, arm(64), load("s0+16", "ga+16", "64"), kWait}));
  EXPECT_CLEAN(prog({store("gb+16", "s0", "64"), kCommit, kWaitGroup0}));
}

TEST(BulkDiagnostics, GlobalRangeOutsideTheAllocation) {
  // A is 8192 bytes: [7168, 8192) is its last KiB, [7680, 8704) runs past its end.
  EXPECT_ERROR(prog({kInit, arm(1024), load("s0", "ga+7680", "1024"), kWait}), "bulk.global-range",
               "program[2] (cta 0)", {"srcMem range", "outside every global allocation"});
  EXPECT_ERROR(prog({store("gb+8176", "s0", "32")}), "bulk.global-range", "program[0] (cta 0)", {"dstMem range"});
  EXPECT_CLEAN(prog({kInit, arm(1024), load("s0", "ga+7168", "1024"), kWait}));
  EXPECT_CLEAN(prog({store("gb+8176", "s0", "16"), kCommit, kWaitGroup0}));
}

TEST(BulkDiagnostics, SharedRangeOutsideSharedMemory) {
  // shared_bytes = 16384: [15872, 16896) overflows it, [15360, 16384) is its last KiB.
  json s = prog({"mbarrier.init.shared::cta.b64 [mbar], 1;", arm(1024), load("top", "ga", "1024"), kWait});
  s["symbols"]["top"] = "shared:15872";
  EXPECT_ERROR(s, "model.shared-range", "program[2] (cta 0)", {"[15872, 16896)", "16384 bytes"});
  s["symbols"]["top"] = "shared:15360";
  EXPECT_CLEAN(s);
  // An operand that is not in shared memory at all.
  s["symbols"]["top"] = "shared:16384";
  EXPECT_ERROR(s, "model.shared-range", "program[2] (cta 0)", {"shared:16384", "16384 bytes"});
}

TEST(BulkDiagnostics, SharedCtaOperandNamingAnotherCta) {
  // §13 item 2: a .shared::cta destination must be the executing CTA's memory.
  EXPECT_ERROR(prog({kInit, arm(1024), load("peer", "ga", "1024"), kWait}, 2), "model.shared-cta-remote",
               "program[2] (cta 0)", {"dstMem", "CTA 1", "executing CTA is 0"});
  // shared@0 from CTA 0 is its own memory: fine.
  EXPECT_CLEAN(prog({kInit, arm(1024), load("self", "ga", "1024"), kWait}, 2));
}

TEST(BulkDiagnostics, SharedCtaToClusterCopyToSelf) {
  const std::string copy_self =
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [self], [s0], 1024, [selfMbar];";
  EXPECT_ERROR(prog({kInit, arm(1024), copy_self, kWait}, 2), "bulk.remote-self", "program[2] (cta 0)",
               {"another CTA", "executing CTA 0"});
  // To CTA 1, whose own barrier tracks it (§7: barrier in the destination CTA).
  json s = prog({on(1, kInit), on(1, arm(1024)),
                 "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [peer], [s0], 1024, [peerMbar];",
                 on(1, kWait)},
                2);
  s["shared_init"] = {{{"cta", 0}, {"offset", 0}, {"bytes", 1024}, {"init", {{"random", 9}}}}};
  s["outputs"] = {{{"name", "src"}, {"shared", {{"cta", 0}, {"offset", 0}, {"bytes", 1024}}}},
                  {{"name", "dst"}, {"shared", {{"cta", 1}, {"offset", 4096}, {"bytes", 1024}}}}};
  Outcome o = EXPECT_CLEAN(s);
  EXPECT_EQ(output(o, "src"), output(o, "dst"));
}

TEST(BulkDiagnostics, BarrierNotInTheDestinationCta) {
  EXPECT_ERROR(prog({on(1, kInit),
                     "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [peer], [s0], 1024, [selfMbar];"},
                    2),
               "bulk.mbar-cta", "program[1] (cta 0)", {"mbar is in CTA 0", "destination is CTA 1"});
}

TEST(BulkDiagnostics, PrefetchAlignment) {
  EXPECT_ERROR(prog({"cp.async.bulk.prefetch.L2.global [ga], 100;"}), "bulk.align", "program[0] (cta 0)", {"size 100"});
  EXPECT_CLEAN(prog({"cp.async.bulk.prefetch.L2.global [ga], 112;"}));
}

TEST(BulkDiagnostics, WaitGroupNegative) {
  EXPECT_ERROR(prog({"cp.async.bulk.wait_group -1;"}), "bulk.wait-group", "program[0] (cta 0)", {"-1"});
  EXPECT_CLEAN(prog({"cp.async.bulk.wait_group 0;"}));
}

// ---- multicast (§10.1, §13 item 9) ----

const std::string kMulticast =
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s4k], [ga], 1024, [mbar], mask;";

// CTAs in `ready` (a mask) initialise, arm for 1024 bytes and wait; CTA 0 issues the
// multicast at program[2 * popcount(ready)].
json multicast(int ctas, const std::string& mask, unsigned ready) {
  std::vector<json> p;
  for (int c = 0; c < ctas; ++c)
    if (ready >> c & 1) {
      p.push_back(on(c, kInit));
      p.push_back(on(c, arm(1024)));
    }
  p.push_back(kMulticast);
  for (int c = 0; c < ctas; ++c)
    if (ready >> c & 1) p.push_back(on(c, kWait));
  json s = prog(p, ctas);
  s["symbols"]["mask"] = mask;
  return s;
}

TEST(MulticastDiagnostics, EmptyMask) {
  EXPECT_ERROR(multicast(2, "0x0", 3), "multicast.mask-empty", "program[4] (cta 0)", {"ctaMask 0x0", "selects no CTA"});
  EXPECT_CLEAN(multicast(2, "0x3", 3));
}

TEST(MulticastDiagnostics, MaskBeyondTheCluster) {
  EXPECT_ERROR(multicast(2, "0x5", 3), "multicast.mask-range", "program[4] (cta 0)", {"0x5", "CTA 2", "cluster of 2"});
  EXPECT_CLEAN(multicast(2, "0x2", 2));  // the issuer need not be in the mask (H16)
}

TEST(MulticastDiagnostics, BarrierMissingInADestination) {
  EXPECT_ERROR(multicast(2, "0x3", 1), "multicast.barrier-missing", "program[2] (cta 0)",
               {"shared offset 8192", "destination CTA 1"});
  EXPECT_CLEAN(multicast(2, "0x3", 3));
}

TEST(MulticastDiagnostics, TensorMulticastChecksTheSame) {
  auto t = [](const std::string& mask, unsigned ready) {
    json s = multicast(2, mask, ready);
    for (auto& step : s["program"])
      if (step.is_string() && step.get<std::string>() == kMulticast)
        step = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.tile "
               "[s4k], [tmapF, {0, 0}], [mbar], mask;";
    return s;
  };
  EXPECT_ERROR(t("0", 3), "multicast.mask-empty", "program[4] (cta 0)", {"selects no CTA"});
  EXPECT_ERROR(t("0x4", 3), "multicast.mask-range", "program[4] (cta 0)", {"CTA 2"});
  EXPECT_ERROR(t("0x3", 1), "multicast.barrier-missing", "program[2] (cta 0)", {"destination CTA 1"});
  EXPECT_CLEAN(t("0x3", 3));
  EXPECT_CLEAN(t("0x2", 2));
}

// ---- tensor copies (§2.1, §3.2, §6.1, [H]) ----

TEST(TensorDiagnostics, SharedOperandNot128Aligned) {
  // H15: 16..64-byte aligned operands fault; 128 is the minimum.
  json s = prog({kInit, arm(1024), tload("tmapF", "0", "0", "odd"), kWait});
  for (int off : {16, 64}) {
    s["symbols"]["odd"] = "shared:" + std::to_string(off);
    EXPECT_ERROR(s, "tensor.smem-align", "program[2] (cta 0)",
                 {"shared offset " + std::to_string(off), "128-byte aligned"});
  }
  s["symbols"]["odd"] = "shared:128";
  EXPECT_CLEAN(s);
  json st = prog({tstore("tmapF", "0", "0", "odd"), kCommit, kWaitGroup0});
  st["symbols"]["odd"] = "shared:64";
  EXPECT_ERROR(st, "tensor.smem-align", "program[0] (cta 0)", {"srcMem", "shared offset 64"});
  st["symbols"]["odd"] = "shared:128";
  EXPECT_CLEAN(st);
}

TEST(TensorDiagnostics, InnermostCoordinateTimesElementSize) {
  // §2.1 item 6, H9: c[0] x elemBytes must be a multiple of 16 (negative allowed).
  EXPECT_ERROR(prog({kInit, arm(256), tload("tmapU8", "8", "0"), kWait}), "coord.inner-align", "program[2] (cta 0)",
               {"8 × 1 bytes = 8 bytes"});
  EXPECT_ERROR(prog({kInit, arm(1024), tload("tmapF", "2", "0"), kWait}), "coord.inner-align", "program[2] (cta 0)",
               {"2 × 4 bytes = 8 bytes"});
  EXPECT_ERROR(prog({tstore("tmapF", "6", "0")}), "coord.inner-align", "program[0] (cta 0)", {"24 bytes"});
  EXPECT_CLEAN(prog({kInit, arm(256), tload("tmapU8", "16", "0"), kWait}));
  EXPECT_CLEAN(prog({kInit, arm(256), tload("tmapU8", "-16", "0"), kWait}));
  EXPECT_CLEAN(prog({kInit, arm(1024), tload("tmapF", "4", "0"), kWait}));
}

TEST(TensorDiagnostics, NegativeStoreAndReduceCoordinates) {
  // H14: stores and reductions must start at non-negative coordinates; loads may not.
  EXPECT_ERROR(prog({tstore("tmapF", "0", "-8")}), "coord.store-negative", "program[0] (cta 0)", {"coords[1] = -8"});
  EXPECT_ERROR(prog({treduce("add", "tmapF", "-16", "0")}), "coord.store-negative", "program[0] (cta 0)",
               {"coords[0] = -16"});
  EXPECT_CLEAN(prog({tstore("tmapF", "0", "0"), kCommit, kWaitGroup0}));
  EXPECT_CLEAN(prog({kInit, arm(1024), tload("tmapF", "-16", "-8"), kWait}));
}

TEST(TensorDiagnostics, DimensionMustMatchTheMapRank) {
  EXPECT_ERROR(prog({kInit, arm(1024),
                     "cp.async.bulk.tensor.3d.shared::cta.global.mbarrier::complete_tx::bytes.tile [s0], "
                     "[tmapF, {0, 0, 0}], [mbar];"}),
               "tensor.dim-rank", "program[2] (cta 0)", {".3d", "rank 2", "tmapF"});
  EXPECT_CLEAN(prog({kInit, arm(1024), tload("tmapF", "0", "0"), kWait}));
}

TEST(TensorDiagnostics, LoadModeNeedsTheMatchingMapKind) {
  EXPECT_ERROR(prog({kInit, arm(1024),
                     "cp.async.bulk.tensor.3d.shared::cta.global.mbarrier::complete_tx::bytes.tile [s0], "
                     "[tmapIm, {0, 0, 0}], [mbar];"}),
               "tensor.map-kind", "program[2] (cta 0)", {".tile needs a tiled map", "tmapIm", "im2col"});
}

TEST(TensorDiagnostics, UnknownMap) {
  EXPECT_ERROR(prog({kInit, arm(1024), tload("tmapNope", "0", "0"), kWait}), "tensor.unknown-map", "program[2] (cta 0)",
               {"tmapNope"});
}

TEST(TensorDiagnostics, CoordinateNotAnS32) {
  json s = prog({kInit, arm(1024), tload("tmapF", "0", "huge"), kWait});
  s["symbols"]["huge"] = 2147483648LL;
  EXPECT_ERROR(s, "tensor.coord-range", "program[2] (cta 0)", {"tensorCoords[1] = 2147483648"});
  s["symbols"]["huge"] = 2147483647LL;  // in range (wholly out of bounds: zero fill)
  EXPECT_CLEAN(s);
}

TEST(TensorDiagnostics, BarrierNotInTheDestinationCta) {
  EXPECT_ERROR(prog({kInit,
                     "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.tile [peer], "
                     "[tmapF, {0, 0}], [selfMbar];"},
                    2),
               "tensor.mbar-cta", "program[1] (cta 0)", {"mbar is in CTA 0", "dstMem in CTA 1"});
}

TEST(TensorDiagnostics, ReductionOpMustSuitTheMapType) {
  // §6.1: .inc/.dec are u32 only, bitwise ops need an integer map.
  EXPECT_ERROR(prog({treduce("inc", "tmapF", "0", "0")}), "tensor.reduce-type", "program[0] (cta 0)",
               {".inc", "float32"});
  EXPECT_ERROR(prog({treduce("and", "tmapF", "0", "0")}), "tensor.reduce-type", "program[0] (cta 0)", {".and"});
  EXPECT_CLEAN(prog({treduce("add", "tmapF", "0", "0"), kCommit, kWaitGroup0}));
}

TEST(TensorDiagnostics, Int64BitwiseReductionOnSm90) {
  // H7: .and/.or/.xor on an INT64 map fault on sm_90; UINT64 and other ops work.
  for (const char* op : {"and", "or", "xor"})
    EXPECT_ERROR(prog({treduce(op, "tmapI64", "0", "0")}), "tensor.reduce-int64-bitwise", "program[0] (cta 0)",
                 {std::string(".") + op, "int64", "illegal instruction"});
  EXPECT_CLEAN(prog({treduce("and", "tmapU64", "0", "0"), kCommit, kWaitGroup0}));
  EXPECT_CLEAN(prog({treduce("min", "tmapI64", "0", "0"), kCommit, kWaitGroup0}));
  EXPECT_CLEAN(prog({treduce("and", "tmapI64", "0", "0"), kCommit, kWaitGroup0}), target("sm_100a"));
}

TEST(TensorDiagnostics, InBoundElementInNoAllocation) {
  // tmapBig claims 16 KiB of uint8 tensor over the 8 KiB allocation A: row 200 lies past A.
  EXPECT_ERROR(prog({kInit, arm(256), tload("tmapBig", "0", "200"), kWait}), "model.global-fault", "program[2] (cta 0)",
               {"in-bound element (0, 200)", "not inside any allocation"});
  EXPECT_CLEAN(prog({kInit, arm(256), tload("tmapBig", "0", "120"), kWait}));  // rows 120..127 are in A
}

TEST(TensorDiagnostics, MapTheDriverRefuses) {
  // A map error is a program error naming the map (exit 1 in the CLI).
  json s = prog({});
  s["tensor_maps"]["tmapF"]["swizzle"] = "64b";  // a 128-byte inner box row exceeds the 64-byte span (§1.3)
  Outcome o = run(s);
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.error->rule.rfind("map.", 0), 0u) << format(*o.error);
  EXPECT_EQ(o.error->where.rfind("tensor_maps.tmapF", 0), 0u) << format(*o.error);
  EXPECT_NE(o.error->message.find("128"), std::string::npos) << format(*o.error);
}

// ---- target and PTX version (§11) ----

TEST(TargetDiagnostics, FormMissingOnTheTarget) {
  const std::string gather4 =
      "cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes [s0], "
      "[tmapF, {0, 0, 1, 2, 3}], [mbar];";
  EXPECT_ERROR(prog({kInit, gather4}), "ptx.target", "program[1] (cta 0)", {".tile::gather4", "sm_100", "sm_90a"});
  const std::string cp_mask = "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [gb], [s0], 32, 0x00ff;";
  EXPECT_ERROR(prog({cp_mask}), "ptx.target", "program[0] (cta 0)", {".cp_mask", "sm_90a"});
  // On sm_100a .cp_mask runs: bit i of byteMask enables byte i of every 16-byte chunk (§7).
  json s = prog({cp_mask, kCommit, kWaitGroup0});
  s["shared_init"] = {{{"cta", 0}, {"offset", 0}, {"bytes", 32}, {"init", {{"byte", 0x5a}}}}};
  s["outputs"] = {{{"name", "B"}, {"global", {{"name", "B"}, {"offset", 0}, {"bytes", 32}}}}};
  Outcome o = EXPECT_CLEAN(s, target("sm_100a"));
  std::vector<uint8_t> want(32, 0);
  for (int i = 0; i < 32; ++i)
    if (i % 16 < 8) want[i] = 0x5a;
  EXPECT_EQ(output(o, "B"), want);
}

TEST(TargetDiagnostics, PtxVersionTooOld) {
  // .shared::cta destinations of cp.async.bulk arrived in PTX ISA 8.6 (§7).
  json s = prog({kInit, arm(1024), load("s0", "ga", "1024"), kWait});
  s["ptx_version"] = "8.5";
  EXPECT_ERROR(s, "ptx.ptx-version", "program[2] (cta 0)", {"needs PTX ISA 8.6", "8.5"});
  s["ptx_version"] = "8.6";
  EXPECT_CLEAN(s);
  s["ptx_version"] = "7.8";  // sm_90a itself needs PTX ISA 8.0
  EXPECT_ERROR(s, "ptx.target-version", "program[0] (cta 0)", {"sm_90a", "8.0", "7.8"});
}

TEST(TargetDiagnostics, ParseErrorsNameTheStep) {
  EXPECT_ERROR(prog({kInit, "tma.frobnicate [s0];"}), "ptx.unknown-instruction", "program[1] (cta 0)", {});
  EXPECT_ERROR(prog({kInit, "mbarrier.init.shared::cta.b64 [mbar];"}), "ptx.operand-count", "program[1] (cta 0)", {});
}

// ---- operands (engine.cpp) ----

TEST(OperandDiagnostics, UnknownSymbol) {
  EXPECT_ERROR(prog({kInit, arm(1024), load("s0", "nowhere", "1024"), kWait}), "model.unknown-symbol",
               "program[2] (cta 0)", {"`nowhere`"});
}

TEST(OperandDiagnostics, WrongKindOfValue) {
  EXPECT_ERROR(prog({kInit, arm(1024), load("s0", "ga", "s1k"), kWait}), "model.operand", "program[2] (cta 0)",
               {"size must be an integer", "shared:1024"});
  EXPECT_ERROR(prog({"mbarrier.init.shared::cta.b64 [tmapF], 1;"}), "model.operand", "program[0] (cta 0)",
               {"tensor map `tmapF`"});
}

TEST(OperandDiagnostics, WrongAddressSpace) {
  EXPECT_ERROR(prog({kInit, arm(1024), load("s0", "s1k", "1024"), kWait}), "model.address-space", "program[2] (cta 0)",
               {"srcMem must be a global address", "shared:1024"});
  EXPECT_ERROR(prog({kInit, arm(1024), load("gb", "ga", "1024"), kWait}), "model.address-space", "program[2] (cta 0)",
               {"dstMem must be a shared address"});
}

TEST(OperandDiagnostics, OrdinaryStores) {
  EXPECT_ERROR(prog({"st.shared::cta.b32 [s0+2], 1;"}), "model.store-align", "program[0] (cta 0)",
               {"4 bytes", "unaligned address 2"});
  EXPECT_ERROR(prog({"st.global.b64 [gb+8192], 1;"}), "model.global-fault", "program[0] (cta 0)",
               {"outside every global allocation"});
  EXPECT_CLEAN(prog({"st.shared::cta.b32 [s0+4], 1;", "st.global.b64 [gb+8184], 1;"}));
}

TEST(OperandDiagnostics, StepOfACtaOutsideTheCluster) {
  // The loader refuses such a step; the engine checks it again for direct users.
  json s = prog({on(1, kInit)}, 1);
  try {
    scenario::from_json(json::parse(s.dump()), ".");
    ADD_FAILURE() << "a step of CTA 1 in a cluster of 1 was accepted";
  } catch (const scenario::InputError& e) {
    EXPECT_EQ(e.diagnostic().where, "scenario.program[0].cta");
  }
  model::Engine engine({});
  Diagnostics d;
  auto inst = ptx::parse_instruction(kInit, d, "x");
  ASSERT_TRUE(inst);
  engine.set_symbol("mbar", {model::Value::Kind::shared, 64});
  try {
    engine.step(*inst, 1, 0, "program[0] (cta 1)");
    ADD_FAILURE() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().rule, "model.cta");
    EXPECT_EQ(e.diagnostic().where, "program[0] (cta 1)");
    EXPECT_NE(e.diagnostic().message.find("CTA 1 of a cluster of 1"), std::string::npos);
  }
  EXPECT_NO_THROW(engine.step(*inst, 0, 0, "program[0] (cta 0)"));
}

TEST(OperandDiagnostics, ClusterAddressOfARankOutsideTheCluster) {
  // The scenario's symbols cannot name such a rank (scenario.symbol); engine users can.
  json s = prog({}, 2);
  s["symbols"]["far"] = "shared@2:8192";
  Outcome o = run(s);
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.error->rule, "scenario.symbol");
  EXPECT_EQ(o.error->where, "scenario.symbols.far");

  model::EngineConfig cfg;
  cfg.ctas = 2;
  model::Engine engine(cfg);
  Diagnostics d;
  auto arrive = ptx::parse_instruction("mbarrier.arrive.shared::cluster.b64 _, [far];", d, "x");
  auto init = ptx::parse_instruction(kInit, d, "x");
  ASSERT_TRUE(arrive && init) << (d.empty() ? "" : format(d.front()));
  engine.set_symbol("mbar", {model::Value::Kind::shared, 64});
  engine.set_symbol("far", {model::Value::Kind::cluster, 64, 5});
  try {
    engine.step(*arrive, 0, 0, "program[1] (cta 0)");
    ADD_FAILURE() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().rule, "model.cluster-rank");
    EXPECT_EQ(e.diagnostic().where, "program[1] (cta 0)");
    EXPECT_NE(e.diagnostic().message.find("CTA 5 of a cluster of 2"), std::string::npos);
  }
  engine.step(*init, 1, 0, "program[0] (cta 1)");
  engine.set_symbol("far", {model::Value::Kind::cluster, 64, 1});
  EXPECT_NO_THROW(engine.step(*arrive, 0, 0, "program[1] (cta 0)"));
  EXPECT_NO_THROW(engine.finish());
}

// ---- mbarrier (§8.1, §8.2, §8.6) ----

// A barrier in use (an arrival, a transaction, a completed phase since its init) may not be
// initialised again without an inval; one untouched since its init may (Triton 3.6's
// warp-specialised kernels do, with right results on the H100: CheckRecorded replays the trace).
TEST(MbarrierDiagnostics, InitTwice) {
  const std::string arrive = "mbarrier.arrive.shared::cta.b64 _, [mbar];";
  EXPECT_ERROR(prog({kInit, arrive, kInit}), "mbarrier.init-valid", "program[2] (cta 0)",
               {"shared offset 8192", "in use since its last init"});
  EXPECT_ERROR(prog({kInit, "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [mbar], 16;", kInit}), "mbarrier.init-valid",
               "program[2] (cta 0)", {"transaction count 16"});
  EXPECT_CLEAN(prog({kInit, kInit}));
  EXPECT_CLEAN(prog({kInit, "mbarrier.inval.shared::cta.b64 [mbar];", kInit}));
  EXPECT_CLEAN(prog({kInit, arrive, "mbarrier.inval.shared::cta.b64 [mbar];", kInit}));
}

TEST(MbarrierDiagnostics, CountRange) {
  // §8.1: expected arrivals 1 .. 2^20 - 1.
  EXPECT_ERROR(prog({"mbarrier.init.shared::cta.b64 [mbar], 0;"}), "mbarrier.count-range", "program[0] (cta 0)",
               {"count 0", "1..1048575"});
  EXPECT_ERROR(prog({"mbarrier.init.shared::cta.b64 [mbar], 1048576;"}), "mbarrier.count-range", "program[0] (cta 0)",
               {"1048576"});
  EXPECT_CLEAN(prog({"mbarrier.init.shared::cta.b64 [mbar], 1048575;"}));
  EXPECT_ERROR(prog({"mbarrier.init.shared::cta.b64 [mbar], 2;", "mbarrier.arrive.shared::cta.b64 _, [mbar], 0;"}),
               "mbarrier.count-range", "program[1] (cta 0)", {"arrive count 0"});
  json neg = prog({"mbarrier.init.shared::cta.b64 [mbar], neg;"});
  neg["symbols"]["neg"] = -1;
  EXPECT_ERROR(neg, "mbarrier.operand-range", "program[0] (cta 0)", {"count -1 is not a u32"});
}

TEST(MbarrierDiagnostics, ArriveUnderflow) {
  EXPECT_ERROR(prog({"mbarrier.init.shared::cta.b64 [mbar], 1;", "mbarrier.arrive.shared::cta.b64 _, [mbar], 2;"}),
               "mbarrier.arrive-underflow", "program[1] (cta 0)", {"arrive count 2", "1 pending arrivals of phase 0"});
  EXPECT_ERROR(prog({"mbarrier.init.shared::cta.b64 [mbar], 1;", "mbarrier.arrive_drop.shared::cta.b64 _, [mbar], 2;"}),
               "mbarrier.arrive-underflow", "program[1] (cta 0)", {"arrive_drop count 2", "1 expected"});
  EXPECT_CLEAN(prog({"mbarrier.init.shared::cta.b64 [mbar], 2;", "mbarrier.arrive.shared::cta.b64 _, [mbar], 2;", kWait}));
}

TEST(MbarrierDiagnostics, NoCompleteMustNotComplete) {
  EXPECT_ERROR(prog({kInit, "mbarrier.arrive.noComplete.shared::cta.b64 st, [mbar], 1;"}),
               "mbarrier.nocomplete-completes", "program[1] (cta 0)", {"phase 0"});
  // With a second expected arrival, or transactions still pending, it does not complete.
  EXPECT_CLEAN(prog({"mbarrier.init.shared::cta.b64 [mbar], 2;", "mbarrier.arrive.noComplete.shared::cta.b64 st, [mbar], 1;",
                     "mbarrier.arrive.shared::cta.b64 _, [mbar];", kWait}));
  EXPECT_CLEAN(prog({kInit, "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [mbar], 16;",
                     "mbarrier.arrive.noComplete.shared::cta.b64 st, [mbar], 1;",
                     "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [mbar], 16;", kWait}));
}

TEST(MbarrierDiagnostics, StaleToken) {
  // §8.4: a state token is good for its phase and the next one only.
  const std::string arrive_tok = "mbarrier.arrive.shared::cta.b64 tok, [mbar];";
  const std::string arrive = "mbarrier.arrive.shared::cta.b64 _, [mbar];";
  const std::string wait_tok = "mbarrier.test_wait.shared::cta.b64 p, [mbar], tok;";
  EXPECT_ERROR(prog({kInit, arrive_tok, arrive, wait_tok}), "mbarrier.stale-token", "program[3] (cta 0)",
               {"shared offset 8192", "phase 0", "2"});
  json ok = prog({kInit, arrive_tok, wait_tok});
  Outcome o = EXPECT_CLEAN(ok);
  (void)o;
}

TEST(MbarrierDiagnostics, ParityOperand) {
  EXPECT_ERROR(prog({kInit, "mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 2;"}), "mbarrier.parity",
               "program[1] (cta 0)", {"got 2"});
  EXPECT_CLEAN(prog({kInit, "mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 1;"}));
  // All ones in 32 bits: a widened boolean true, parity 1 (Triton 3.6 waits with it on the H100).
  EXPECT_CLEAN(prog({kInit, "mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 4294967295;"}));
  EXPECT_ERROR(prog({kInit, "mbarrier.test_wait.parity.shared::cta.b64 p, [mbar], 4294967294;"}), "mbarrier.parity",
               "program[1] (cta 0)", {"got 4294967294"});
}

TEST(MbarrierDiagnostics, UseAfterInval) {
  const std::string inval = "mbarrier.inval.shared::cta.b64 [mbar];";
  EXPECT_ERROR(prog({kInit, inval, "mbarrier.arrive.shared::cta.b64 _, [mbar];"}), "mbarrier.invalid",
               "program[2] (cta 0)", {"shared offset 8192", "no initialised barrier"});
  EXPECT_ERROR(prog({kInit, inval, kWait}), "mbarrier.invalid", "program[2] (cta 0)", {"shared offset 8192"});
  EXPECT_ERROR(prog({kInit, inval, inval}), "mbarrier.invalid", "program[2] (cta 0)", {"mbarrier.inval"});
  EXPECT_ERROR(prog({arm(1024)}), "mbarrier.invalid", "program[0] (cta 0)", {"expect-tx"});
  // A copy completing on a barrier that is no longer valid: found when the copy completes.
  EXPECT_ERROR(prog({kInit, load("s0", "ga", "1024"), inval}), "mbarrier.invalid", "program[1] (cta 0)",
               {"completes on the mbarrier at offset 8192"});
  EXPECT_ERROR(prog({load("s0", "ga", "1024")}), "mbarrier.invalid", "program[0] (cta 0)", {"destination CTA 0"});
}

TEST(MbarrierDiagnostics, Misaligned) {
  json s = prog({"mbarrier.init.shared::cta.b64 [m4], 1;"});
  s["symbols"]["m4"] = "shared:8196";
  EXPECT_ERROR(s, "mbarrier.align", "program[0] (cta 0)", {"8196", "8-byte aligned"});
  s["symbols"]["m4"] = "shared:8200";
  EXPECT_CLEAN(s);
}

// A barrier in use may not be overwritten; an untouched one's memory is taken back, and a later
// use of it finds no barrier there (Triton 3.6's warp-specialised kernels reuse such memory).
TEST(MbarrierDiagnostics, OverwrittenByACopyOrAStore) {
  const std::string arrive = "mbarrier.arrive.shared::cta.b64 _, [mbar];";
  json two = prog({"mbarrier.init.shared::cta.b64 [mbar], 2;", arrive, "st.shared::cta.b32 [mbar+4], 0;"});
  EXPECT_ERROR(two, "mbarrier.overwritten", "program[2] (cta 0)",
               {"[8196, 8200)", "live mbarrier at offset 8192", "1 of 2 arrivals pending"});
  EXPECT_CLEAN(prog({kInit, "st.shared::cta.b32 [mbar+4], 0;"}));
  EXPECT_ERROR(prog({kInit, "st.shared::cta.b32 [mbar+4], 0;", arrive}), "mbarrier.invalid", "program[2] (cta 0)",
               {"no initialised barrier"});
  // A 1 KiB load into [7680, 8704) covers the barrier at 8192.
  json s = prog({kInit, arm(1024), load("low", "ga", "1024"), kWait});
  s["symbols"]["low"] = "shared:7680";
  EXPECT_ERROR(s, "mbarrier.overwritten", "program[2] (cta 0)", {"[7680, 8704)", "offset 8192"});
  s["symbols"]["low"] = "shared:7168";  // [7168, 8192): just below it
  EXPECT_CLEAN(s);
  EXPECT_CLEAN(prog({kInit, "mbarrier.inval.shared::cta.b64 [mbar];", "st.shared::cta.b32 [mbar+4], 0;"}));
}

TEST(MbarrierDiagnostics, TxCountRange) {
  // §8.1: tx-count within ±(2^20 - 1); txCount itself a u32.
  const std::string expect = "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [mbar], ";
  const std::string complete = "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [mbar], ";
  EXPECT_ERROR(prog({kInit, expect + "1048576;"}), "mbarrier.tx-range", "program[1] (cta 0)", {"1048576", "±1048575"});
  EXPECT_ERROR(prog({kInit, complete + "1048576;"}), "mbarrier.tx-range", "program[1] (cta 0)", {"-1048576"});
  EXPECT_ERROR(prog({kInit, expect + "4294967296;"}), "mbarrier.operand-range", "program[1] (cta 0)",
               {"txCount 4294967296 is not a u32"});
  EXPECT_CLEAN(prog({kInit, expect + "1048575;", complete + "1048575;", "mbarrier.arrive.shared::cta.b64 _, [mbar];", kWait}));
  // Delivered by a copy, far past the armed count: raised where the copy completes.
  json s = prog({kInit, arm(16), "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [mbar], 1048000;",
                 load("s0", "ga", "8192")});
  EXPECT_ERROR(s, "mbarrier.tx-range", "program[3] (cta 0)", {"shared offset 8192", "-1056176"});
}

// ---- deadlocks and byte counts (§2.3, §8.6) ----

TEST(Deadlock, ReportNamesBarrierPhasePendingAndOperations) {
  // Initialised for 2 arrivals, only one arrives.
  Diagnostic d = EXPECT_ERROR(prog({"mbarrier.init.shared::cta.b64 [mbar], 2;", arm(1024), load("s0", "ga", "1024"), kWait}),
                              "model.deadlock", "program[3] (cta 0)",
                              {"shared offset 8192 of CTA 0", "phase 0", "1 of 2 arrivals pending", "transaction count 0",
                               "armed 1024 bytes, delivered 1024", "program[1] (cta 0)",
                               "program[2] (cta 0) cp.async.bulk"});
  EXPECT_CLEAN(prog({"mbarrier.init.shared::cta.b64 [mbar], 2;", arm(1024), load("s0", "ga", "1024"),
                     "mbarrier.arrive.shared::cta.b64 _, [mbar];", kWait}));
}

TEST(Deadlock, WaitOnAPhaseNobodyFeeds) {
  EXPECT_ERROR(prog({kInit, kWait, "st.shared::cta.b32 [s0], 1;"}), "model.deadlock", "program[1] (cta 0)",
               {"1 of 1 arrivals pending", "none", "1 later steps of CTA 0 never ran"});
}

TEST(Deadlock, ParityOfThePhaseAlreadyCurrent) {
  // After one completed phase (parity 0 done), waiting on parity 1 waits for phase 1.
  EXPECT_ERROR(prog({kInit, "mbarrier.arrive.shared::cta.b64 _, [mbar];", kWait,
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [mbar], 1;"}),
               "model.deadlock", "program[3] (cta 0)", {"phase 1 (parity 1)"});
}

TEST(ByteCount, UnderDeliveryIsADeadlockNamingArmedAndDelivered) {
  Diagnostic d = EXPECT_ERROR(prog({kInit, arm(2048), load("s0", "ga", "1024"), kWait}), "model.deadlock",
                              "program[3] (cta 0)",
                              {"0 of 1 arrivals pending", "transaction count 1024", "armed 2048 bytes, delivered 1024",
                               "1024 armed bytes were never delivered", "program[2] (cta 0) cp.async.bulk"});
  // Without a wait it is still reported, at the end.
  EXPECT_ERROR(prog({kInit, arm(2048), load("s0", "ga", "1024")}), "model.tx-mismatch", "end of program",
               {"transaction count 1024", "armed 2048 bytes, delivered 1024", "never all delivered"});
}

TEST(ByteCount, OverDeliveryIsReportedAtTheEnd) {
  EXPECT_ERROR(prog({kInit, arm(512), load("s0", "ga", "1024")}), "model.tx-mismatch", "end of program",
               {"shared offset 8192 of CTA 0", "transaction count -512", "armed 512 bytes, delivered 1024",
                "program[2] (cta 0) cp.async.bulk"});
  // A copy that nobody armed for, after the phase completed.
  EXPECT_ERROR(prog({kInit, arm(1024), load("s0", "ga", "1024"), kWait, load("s1k", "ga", "1024")}),
               "model.tx-mismatch", "end of program", {"transaction count -1024", "after its phase had completed"});
  // With a wait, over-delivery leaves tx < 0 and the phase never completes.
  EXPECT_ERROR(prog({kInit, arm(512), load("s0", "ga", "1024"), kWait}), "model.deadlock", "program[3] (cta 0)",
               {"512 bytes more were delivered than armed"});
  EXPECT_CLEAN(prog({kInit, arm(1024), load("s0", "ga", "1024"), kWait}));
}

// ---- ordering against operations in flight (§9, §13 item 8) ----

TEST(InFlight, StoreIntoABufferALoadStillWrites) {
  EXPECT_ERROR(prog({kInit, arm(1024), load("s0", "ga", "1024"), "st.shared::cta.b32 [s0+16], 7;", kWait}),
               "model.use-before-completion", "program[3] (cta 0)",
               {"bytes [16, 20)", "program[2] (cta 0) cp.async.bulk"});
  json s = prog({kInit, arm(1024), load("s0", "ga", "1024"), kWait, "st.shared::cta.b32 [s0+16], 7;"});
  s["outputs"] = {{{"name", "w"}, {"shared", {{"offset", 16}, {"bytes", 4}}}}};
  Outcome o = EXPECT_CLEAN(s);
  EXPECT_EQ(output(o, "w"), (std::vector<uint8_t>{7, 0, 0, 0}));
}

TEST(InFlight, SecondLoadIntoTheSameBuffer) {
  EXPECT_ERROR(prog({kInit, arm(2048), load("s0", "ga", "1024"), load("s0+512", "ga+1024", "1024"), kWait}),
               "model.in-flight-overlap", "program[3] (cta 0)",
               {"shared bytes [512, 1536) of CTA 0", "program[2] (cta 0) cp.async.bulk", "still writing"});
  EXPECT_CLEAN(prog({kInit, arm(2048), load("s0", "ga", "1024"), load("s1k", "ga+1024", "1024"), kWait}));
}

// Reductions update elements atomically (§6.3): two in flight over the same box are fine
// (the H100 summed them, hardware-notes.md §14 Q18); a store with a reduction is not.
TEST(InFlight, ReductionsMayOverlapReductionsOnly) {
  EXPECT_CLEAN(prog({"fence.proxy.async.shared::cta;", treduce("add", "tmapF", "0", "0"), treduce("add", "tmapF", "0", "0"),
                     kCommit, kWaitGroup0}));
  EXPECT_ERROR(prog({"fence.proxy.async.shared::cta;", tstore("tmapF", "0", "0"), treduce("add", "tmapF", "0", "0")}),
               "model.in-flight-overlap", "program[2] (cta 0)", {"still writing"});
}

// Boxes side by side share rows, so their bounding global ranges overlap, but no byte: two
// such stores in one group are fine (found running the bench suite's pipelined copy under
// tmakit check on the H100); boxes that share bytes are not.
TEST(InFlight, StoresOfBoxesSideBySideShareNoByte) {
  const char* fence = "fence.proxy.async.shared::cta;";
  EXPECT_CLEAN(prog({fence, tstore("tmapU8", "0", "0", "s0"), tstore("tmapU8", "32", "0", "s1k"), kCommit, kWaitGroup0}));
  EXPECT_CLEAN(prog({fence, tstore("tmapU8", "32", "0", "s0"), tstore("tmapU8", "0", "8", "s1k"), kCommit, kWaitGroup0}));
  EXPECT_ERROR(prog({fence, tstore("tmapU8", "0", "0", "s0"), tstore("tmapU8", "16", "0", "s1k"), kCommit, kWaitGroup0}),
               "model.in-flight-overlap", "program[2] (cta 0)", {"still writing"});
  EXPECT_ERROR(prog({fence, tstore("tmapU8", "0", "0", "s0"), tstore("tmapU8", "0", "7", "s1k"), kCommit, kWaitGroup0}),
               "model.in-flight-overlap", "program[2] (cta 0)", {"still writing"});
  // A load of the bytes a store of the box beside it writes is no conflict either.
  EXPECT_CLEAN(prog({fence, tstore("tmapU8", "0", "0", "s0"), kInit, arm(256), tload("tmapU8", "32", "0", "s1k"), kWait,
                     kCommit, kWaitGroup0}));
}

// The same store issued again while the first is in flight (same source bytes, same box):
// CUTLASS 4.2's epilogue has every lane of a warp issue its TMA store, 32 identical copies
// writing the same bytes with the same values (found replaying example 49 on the H100). No
// conflict; the same box from another source still is one.
TEST(InFlight, TheSameStoreIssuedAgainIsNoConflict) {
  const char* fence = "fence.proxy.async.shared::cta;";
  EXPECT_CLEAN(prog({fence, tstore("tmapU8", "0", "0", "s0"), tstore("tmapU8", "0", "0", "s0"), kCommit, kWaitGroup0}));
  EXPECT_ERROR(prog({fence, tstore("tmapU8", "0", "0", "s0"), tstore("tmapU8", "0", "0", "s1k"), kCommit, kWaitGroup0}),
               "model.in-flight-overlap", "program[2] (cta 0)", {"still writing"});
}

TEST(InFlight, LoadOverABufferAStoreStillReads) {
  EXPECT_ERROR(prog({kInit, store("gb", "s0", "1024"), arm(1024), load("s0", "ga", "1024"), kWait}),
               "model.in-flight-overlap", "program[3] (cta 0)", {"still reading"});
  EXPECT_CLEAN(prog({kInit, store("gb", "s0", "1024"), kCommit, "cp.async.bulk.wait_group.read 0;", arm(1024),
                     load("s0", "ga", "1024"), kWait}));
}

TEST(InFlight, TmaStoreOfABufferALoadStillWrites) {
  EXPECT_ERROR(prog({kInit, arm(1024), tload("tmapF", "0", "0"), tstore("tmapF", "0", "8")}),
               "model.use-before-completion", "program[3] (cta 0)", {"reads shared bytes [0, 1024)", "program[2]"});
  EXPECT_CLEAN(prog({kInit, arm(1024), tload("tmapF", "0", "0"), kWait, tstore("tmapF", "0", "8"), kCommit, kWaitGroup0}));
}

TEST(InFlight, InitOverBytesACopyStillWrites) {
  json s = prog({kInit, arm(1024), load("s0", "ga", "1024"), "mbarrier.init.shared::cta.b64 [m2], 1;", kWait});
  s["symbols"]["m2"] = "shared:512";
  EXPECT_ERROR(s, "model.use-before-completion", "program[3] (cta 0)", {"mbarrier.init", "program[2]"});
}

TEST(InFlight, MissingProxyFenceBeforeATmaStore) {
  // §9: ordinary stores, then fence.proxy.async.shared::cta, then the async proxy reads.
  const std::string st = "st.shared::cta.b32 [s0+8], 0x01020304;";
  EXPECT_ERROR(prog({st, store("gb", "s0", "1024")}), "model.missing-proxy-fence", "program[1] (cta 0)",
               {"[8, 12)", "fence.proxy.async.shared::cta"});
  EXPECT_ERROR(prog({st, tstore("tmapF", "0", "0")}), "model.missing-proxy-fence", "program[1] (cta 0)", {"[8, 12)"});
  // A fence for global memory does not order shared memory.
  EXPECT_ERROR(prog({st, "fence.proxy.async.global;", store("gb", "s0", "1024")}), "model.missing-proxy-fence",
               "program[2] (cta 0)", {"[8, 12)"});
  json s = prog({st, "fence.proxy.async.shared::cta;", store("gb", "s0", "16"), kCommit, kWaitGroup0});
  s["outputs"] = {{{"name", "B"}, {"global", {{"name", "B"}, {"offset", 0}, {"bytes", 16}}}}};
  Outcome o = EXPECT_CLEAN(s);
  EXPECT_EQ(output(o, "B"), (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 4, 3, 2, 1, 0, 0, 0, 0}));
  // Writes to other bytes need no fence.
  EXPECT_CLEAN(prog({"st.shared::cta.b32 [s2k], 1;", store("gb", "s0", "1024"), kCommit, kWaitGroup0}));
}

TEST(WaitGroup, ReadLetsSharedBeReused) {
  // §9: wait_group.read returns once the sources are read; the writes may still be in flight.
  json s = prog({store("gb", "s0", "1024"), kCommit, "cp.async.bulk.wait_group.read 0;",
                 "st.shared::cta.b32 [s0], 0x22222222;"});
  s["shared_init"] = {{{"cta", 0}, {"offset", 0}, {"bytes", 1024}, {"init", {{"byte", 0x11}}}}};
  s["outputs"] = {{{"name", "B"}, {"global", {{"name", "B"}, {"offset", 0}, {"bytes", 1024}}}}};
  Outcome o = EXPECT_CLEAN(s);
  EXPECT_EQ(output(o, "B"), std::vector<uint8_t>(1024, 0x11));  // the store read its source before the overwrite
  // Without the wait, or with one that leaves the group pending, the source is still in use.
  json no_wait = with(s, {store("gb", "s0", "1024"), kCommit, "st.shared::cta.b32 [s0], 0x22222222;"});
  EXPECT_ERROR(no_wait, "model.use-before-completion", "program[2] (cta 0)", {"bytes [0, 4)", "program[0] (cta 0)"});
  json wait1 = with(s, {store("gb", "s0", "1024"), kCommit, "cp.async.bulk.wait_group.read 1;",
                        "st.shared::cta.b32 [s0], 0x22222222;"});
  EXPECT_ERROR(wait1, "model.use-before-completion", "program[3] (cta 0)", {"bytes [0, 4)"});
  // Uncommitted operations are not in any group: wait_group does not wait for them.
  json uncommitted = with(s, {store("gb", "s0", "1024"), "cp.async.bulk.wait_group.read 0;",
                              "st.shared::cta.b32 [s0], 0x22222222;"});
  EXPECT_ERROR(uncommitted, "model.use-before-completion", "program[2] (cta 0)", {"bytes [0, 4)"});
}

TEST(WaitGroup, PlainWaitCompletesStores) {
  // After wait_group 0 the global bytes are written: a load may read them.
  json s = prog({store("gb", "s0", "1024"), kCommit, kWaitGroup0, kInit, arm(1024), load("s1k", "gb", "1024"), kWait});
  s["shared_init"] = {{{"cta", 0}, {"offset", 0}, {"bytes", 1024}, {"init", {{"byte", 0x11}}}}};
  s["outputs"] = {{{"name", "copy"}, {"shared", {{"offset", 1024}, {"bytes", 1024}}}}};
  Outcome o = EXPECT_CLEAN(s);
  EXPECT_EQ(output(o, "copy"), std::vector<uint8_t>(1024, 0x11));
  // wait_group.read leaves the writes in flight; no wait at all too.
  for (const std::string& w : {std::string("cp.async.bulk.wait_group.read 0;"), std::string("cp.async.bulk.wait_group 1;")})
    EXPECT_ERROR(with(s, {store("gb", "s0", "1024"), kCommit, w, kInit, arm(1024), load("s1k", "gb", "1024"), kWait}),
                 "model.use-before-completion", "program[5] (cta 0)", {"global bytes", "program[0] (cta 0)"});
}

TEST(WaitGroup, GroupsCompleteInCommitOrder) {
  // wait_group 1 with two groups pending completes the older one only.
  json s = prog({store("gb", "s0", "1024"), kCommit, store("gb+1024", "s1k", "1024"), kCommit,
                 "cp.async.bulk.wait_group 1;", kInit, arm(1024), load("s2k", "gb", "1024"), kWait});
  EXPECT_CLEAN(s);
  EXPECT_ERROR(with(s, {store("gb", "s0", "1024"), kCommit, store("gb+1024", "s1k", "1024"), kCommit,
                        "cp.async.bulk.wait_group 1;", kInit, arm(1024), load("s2k", "gb+1024", "1024"), kWait}),
               "model.use-before-completion", "program[7] (cta 0)", {"program[2] (cta 0)"});
}

// ---- --seed: completion order (scenario-format.md, Execution) ----

TEST(Seed, CorrectProgramIsOrderIndependent) {
  // Four tensor loads on one barrier, a multicast, stores in two groups and a reduction.
  json s = prog({on(0, kInit), on(1, kInit), on(0, arm(4096 + 1024)), on(1, arm(1024)),
                 tload("tmapF", "0", "0", "s0"), tload("tmapF", "0", "8", "s1k"), tload("tmapF", "0", "16", "s2k"),
                 tload("tmapF", "0", "24", "s3k"),
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [s4k], [ga+4096], "
                 "1024, [mbar], 3;",
                 on(0, kWait), on(1, kWait), tstore("tmapF", "0", "32", "s0"), tstore("tmapF", "0", "40", "s1k"), kCommit,
                 tstore("tmapF", "0", "48", "s2k"), treduce("add", "tmapF", "0", "56", "s3k"), kCommit,
                 on(1, store("gb", "s4k", "1024")), on(1, kCommit), on(1, kWaitGroup0), kWaitGroup0},
                2);
  s["symbols"]["s3k"] = "shared:3072";
  s["outputs"] = {{{"name", "A"}, {"global", "A"}},
                  {{"name", "B"}, {"global", "B"}},
                  {{"name", "smem0"}, {"shared", {{"cta", 0}, {"offset", 0}, {"bytes", 8192}}}},
                  {{"name", "smem1"}, {"shared", {{"cta", 1}, {"offset", 0}, {"bytes", 8192}}}}};
  Outcome ref = EXPECT_CLEAN(s);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    scenario::RunOptions o;
    o.seed = seed;
    Outcome r = EXPECT_CLEAN(s, o);
    for (size_t i = 0; i < ref.result.outputs.size() && i < r.result.outputs.size(); ++i)
      EXPECT_EQ(r.result.outputs[i].second, ref.result.outputs[i].second)
          << "seed " << seed << " output " << ref.result.outputs[i].first;
  }
  // The multicast landed in both CTAs: A's initial bytes [4096, 5120) ({"random": 1},
  // before the store to rows 32..39 overwrote them).
  std::vector<uint8_t> want;
  for (uint64_t i = 4096; i < 5120; ++i) want.push_back(uint8_t(scenario::splitmix64(1 + i / 8) >> (8 * (i % 8))));
  auto s0 = output(ref, "smem0"), s1 = output(ref, "smem1");
  EXPECT_TRUE(std::equal(want.begin(), want.end(), s0.begin() + 4096));
  EXPECT_TRUE(std::equal(want.begin(), want.end(), s1.begin() + 4096));
}

TEST(Seed, ProgramRelyingOnAnOrderIsReported) {
  // Two copies in flight into overlapping bytes: the result would depend on which lands last.
  json s = prog({kInit, arm(2048), load("s0", "ga", "1024"), load("s0+512", "ga+4096", "1024"), kWait});
  for (uint64_t seed = 0; seed <= 20; ++seed) {
    scenario::RunOptions o;
    if (seed) o.seed = seed;
    EXPECT_ERROR(s, "model.in-flight-overlap", "program[3] (cta 0)", {"[512, 1536)"}, o);
  }
  // Two stores to overlapping global bytes in one group: no order inside a group (§9).
  EXPECT_ERROR(prog({store("gb", "s0", "1024"), store("gb+512", "s1k", "1024"), kCommit, kWaitGroup0}),
               "model.in-flight-overlap", "program[1] (cta 0)", {"global bytes"});
}

// ---- packed types and gather4 (sm_100; their walks: tests/model/test_packed.cpp, test_gather4.cpp) ----

TEST(Unsupported, PackedTypeWalk) {
  // sm_100 accepts 16U4 maps (§2.5) and the model walks them (4 rows of 64 packed bytes).
  json s = prog({kInit, arm(256), tload("tmapP", "0", "0"), kWait});
  s["tensor_maps"]["tmapP"] = {{"encode", "tiled"}, {"data_type", "16u4_align8b"}, {"global", "A"},
                               {"dims", {128, 16}}, {"strides", {128}}, {"box", {128, 4}}};
  EXPECT_CLEAN(s, target("sm_100a"));
  // Packed types' own coordinate rules (PTX-R) come first: c[0] a multiple of 128, no reductions.
  s["program"][2] = tload("tmapP", "64", "0");
  EXPECT_ERROR(s, "coord.packed-inner-align", "program[2] (cta 0)", {"coords[0] = 64"}, target("sm_100a"));
  s["program"] = {treduce("add", "tmapP", "0", "0")};
  EXPECT_ERROR(s, "coord.packed-direction", "program[0] (cta 0)", {"16u4_align8b"}, target("sm_100a"));
}

TEST(Unsupported, Gather4Walk) {
  // On sm_100a the form passes the target check (contrast TargetDiagnostics); tmapF's box
  // has 8 rows, and a gather4 map moves one row per box (§5).
  EXPECT_ERROR(prog({kInit,
                     "cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes [s0], "
                     "[tmapF, {0, 0, 1, 2, 3}], [mbar];"}),
               "gather4.box-rows", "program[1] (cta 0)", {"box[1] = 8"}, target("sm_100a"));
}

// ---- scenario input (exit 2 in the CLI) ----

TEST(ScenarioInput, FieldErrorsNameTheField) {
  auto input_error = [](const json& j) -> Diagnostic {
    try {
      scenario::from_json(json::parse(j.dump()), ".");
    } catch (const scenario::InputError& e) {
      return e.diagnostic();
    }
    ADD_FAILURE() << "accepted: " << j.dump();
    return {};
  };
  json s = prog({kInit});
  json bad = s;
  bad["format"] = "tmakit-scenario/2";
  EXPECT_EQ(input_error(bad).where, "scenario.format");
  bad = s;
  bad["colour"] = "blue";
  Diagnostic d = input_error(bad);
  EXPECT_EQ(d.rule, "scenario.field");
  EXPECT_NE(d.message.find("colour"), std::string::npos);
  bad = s;
  bad.erase("program");
  EXPECT_EQ(input_error(bad).where, "scenario.program");
  bad = s;
  bad["global"]["A"]["bytes"] = "lots";
  EXPECT_EQ(input_error(bad).where, "scenario.global.A.bytes");
  bad = s;
  bad["global"]["A"]["init"] = {{"random", 1}, {"byte", 2}};
  EXPECT_EQ(input_error(bad).where, "scenario.global.A.init");
  bad = s;
  bad["program"] = {{{"cta", 0}, {"ptx", kInit}, {"warp", 1}}};
  EXPECT_EQ(input_error(bad).where, "scenario.program[0]");
  bad = s;
  bad["tensor_maps"]["tmapF"]["swizzle"] = "96b";
  EXPECT_EQ(input_error(bad).where.rfind("scenario.tensor_maps.tmapF", 0), 0u);
  bad = s;
  bad["symbols"]["s0"] = "smem:0";
  Outcome o = run(bad);
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.error->rule, "scenario.symbol");
  EXPECT_EQ(o.error->where, "scenario.symbols.s0");
}

TEST(ScenarioInput, MalformedFile) {
  auto dir = std::filesystem::temp_directory_path() / ("tmakit_diag_input_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "broken.json") << "{ \"format\": ";
  }
  try {
    scenario::load_file(dir / "broken.json");
    ADD_FAILURE() << "accepted";
  } catch (const scenario::InputError& e) {
    EXPECT_EQ(e.diagnostic().rule, "scenario.json");
  }
  try {
    scenario::load_file(dir / "missing.json");
    ADD_FAILURE() << "accepted";
  } catch (const scenario::InputError& e) {
    EXPECT_EQ(e.diagnostic().rule, "scenario.file");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
