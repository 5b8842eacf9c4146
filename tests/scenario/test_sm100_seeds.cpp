// Acceptance for the sm_100 modes and clusters: every example of the seed pages
// (tests/seeds, "Examples" blocks) that uses .tile::gather4, .tile::scatter4,
// .cta_group, .cp_mask or .multicast::cluster runs as a scenario with suitable
// symbols and produces the bytes a reference written here predicts; the
// sm_100-only forms are accepted for sm_100a and refused for sm_90a with the rule
// named (the scenario's `target` field, and RunOptions::target as `--target`).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "../ptx/seed_examples.hpp"
#include "tmakit/scenario/scenario.hpp"

using namespace tmakit;
using nlohmann::json;

namespace {

uint8_t random_byte(uint64_t seed, uint64_t i) { return uint8_t(scenario::splitmix64(seed + i / 8) >> (8 * (i % 8))); }

// Two CTAs on sm_100a, 16 KiB of shared memory each, A = 16 KiB of {"random": 4}.
json base() {
  return {{"format", "tmakit-scenario/1"},
          {"target", "sm_100a"},
          {"ptx_version", "8.7"},
          {"cluster", {{"ctas", 2}}},
          {"shared_bytes", 16384},
          {"global", {{"A", {{"bytes", 16384}, {"init", {{"random", 4}}}}}, {"B", {{"bytes", 4096}}}}},
          {"symbols", {{"p", 1}}},
          {"program", json::array()},
          {"outputs", json::array()}};
}
// A float32 tiled map over A: 32 × 128 elements in rows of 128 bytes.
json map2d(uint32_t box0, uint32_t box1) {
  return {{"encode", "tiled"}, {"data_type", "float32"}, {"global", "A"}, {"dims", {32, 128}},
          {"strides", {128}}, {"box", {box0, box1}}};
}
void on(json& s, int cta, const std::string& ptx) { s["program"].push_back({{"cta", cta}, {"ptx", ptx}}); }
void arm(json& s, int cta, const std::string& mbar, int bytes) {
  on(s, cta, "mbarrier.init.shared::cta.b64 [" + mbar + "], 1;");
  on(s, cta, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [" + mbar + "], " + std::to_string(bytes) + ";");
}
void wait(json& s, int cta, const std::string& mbar) {
  on(s, cta, "mbarrier.try_wait.parity.shared::cta.b64 done, [" + mbar + "], 0;");
}
void out_shared(json& s, const std::string& name, int cta, int offset, int bytes) {
  s["outputs"].push_back({{"name", name}, {"shared", {{"cta", cta}, {"offset", offset}, {"bytes", bytes}}}});
}

// Rows [y, y + n) of A's 128-byte rows.
std::vector<uint8_t> rows_of_a(std::initializer_list<int> ys) {
  std::vector<uint8_t> v;
  for (int y : ys)
    for (int i = 0; i < 128; ++i) v.push_back(random_byte(4, uint64_t(y) * 128 + i));
  return v;
}

struct Case {
  json scenario;                                           // the seed statement sits in it as-is
  std::map<std::string, std::vector<uint8_t>> expected;    // output name -> bytes
  bool sm100_only = true;                                  // refused on sm_90a with ptx.target
};

// One scenario per seed statement, chosen by what the statement uses.
std::optional<Case> make_case(const std::string& stmt) {
  Case c{base(), {}, true};
  json& s = c.scenario;
  if (stmt.find(".tile::gather4") != std::string::npos && stmt.find("prefetch") == std::string::npos) {
    // [sMem5], [tensorMap6, {x0, y0, y1, y2, y3}], [mbar5]: four rows of A into CTA 0.
    s["tensor_maps"]["tensorMap6"] = map2d(32, 1);
    s["symbols"].update({{"sMem5", "shared:0"}, {"mbar5", "shared:8192"}, {"x0", 0}, {"y0", 7},
                         {"y1", 2}, {"y2", 127}, {"y3", 7}});
    arm(s, 0, "mbar5", 4 * 128);
    on(s, 0, stmt);
    wait(s, 0, "mbar5");
    out_shared(s, "rows", 0, 0, 512);
    c.expected["rows"] = rows_of_a({7, 2, 127, 7});
  } else if (stmt.find(".tile::gather4") != std::string::npos) {
    // The prefetch form: operands checked, no effect.
    s["tensor_maps"]["tensorMap5"] = map2d(32, 1);
    s["symbols"].update({{"col_idx", 0}, {"row_idx0", 1}, {"row_idx1", 2}, {"row_idx2", 300}, {"row_idx3", -4}});
    on(s, 0, stmt);
    out_shared(s, "smem", 0, 0, 512);
    c.expected["smem"] = std::vector<uint8_t>(512, 0);
  } else if (stmt.find(".cta_group::2") != std::string::npos) {
    // [sMem6], [tensorMap7, {tc0}], [peerMbar]: a 1-D box into CTA 1, signalling CTA 0's barrier.
    s["tensor_maps"]["tensorMap7"] = {{"encode", "tiled"}, {"data_type", "uint8"}, {"global", "A"},
                                      {"dims", {16384}}, {"box", {256}}};
    s["symbols"].update({{"sMem6", "shared@1:1024"}, {"peerMbar", "shared@0:8192"}, {"tc0", 512}, {"bar", "shared:8192"}});
    arm(s, 0, "bar", 256);
    on(s, 0, stmt);
    wait(s, 0, "bar");
    out_shared(s, "cta1", 1, 1024, 256);
    std::vector<uint8_t> want;
    for (int i = 512; i < 768; ++i) want.push_back(random_byte(4, i));
    c.expected["cta1"] = want;
  } else if (stmt.find(".cp_mask") != std::string::npos) {
    // [dstMem], [srcMem], size, cache-policy, byteMask: bytes 0-3 and 12 of each chunk.
    s["shared_init"] = {{{"cta", 0}, {"offset", 0}, {"bytes", 64}, {"init", {{"byte", 0xC3}}}}};
    s["symbols"].update({{"dstMem", "global:B+32"}, {"srcMem", "shared:0"}, {"size", 64}, {"cache-policy", 0},
                         {"byteMask", "0x100f"}});
    on(s, 0, stmt);
    on(s, 0, "cp.async.bulk.commit_group;");
    on(s, 0, "cp.async.bulk.wait_group 0;");
    s["outputs"].push_back({{"name", "B"}, {"global", {{"name", "B"}, {"offset", 0}, {"bytes", 128}}}});
    std::vector<uint8_t> want(128, 0);
    for (int i = 32; i < 96; ++i) want[i] = ((0x100f >> (i % 16)) & 1) ? 0xC3 : 0;
    c.expected["B"] = want;
  } else if (stmt.find(".multicast::cluster") != std::string::npos) {
    c.sm100_only = false;  // sm_90 and later (H12); advised on sm_90a / sm_100a
    const bool tensor = stmt.find(".tensor") != std::string::npos;
    // Tensor: [sMem1], [tensorMap1, {tc0, tc1}], [mbar2], ctaMask. Bulk: [dstMem], [srcMem], size, [mbar], ctaMask.
    s["tensor_maps"]["tensorMap1"] = map2d(32, 4);
    s["symbols"].update({{"sMem1", "shared:2048"}, {"mbar2", "shared:8192"}, {"tc0", 0}, {"tc1", 5},
                         {"dstMem", "shared:2048"}, {"srcMem", "global:A+640"}, {"size", 512}, {"mbar", "shared:8192"},
                         {"ctaMask", "0x3"}});
    for (int cta : {0, 1}) arm(s, cta, tensor ? "mbar2" : "mbar", 512);
    on(s, 0, stmt);
    for (int cta : {0, 1}) {
      wait(s, cta, tensor ? "mbar2" : "mbar");
      out_shared(s, "cta" + std::to_string(cta), cta, 2048, 512);
      c.expected["cta" + std::to_string(cta)] = rows_of_a({5, 6, 7, 8});  // A + 640 = row 5
    }
  } else {
    return std::nullopt;
  }
  return c;
}

const std::regex kModes(R"(\.tile::gather4|\.tile::scatter4|\.cta_group|\.cp_mask|\.multicast::cluster)");

Diagnostic run_error(const json& s, const scenario::RunOptions& o = {}) {
  try {
    scenario::run(scenario::from_json(json::parse(s.dump()), "."), o);
  } catch (const DiagnosticError& e) {
    return e.diagnostic();
  }
  return {Severity::note, "(clean)", "", ""};
}

// The seed's cta_group example omits its completion qualifier (a typo of the ISA page,
// tests/ptx/test_parser.cpp); it runs as the ISA's syntax block spells the form.
std::string as_runnable(const std::string& stmt) {
  const std::string typo = ".global.tile.cta_group::2";
  if (auto at = stmt.find(typo); at != std::string::npos)
    return std::string(stmt).replace(at, typo.size(), ".global.tile.mbarrier::complete_tx::bytes.cta_group::2");
  return stmt;
}

TEST(Sm100Seeds, EveryExampleOfTheseModesRuns) {
  std::set<std::string> kinds;
  int ran = 0;
  for (const std::string& seed : seed_examples()) {
    if (!std::regex_search(seed, kModes)) continue;
    SCOPED_TRACE(seed);
    const std::string stmt = as_runnable(seed);
    if (stmt != seed) {
      EXPECT_EQ(run_error(make_case(seed)->scenario).rule, "ptx.missing-qualifier");
    }
    std::optional<Case> c = make_case(stmt);
    ASSERT_TRUE(c) << "no scenario for this seed example";
    scenario::RunResult r;
    try {
      r = scenario::run(scenario::from_json(json::parse(c->scenario.dump()), "."));
    } catch (const DiagnosticError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    for (const auto& [name, want] : c->expected) {
      bool found = false;
      for (const auto& [n, bytes] : r.outputs) {
        if (n != name) continue;
        found = true;
        EXPECT_EQ(bytes, want) << name;
      }
      EXPECT_TRUE(found) << name;
    }
    std::smatch m;
    std::regex_search(seed, m, kModes);
    kinds.insert(m.str());
    ++ran;
  }
  // The seed pages have examples of these four; scatter4 has none (its syntax block only).
  EXPECT_EQ(kinds, (std::set<std::string>{".tile::gather4", ".cta_group", ".cp_mask", ".multicast::cluster"}));
  EXPECT_EQ(ran, 6) << "gather4 load and prefetch, cta_group::2, cp_mask, tensor and bulk multicast";
}

TEST(Sm100Seeds, Sm100OnlyFormsAreRefusedOnSm90WithTheRule) {
  for (const std::string& seed : seed_examples()) {
    if (!std::regex_search(seed, kModes)) continue;
    SCOPED_TRACE(seed);
    Case c = *make_case(as_runnable(seed));
    json s = c.scenario;
    s["target"] = "sm_90a";
    const Diagnostic d = run_error(s);
    // The same refusal when the scenario says sm_100a and the run overrides it (`tmakit run --target`).
    scenario::RunOptions o;
    o.target = spec::Target{90, spec::Suffix::a};
    const Diagnostic over = run_error(c.scenario, o);
    if (c.sm100_only) {
      EXPECT_EQ(d.rule, "ptx.target") << format(d);
      EXPECT_NE(d.message.find("sm_90a"), std::string::npos) << format(d);
      EXPECT_EQ(over.rule, "ptx.target") << format(over);
    } else {
      EXPECT_EQ(d.rule, "(clean)") << format(d);  // multicast works on sm_90 (H12)
    }
  }
}

// .cp_mask (§7): byteMask is 16 bits; a zero mask writes nothing and the group still completes.
TEST(Sm100Seeds, CpMaskByteMaskIsSixteenBits) {
  json s = base();
  s["shared_init"] = {{{"cta", 0}, {"offset", 0}, {"bytes", 32}, {"init", {{"byte", 0x77}}}}};
  s["symbols"].update({{"gdst", "global:B"}, {"src", "shared:0"}});
  on(s, 0, "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [gdst], [src], 32, 0;");
  on(s, 0, "cp.async.bulk.commit_group;");
  on(s, 0, "cp.async.bulk.wait_group 0;");
  s["outputs"].push_back({{"name", "B"}, {"global", {{"name", "B"}, {"offset", 0}, {"bytes", 32}}}});
  const auto r = scenario::run(scenario::from_json(json::parse(s.dump()), "."));
  EXPECT_EQ(r.outputs[0].second, std::vector<uint8_t>(32, 0));
  s["program"][0] = {{"cta", 0}, {"ptx", "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [gdst], [src], 32, 0x10000;"}};
  const Diagnostic d = run_error(s);
  EXPECT_EQ(d.rule, "bulk.byte-mask-range") << format(d);
  EXPECT_NE(d.message.find("65536"), std::string::npos) << format(d);
}

// scatter4 has no seed example: the syntax block's form, run both ways round (gather then scatter).
TEST(Sm100Seeds, Scatter4FromTheSyntaxBlock) {
  json s = base();
  s["tensor_maps"]["tmapR"] = map2d(32, 1);
  s["symbols"].update({{"rows", "shared:0"}, {"mbar", "shared:8192"}});
  arm(s, 0, "mbar", 512);
  on(s, 0, "cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes [rows], [tmapR, {0, 1, 2, 3, 4}], [mbar];");
  wait(s, 0, "mbar");
  on(s, 0, "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [tmapR, {0, 100, 90, 80, 70}], [rows];");
  on(s, 0, "cp.async.bulk.commit_group;");
  on(s, 0, "cp.async.bulk.wait_group 0;");
  s["outputs"].push_back({{"name", "A"}, {"global", {{"name", "A"}, {"offset", 0}, {"bytes", 16384}}}});
  const auto r = scenario::run(scenario::from_json(json::parse(s.dump()), "."));
  std::vector<uint8_t> want(16384);
  for (size_t i = 0; i < want.size(); ++i) want[i] = random_byte(4, i);
  const int to[4] = {100, 90, 80, 70};
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 128; ++i) want[to[k] * 128 + i] = random_byte(4, uint64_t(1 + k) * 128 + i);
  EXPECT_EQ(r.outputs[0].second, want);
  s["target"] = "sm_90a";
  EXPECT_EQ(run_error(s).rule, "ptx.target");
}

// The map-level sm_100 features (§1.2, §3.4, H17): packed types and the atom swizzles
// are refused for sm_90a targets by the map rule and run on sm_100a.
TEST(Sm100Seeds, PackedTypesAndAtomSwizzlesNeedSm100) {
  struct M { std::string rule; json map; int bytes; };
  const std::vector<M> maps = {
      {"map.packed-type-target",
       {{"encode", "tiled"}, {"data_type", "16u4_align8b"}, {"global", "A"}, {"dims", {256, 64}}, {"strides", {128}},
        {"box", {256, 4}}}, 512},
      {"map.packed-type-target",
       {{"encode", "tiled"}, {"data_type", "16u6_align16b"}, {"global", "A"}, {"dims", {128, 64}}, {"strides", {128}},
        {"box", {128, 2}}, {"swizzle", "128b_atom_32b"}}, 256},
      {"map.atom-swizzle-target",
       {{"encode", "tiled"}, {"data_type", "bfloat16"}, {"global", "A"}, {"dims", {64, 64}}, {"strides", {128}},
        {"box", {64, 4}}, {"swizzle", "128b_atom_64b"}}, 512},
  };
  for (const auto& m : maps) {
    SCOPED_TRACE(m.map.dump());
    json s = base();
    s["tensor_maps"]["tmapX"] = m.map;
    s["symbols"].update({{"t", "shared:0"}, {"mbar", "shared:8192"}});
    arm(s, 0, "mbar", m.bytes);
    on(s, 0, "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.tile [t], [tmapX, {0, 0}], [mbar];");
    wait(s, 0, "mbar");
    EXPECT_EQ(run_error(s).rule, "(clean)");
    s["target"] = "sm_90a";
    const Diagnostic d = run_error(s);
    EXPECT_EQ(d.rule, m.rule) << format(d);
    EXPECT_EQ(d.where.rfind("tensor_maps.tmapX", 0), 0u) << format(d);
  }
}

}  // namespace
