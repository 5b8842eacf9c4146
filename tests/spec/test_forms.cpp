// The table checks itself: qualifiers unique inside a form, no two forms accept
// the same text, every form reachable by its canonical text; target rules as the
// seeds' Target ISA Notes state them; docs/instructions.md is current.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "tmakit/spec/forms.hpp"

using namespace tmakit;
using namespace tmakit::spec;

namespace {

// Every combination of one choice per slot (optional slots also absent), capped.
void enumerate(const Form& f, size_t slot, std::vector<std::string_view>& cur, std::vector<std::string>& out) {
  if (out.size() > 4000) return;
  if (slot == f.slots.size()) {
    std::string s(f.opcode);
    for (auto c : cur) s += c;
    out.push_back(s);
    return;
  }
  if (!f.slots[slot].required) enumerate(f, slot + 1, cur, out);
  for (const auto& c : f.slots[slot].choices) {
    cur.push_back(c.text);
    enumerate(f, slot + 1, cur, out);
    cur.pop_back();
  }
}

Selection must_match(std::string_view text) {
  Diagnostics d;
  auto sel = match(text, d);
  EXPECT_TRUE(sel.has_value()) << text << ": " << (d.empty() ? "" : format(d.front()));
  return sel ? *sel : Selection{};
}

std::string first_rule(std::string_view text) {
  Diagnostics d;
  auto sel = match(text, d);
  if (sel) return "matched";
  return d.empty() ? "none" : d.front().rule;
}

Target T(std::string_view s) { return *parse_target(s); }

bool allowed(std::string_view text, std::string_view target, PtxVersion v) {
  Selection sel = must_match(text);
  if (!sel.form) return false;
  return !check_target(sel, T(target), v).has_errors();
}

}  // namespace

TEST(Forms, IdsAreUniqueAndQualifiersUniqueWithinAForm) {
  std::set<std::string_view> ids;
  for (const auto& f : forms()) {
    EXPECT_TRUE(ids.insert(f.id).second) << "duplicate id " << f.id;
    std::set<std::string_view> quals;
    for (const auto& s : f.slots)
      for (const auto& q : s.choices) EXPECT_TRUE(quals.insert(q.text).second) << f.id << " repeats " << q.text;
  }
}

TEST(Forms, EveryCanonicalTextMatchesExactlyItsOwnForm) {
  for (const auto& f : forms()) {
    std::vector<std::string> texts;
    std::vector<std::string_view> cur;
    enumerate(f, 0, cur, texts);
    ASSERT_FALSE(texts.empty()) << f.id;
    for (const auto& t : texts) {
      Diagnostics d;
      auto sel = match(t, d);
      ASSERT_TRUE(sel) << t << ": " << format(d.front());
      EXPECT_EQ(sel->form->id, f.id) << t;
      EXPECT_EQ(canonical_mnemonic(*sel), t);
      // No other form of the table accepts the same text (Spike's overlap check).
      int accepting = 0;
      for (const auto& g : forms()) {
        if (g.opcode != f.opcode) continue;
        bool all = true;
        for (size_t i = 0; i < sel->chosen.size(); ++i) {
          if (sel->chosen[i].empty()) continue;
          bool found = false;
          for (const auto& s : g.slots)
            for (const auto& q : s.choices) found |= q.text == sel->chosen[i];
          all &= found;
        }
        for (const auto& s : g.slots) {
          if (!s.required) continue;
          bool have = false;
          for (auto c : sel->chosen)
            for (const auto& q : s.choices) have |= q.text == c;
          all &= have;
        }
        accepting += all;
      }
      EXPECT_EQ(accepting, 1) << t;
    }
  }
}

TEST(Forms, QualifiersInAnyOrderButDestinationBeforeSource) {
  auto a = must_match("cp.async.bulk.tensor.3d.im2col.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint");
  EXPECT_EQ(a.form->id, "tensor.load.shared::cluster");
  EXPECT_EQ(a.get("load_mode"), ".im2col");
  EXPECT_EQ(first_rule("cp.async.bulk.global.shared::cta.bulk_group"), "matched");
  EXPECT_EQ(first_rule("cp.async.bulk.shared::cta.shared::cluster.mbarrier::complete_tx::bytes"), "ptx.qualifier-order");
}

TEST(Forms, MatchErrorsNameTheRule) {
  EXPECT_EQ(first_rule("cp.async.bulk.tensor.2d.shared::cta.global.tile"), "ptx.missing-qualifier");
  EXPECT_EQ(first_rule("cp.async.bulk.tensor.2d.2d.shared::cta.global.mbarrier::complete_tx::bytes"),
            "ptx.duplicate-qualifier");
  EXPECT_EQ(first_rule("cp.async.bulk.tensor.2d.3d.shared::cta.global.mbarrier::complete_tx::bytes"),
            "ptx.conflicting-qualifiers");
  EXPECT_EQ(first_rule("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.multicast::cluster"),
            "ptx.unknown-qualifier");
  EXPECT_EQ(first_rule("cp.async.bulkk.shared::cta.global"), "ptx.unknown-instruction");
  EXPECT_EQ(first_rule("cp.async.bulk.shared::ctx.global.mbarrier::complete_tx::bytes"), "ptx.unknown-qualifier");
  EXPECT_EQ(first_rule("ld.global.b32"), "ptx.unknown-instruction");
  EXPECT_EQ(first_rule("cp.async.bulk..global"), "ptx.syntax");
}

TEST(Forms, DefaultsAreImplied) {
  auto s = must_match("cp.async.bulk.tensor.1d.shared::cta.global.mbarrier::complete_tx::bytes");
  EXPECT_EQ(s.get("load_mode"), ".tile");
  EXPECT_TRUE(s.has(".tile"));
  EXPECT_EQ(s.dim(), 1);
  auto a = must_match("mbarrier.arrive.shared::cta.b64");
  EXPECT_EQ(a.get("sem"), ".release");
  EXPECT_EQ(a.get("scope"), ".cta");
}

// Target ISA Notes of the seeds, case by case.
TEST(Forms, TargetRulesFollowTheSeeds) {
  const PtxVersion v80{8, 0}, v86{8, 6}, v87{8, 7}, v88{8, 8}, v90{9, 0};
  const auto cta = "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes";
  const auto cluster = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes";
  // .shared::cta destination needs PTX 8.6; sm_90 or higher.
  EXPECT_TRUE(allowed(cta, "sm_90", v86));
  EXPECT_FALSE(allowed(cta, "sm_90a", v80));
  EXPECT_TRUE(allowed(cluster, "sm_90", v80));
  // gather4 into .shared::cta: sm_100 or higher.
  const auto g4cta = "cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes";
  EXPECT_FALSE(allowed(g4cta, "sm_90a", v86));
  EXPECT_TRUE(allowed(g4cta, "sm_100", v86));
  EXPECT_TRUE(allowed(g4cta, "sm_120", v87));
  // gather4 into .shared::cluster: sm_100a; sm_100f from PTX 8.8.
  const auto g4cl = "cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes";
  EXPECT_FALSE(allowed(g4cl, "sm_100", v88));
  EXPECT_TRUE(allowed(g4cl, "sm_100a", v86));
  EXPECT_FALSE(allowed(g4cl, "sm_100f", v86));  // sm_100f itself needs 8.8
  EXPECT_TRUE(allowed(g4cl, "sm_100f", v88));
  EXPECT_TRUE(allowed(g4cl, "sm_103a", v88));   // same family as sm_100f
  EXPECT_FALSE(allowed(g4cl, "sm_120a", v88));  // another family
  // scatter4: sm_100a, sm_101a/sm_110a, the 100f and 110f families from 8.8.
  const auto s4 = "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group";
  EXPECT_TRUE(allowed(s4, "sm_100a", v86));
  EXPECT_TRUE(allowed(s4, "sm_101a", v86));
  EXPECT_TRUE(allowed(s4, "sm_110a", v90));
  EXPECT_TRUE(allowed(s4, "sm_110f", v90));
  EXPECT_FALSE(allowed(s4, "sm_100", v88));
  EXPECT_FALSE(allowed(s4, "sm_90a", v88));
  EXPECT_FALSE(allowed(s4, "sm_120f", v88));
  // cp_mask: PTX 8.6 and sm_100 or higher.
  const auto mask = "cp.async.bulk.global.shared::cta.bulk_group.cp_mask";
  EXPECT_FALSE(allowed(mask, "sm_90a", v86));
  EXPECT_TRUE(allowed(mask, "sm_100", v86));
  // Multicast works on sm_90 but is advised only on sm_90a and the listed families: a warning.
  Selection mc = must_match("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster");
  Diagnostics d = check_target(mc, T("sm_90"), v80);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::warning);
  EXPECT_EQ(d[0].rule, "ptx.advised-target");
  EXPECT_TRUE(check_target(mc, T("sm_90a"), v80).empty());
  EXPECT_FALSE(check_target(mc, T("sm_120a"), v88).empty());
}

TEST(Forms, ErrorMessagesSayWhatIsNeeded) {
  Selection s = must_match("cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes");
  Diagnostics d = check_target(s, T("sm_90a"), {8, 6});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rule, "ptx.target");
  EXPECT_NE(d[0].message.find("`.tile::gather4` needs sm_100 or higher"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("sm_90a"), std::string::npos);
}

TEST(Forms, CombinationConstraints) {
  auto rule = [](std::string_view text) {
    Diagnostics d = check_combination(must_match(text));
    return d.empty() ? std::string("ok") : d.front().rule;
  };
  EXPECT_EQ(rule("cp.async.bulk.tensor.3d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes"), "ptx.gather4-dim");
  EXPECT_EQ(rule("cp.async.bulk.tensor.2d.shared::cta.global.im2col.mbarrier::complete_tx::bytes"), "ptx.im2col-dim");
  EXPECT_EQ(rule("cp.async.bulk.tensor.3d.shared::cta.global.im2col.mbarrier::complete_tx::bytes"), "ok");
  EXPECT_EQ(rule("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16"), "ok");
  EXPECT_EQ(rule("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f16"), "ptx.reduction-noftz");
  EXPECT_EQ(rule("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.noftz.f16"), "ptx.reduction-noftz");
  EXPECT_EQ(rule("cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.s32"), "ptx.reduction-type");
  EXPECT_EQ(rule("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u64"), "ok");
  EXPECT_EQ(rule("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.and.b64"), "ptx.reduction-type");
}

TEST(Forms, ReductionPairsFollowSection6) {
  // §6.1: inc/dec only .u32; min/max not on f32; add not on s64.
  EXPECT_TRUE(reduction_allowed("tensor.reduce", RedOp::inc, RedType::u32));
  EXPECT_FALSE(reduction_allowed("tensor.reduce", RedOp::inc, RedType::s32));
  EXPECT_FALSE(reduction_allowed("tensor.reduce", RedOp::min, RedType::f32));
  EXPECT_FALSE(reduction_allowed("tensor.reduce", RedOp::add, RedType::s64));
  EXPECT_TRUE(reduction_allowed("tensor.reduce", RedOp::max, RedType::s64));
  EXPECT_TRUE(reduction_allowed("bulk-reduce.global.shared::cta", RedOp::add, RedType::f64));
  EXPECT_FALSE(reduction_allowed("tensor.reduce", RedOp::add, RedType::f64));
}

TEST(Forms, OperandShapes) {
  Selection s = must_match("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint");
  auto ops = operands_of(s);
  std::vector<std::string_view> names;
  for (auto* o : ops) names.push_back(o->name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"dstMem", "[tensorMap, tensorCoords]", "mbar", "im2colInfo", "ctaMask", "cache-policy"}));
  EXPECT_EQ(vector_length(s, *ops[1]), 5);
  EXPECT_EQ(vector_length(s, *ops[3]), 3);
  Selection g = must_match("cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes");
  EXPECT_EQ(vector_length(g, *operands_of(g)[1]), 5);
  Selection w = must_match("cp.async.bulk.prefetch.tensor.4d.L2.global.im2col::w::128");
  EXPECT_EQ(vector_length(w, *operands_of(w)[1]), 2);
}

TEST(Docs, InstructionMatrixIsCurrent) {
  std::ifstream in(std::string(TMAKIT_SOURCE_DIR) + "/docs/instructions.md");
  ASSERT_TRUE(in) << "docs/instructions.md is missing: run `tmakit docs instructions > docs/instructions.md`";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), instruction_matrix_markdown())
      << "docs/instructions.md is stale: run `tmakit docs instructions > docs/instructions.md`";
}
