// scenario::resolve (program.hpp): allocations indexed, maps bound, symbols typed, steps decoded
// and named, each input error named once with its field; and a resolved program runs as the
// scenario does.
#include <gtest/gtest.h>

#include <string>

#include "tmakit/scenario/program.hpp"

using namespace tmakit;
using nlohmann::json;

namespace {

json base() {
  return json::parse(R"({
    "format": "tmakit-scenario/1", "target": "sm_90a", "ptx_version": "8.7",
    "cluster": {"ctas": 2}, "shared_bytes": 8192,
    "global": {"other": {"bytes": 256}, "A": {"bytes": 8192, "init": {"random": 3}}},
    "tensor_maps": {"m": {"encode": "tiled", "data_type": "float32", "global": "A", "offset": 64,
                          "dims": [32, 64], "strides": [128], "box": [16, 8], "interleave": "none",
                          "swizzle": "none", "l2_promotion": "none", "oob_fill": "none"}},
    "symbols": {"tile": "shared:1024", "bar": "shared@1:4096", "g": "global:A+32", "x": 16},
    "program": [
      {"cta": 1, "ptx": "mbarrier.init.shared::cta.b64 [bar], 1;"},
      {"cta": 1, "ptx": "mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 512;"},
      {"cta": 1, "ptx": "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [tile], [m, {x, 0}], [bar];"},
      {"cta": 1, "ptx": "mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 0;"}
    ],
    "outputs": [{"name": "t", "shared": {"cta": 1, "offset": 1024, "bytes": 512}}]
  })");
}

scenario::Program resolve(const json& j) { return scenario::resolve(scenario::from_json(j, {})); }

TEST(Resolve, BindsMapsSymbolsAndSteps) {
  const scenario::Program p = resolve(base());
  ASSERT_EQ(p.globals.size(), 2u);
  const int a = p.find_global("A");
  ASSERT_GE(a, 0);
  EXPECT_EQ(p.globals[size_t(a)].name, "A");
  EXPECT_EQ(p.find_global("B"), -1);
  const scenario::BoundMap* m = p.find_map("m");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->alloc, a);
  EXPECT_EQ(m->offset, 64u);
  const scenario::Symbol* g = p.find_symbol("g");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->kind, scenario::SymbolValue::Kind::global);
  EXPECT_EQ(g->alloc, a);
  EXPECT_EQ(g->v, 32);
  const scenario::Symbol* bar = p.find_symbol("bar");
  ASSERT_TRUE(bar);
  EXPECT_EQ(bar->kind, scenario::SymbolValue::Kind::cluster);
  EXPECT_EQ(bar->rank, 1);
  EXPECT_EQ(bar->v, 4096);
  ASSERT_EQ(p.steps.size(), 4u);
  EXPECT_EQ(p.steps[2].where, "program[2] (cta 1)");
  ASSERT_TRUE(p.steps[2].ptx);
  EXPECT_EQ(p.steps[2].ptx->as<ptx::TensorCopy>().tensor.map, "m");
  EXPECT_EQ(p.steps[2].source, base()["program"][2]["ptx"]);
}

TEST(Resolve, ErrorsNameTheirField) {
  json j = base();
  j["tensor_maps"]["m"]["global"] = "B";
  try {
    resolve(j);
    ADD_FAILURE() << "a map on a missing allocation resolved";
  } catch (const scenario::InputError& e) {
    EXPECT_EQ(e.diagnostic().rule, "scenario.field");
    EXPECT_EQ(e.diagnostic().where, "scenario.tensor_maps.m.global");
  } catch (const DiagnosticError& e) {
    // from_json may name it first: either way, the field is named.
    EXPECT_NE(e.diagnostic().where.find("tensor_maps.m"), std::string::npos) << e.diagnostic().where;
  }
  json k = base();
  k["program"][3]["ptx"] = "mbarrier.try_wait.parity.shared::cta.b64 p, [bar];";
  try {
    resolve(k);
    ADD_FAILURE() << "a step that does not parse resolved";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().where.rfind("program[3] (cta 1)", 0), 0u) << e.diagnostic().where;
  }
}

TEST(Resolve, TargetAndVersionOverridesApply) {
  const scenario::Scenario s = scenario::from_json(base(), {});
  const scenario::Program p = scenario::resolve(s, {spec::Target{100, spec::Suffix::a}, spec::PtxVersion{8, 8}});
  EXPECT_EQ(p.target.arch, 100);
  EXPECT_EQ(p.ptx_version, (spec::PtxVersion{8, 8}));
}

TEST(Resolve, AResolvedProgramRunsAsItsScenario) {
  const scenario::Scenario s = scenario::from_json(base(), {});
  const scenario::RunResult a = scenario::run(s);
  const scenario::RunResult b = scenario::run(scenario::resolve(s));
  ASSERT_EQ(a.outputs.size(), 1u);
  EXPECT_EQ(a.outputs, b.outputs);
  // The box landed: the first row's bytes are A's at offset 64 + x * 4.
  std::vector<uint8_t> global(8192);
  for (const auto& g : s.globals)
    if (g.name == "A") g.init.fill(global);
  EXPECT_TRUE(std::equal(a.outputs[0].second.begin(), a.outputs[0].second.begin() + 64, global.begin() + 64 + 16 * 4));
}

}  // namespace
