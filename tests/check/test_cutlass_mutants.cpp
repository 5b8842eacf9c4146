// The mutations of tests/gpu/check/cutlass_mutants.py (docs/check-seeded.md, "CUTLASS mutants")
// as `tmakit check --ptx-filter` runs them, on the committed excerpts of the PTX nvcc made of
// CUTLASS 4.2's examples 48 and 49 (tests/gpu/check/cutlass4?_excerpt.ptx): each changes the one
// place it names and nothing else, a module without CUTLASS's kernel passes unchanged, and a
// kernel without the place makes the filter fail loudly instead of running the clean kernel. The
// expectations are the excerpts' own lines read here by regex, independently of the script's
// finders. No GPU: the script needs only Python.
#include "mutant_script.hpp"

namespace {

using namespace check_test;

const fs::path kScript = fs::path(TMAKIT_SOURCE_DIR) / "tests/gpu/check/cutlass_mutants.py";
const fs::path kEx48 = fs::path(TMAKIT_SOURCE_DIR) / "tests/gpu/check/cutlass48_excerpt.ptx";
const fs::path kEx49 = fs::path(TMAKIT_SOURCE_DIR) / "tests/gpu/check/cutlass49_excerpt.ptx";

// `python3 cutlass_mutants.py ARGS < INPUT`.
ScriptRun script(const std::string& args, const std::string& input = "") { return run_script(kScript, args, input); }

int count(const std::string& text, const std::string& re) { return count_matches(text, re); }

TEST(CheckCutlassMutants, EachMutationChangesItsPlaceAndNothingElse) {
  const std::string arrive = R"(mbarrier\.arrive\.expect_tx\.shared::cta\.b64 _, \[%r925\], )";
  const std::string load_a = R"(multicast::cluster\.L2::cache_hint \[%r930\], \[%rd84, \{%r1061, %r102, %r1058\}\], \[%r925\], )";
  const std::vector<Mutant> mutants = {
      {"expect-long16", &kEx48, {{arrive + "%r8;", 1}}, {{arrive + "%r8;", 0}, {arrive + "%mut_r;", 1},
       {R"(^\s*add\.s32 %mut_r, %r8, 16;)", 1}, {R"(^\s*\.reg \.b32 %mut_r;)", 1}}, 4},
      {"expect-short16", &kEx48, {{arrive + "%r8;", 1}}, {{arrive + "%mut_r;", 1},
       {R"(^\s*add\.s32 %mut_r, %r8, -16;)", 1}, {R"(^\s*\.reg \.b32 %mut_r;)", 1}}, 4},
      // The k-loop's pair polls %r1046; the prologue's (%r1040) is untouched.
      {"parity-inverted", &kEx48, {{R"(P1, \[%r342\], %r1046[;,])", 2}, {R"(P1, \[%r300\], %r1040[;,])", 2}},
       {{R"(P1, \[%r342\], %r1046[;,])", 0}, {R"(P1, \[%r342\], %mut_r[;,])", 2}, {R"(P1, \[%r300\], %r1040[;,])", 2},
        {R"(^\s*xor\.b32 %mut_r, %r1046, 1;)", 1}}, 6},
      {"arrival-count-plus1", &kEx48, {{R"(mov\.u32 \t%r171, 1;)", 1}, {R"(init\.shared::cta\.b64 \[%r148\], %r171;)", 1}},
       {{R"(init\.shared::cta\.b64 \[%r148\], 2;)", 1}, {R"(init\.shared::cta\.b64 \[%r148\], %r171;)", 0}}, 2},
      {"mask-past-cluster", &kEx48, {{load_a + "%rs26, %rd418;", 1}, {R"(\], %rs25, %rd418;)", 1}},
       {{load_a + "%mut_h, %rd418;", 1}, {R"(^\s*or\.b16 %mut_h, %rs26, 256;)", 1}, {R"(\], %rs25, %rd418;)", 1},
        {R"(^\s*\.reg \.b16 %mut_h;)", 1}}, 4},
      {"dst-offset64", &kEx48, {{R"(\[%r930\], \[%rd84)", 1}}, {{R"(\[%r930\+64\], \[%rd84)", 1}, {R"(\[%r935\], \[%rd85)", 1}}, 2},
      {"init-fences-removed", &kEx48, {{R"(^\s*fence\.mbarrier_init\.release\.cluster;)", 3}},
       {{R"(fence\.mbarrier_init)", 0}}, 3},
      {"init-fence-first-removed", &kEx48, {}, {{R"(^\s*fence\.mbarrier_init\.release\.cluster;)", 2}}, 1},
      {"release-removed", &kEx48, {{R"(mbarrier\.arrive\.shared::cluster\.b64  _, \[remAddr32\];)", 2}},
       {{R"(mbarrier\.arrive\.shared::cluster\.b64  _, \[remAddr32\];)", 1}}, 1},
      // The producer's loop polls [%r920]; its two branches go with it.
      {"empty-wait-removed", &kEx48, {{R"(\[%r920\], %r1063, %r922;)", 1}, {R"(^\s*@P1 bra DONE;)", 3}},
       {{R"(\[%r920\])", 0}, {R"(^\s*@P1 bra DONE;)", 2}, {R"(^\s*LAB_WAIT:)", 3}}, 3},
      {"store-fence-removed", &kEx49, {{R"(^\s*fence\.proxy\.async\.shared::cta;)", 1}},
       {{R"(fence\.proxy\.async)", 0}, {R"(cp\.async\.bulk\.tensor\.3d\.global\.shared::cta)", 1}}, 1},
      {"wait-group-read-removed", &kEx49, {{R"(^\s*cp\.async\.bulk\.wait_group\.read 1;)", 1}},
       {{R"(wait_group\.read)", 0}, {R"(cp\.async\.bulk\.tensor\.3d\.global\.shared::cta)", 1}}, 1},
  };
  const std::string ex48 = read(kEx48), ex49 = read(kEx49);
  for (const Mutant& m : mutants) {
    SCOPED_TRACE(m.name);
    expect_mutant(kScript, m, m.excerpt == &kEx48 ? ex48 : ex49);
    // The other example's excerpt holds no kernel this mutant is for: it passes unchanged.
    const ScriptRun other = script(std::string("filter ") + m.name, m.excerpt == &kEx48 ? ex49 : ex48);
    EXPECT_EQ(other.status, 0) << other.err;
    EXPECT_EQ(other.out, m.excerpt == &kEx48 ? ex49 : ex48);
  }
}

TEST(CheckCutlassMutants, AModuleWithoutCutlassPassesEveryMutantUnchanged) {
  const std::string ptx = read(fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/nvcc/test_debug_wait.sm_90a.ptx");
  for (const char* name : {"clean", "expect-long16", "parity-inverted", "store-fence-removed"}) {
    const ScriptRun r = script(std::string("filter ") + name, ptx);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, ptx) << name;
  }
  EXPECT_EQ(script("filter clean", read(kEx48)).out, read(kEx48));  // the clean mutant changes nothing
}

// A kernel that is there without the mutation's place (here: the excerpt without its
// arrive.expect_tx) is an error, never a silent clean run.
TEST(CheckCutlassMutants, AKernelWithoutThePlaceFailsLoudly) {
  std::string ptx = read(kEx48);
  ptx = std::regex_replace(ptx, std::regex(R"([^\n]*mbarrier\.arrive\.expect_tx[^\n]*\n)"), "");
  const ScriptRun r = script("filter expect-long16", ptx);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("mutant expect-long16: arrive.expect_tx: 0 in kernel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected 1"), std::string::npos) << r.err;
  const ScriptRun unknown = script("filter no-such-mutant", ptx);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no mutant 'no-such-mutant'"), std::string::npos) << unknown.err;
}

// The script's own check of every mutant on both excerpts (the same runs here on the whole modules
// nvcc makes, where nvcc is: docs/check-seeded.md), and its list: at least 8 mutants with a rule.
TEST(CheckCutlassMutants, SelftestPassesOnTheExcerptsAndTheListHasEightWithARule) {
  const ScriptRun r = script("selftest '" + kEx48.string() + "' '" + kEx49.string() + "'");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 failures"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "^ok "), 13) << r.out;
  const ScriptRun list = script("list");
  EXPECT_EQ(list.status, 0);
  EXPECT_GE(count(list.out, R"(expect \{'(timeout|always)')"), 8) << list.out;
}

}  // namespace
