// The mutations of tests/gpu/check/triton_tutorial_mutants.py (docs/check-seeded.md, "Triton
// tutorial mutants") as `tmakit check --ptx-filter` runs them, on the committed excerpts of the PTX
// Triton 3.6 made of the tutorials' kernels for sm_90a (tests/gpu/check/triton0?_*_excerpt.ptx):
// each changes the one place it names and nothing else, a module of another kernel passes
// unchanged, a kernel without the place makes the filter fail loudly, and the places it reports
// are the tutorial lines of the excerpts' own .loc. The expectations are read here from the
// excerpts by regex, independently of the script's finders. No GPU, no Triton: the script needs
// only Python.
#include <set>

#include "mutant_script.hpp"

namespace {

using namespace check_test;

const fs::path kScript = fs::path(TMAKIT_SOURCE_DIR) / "tests/gpu/check/triton_tutorial_mutants.py";
const fs::path kDir = fs::path(TMAKIT_SOURCE_DIR) / "tests/gpu/check";
const fs::path kTma = kDir / "triton09_tma_excerpt.ptx";
const fs::path kDescriptor = kDir / "triton09_descriptor_excerpt.ptx";
const fs::path kAttention = kDir / "triton06_attention_excerpt.ptx";

ScriptRun filter(const std::string& mutant, const std::string& ptx, const std::string& env = "") {
  return run_script(kScript, "filter " + mutant, ptx, env);
}

TEST(CheckTritonTutorialMutants, EachMutationChangesItsPlaceAndNothingElse) {
  const std::string arm = R"(mbarrier\.arrive\.expect_tx\.shared\.b64 _, )";
  const std::string init = R"(mbarrier\.init\.shared::cta\.b64 )";
  const std::string wait = R"(mbarrier\.try_wait\.parity\.shared\.b64 complete, )";
  const std::string fence = R"(^\s*fence\.proxy\.async\.shared::cta;)";
  const std::string wait_read = R"(^\s*cp\.async\.bulk\.wait_group\.read\s+0\s*;)";
  const std::vector<Mutant> mutants = {
      // The prologue's arm of stage 0; the other stage's and the loop's stay.
      {"tma-expect-long16", &kTma, {{arm + R"(\[%r45\], 32768;)", 1}, {arm + R"(\[%r\d+\], 32768;)", 3}},
       {{arm + R"(\[%r45\], 32784;)", 1}, {arm + R"(\[%r\d+\], 32768;)", 2}}, 2},
      {"tma-expect-short16", &kTma, {}, {{arm + R"(\[%r45\], 32752;)", 1}, {arm + R"(\[%r\d+\], 32768;)", 2}}, 2},
      {"tma-arrival-count-plus1", &kTma, {{init + R"(\[%r\d+\], 1;)", 3}},
       {{init + R"(\[%r45\], 2;)", 1}, {init + R"(\[%r\d+\], 1;)", 2}}, 2},
      {"tma-parity-flipped", &kTma, {{wait + R"(\[%r116\], %r260;)", 1}},
       {{wait + R"(\[%r116\], %mut_parity;)", 1}, {R"(^\s*xor\.b32 %mut_parity, %r260, 1;)", 1},
        {R"(^\s*\.reg \.b32 %mut_parity;)", 1}}, 4},
      // Both of the kernel's TMA stores (the epilogue's, and the one of a tile with no k-step)
      // lose the fence before them.
      {"tma-store-fences-removed", &kTma, {{fence, 2}}, {{fence, 0}}, 2},
      // The two waits before a rewrite of the epilogue's buffer go; the two at the loop's and the
      // kernel's end, with no shared store after them, stay.
      {"tma-wait-group-reads-removed", &kTma, {{wait_read, 4}}, {{wait_read, 2}}, 2},
      {"descriptor-expect-long16", &kDescriptor, {{arm + R"(\[%r59\], 32768;)", 1}}, {{arm + R"(\[%r59\], 32784;)", 1}}, 2},
      // a_desc's acquire; b_desc's and c_desc's stay, and so do the waits of the maps' publication.
      {"descriptor-tensormap-acquire-removed", &kDescriptor, {{R"(tensormap::generic\.acquire\.gpu \[ %rd\d+ \+ 0 \])", 3}},
       {{R"(tensormap::generic\.acquire\.gpu \[ %rd6 \+ 0 \])", 0}, {R"(tensormap::generic\.acquire\.gpu \[ %rd\d+ \+ 0 \])", 2}}, 1},
      {"attention-expect-short16", &kAttention, {{arm + R"(\[%r12\], 16384;)", 1}}, {{arm + R"(\[%r12\], 16368;)", 1}}, 2},
      // K's first stage (the second arm); V's stays.
      {"attention-expect-long16", &kAttention, {{arm + R"(\[%r14\], 8192;)", 1}},
       {{arm + R"(\[%r14\], 8208;)", 1}, {arm + R"(\[%r16\], 8192;)", 1}}, 2},
      {"attention-arrival-count-plus1", &kAttention, {{init + R"(\[%r12\], 1;)", 1}}, {{init + R"(\[%r12\], 2;)", 1}}, 2},
      // K's wait in the loop; Q's and V's poll %r755 as before.
      {"attention-parity-flipped", &kAttention, {{wait + R"(\[%r\d+\], %r755;)", 3}},
       {{wait + R"(\[%r27\], %mut_parity;)", 1}, {wait + R"(\[%r\d+\], %r755;)", 2}, {R"(^\s*xor\.b32 %mut_parity, %r755, 1;)", 1}},
       4},
      // The fence before the output's store; the one before K's first load stays.
      {"attention-store-fences-removed", &kAttention, {{fence, 2}}, {{fence, 1}}, 1},
  };
  for (const Mutant& m : mutants) {
    SCOPED_TRACE(m.name);
    expect_mutant(kScript, m, read(*m.excerpt));
    // The other excerpts hold other kernels (each its own .entry name): they pass unchanged.
    for (const fs::path* other : {&kTma, &kDescriptor, &kAttention}) {
      if (other == m.excerpt) continue;
      const std::string text = read(*other);
      const ScriptRun o = filter(m.name, text);
      EXPECT_EQ(o.status, 0) << o.err;
      EXPECT_EQ(o.out, text) << other->filename();
    }
  }
}

// The places the filter reports for the run (TUTORIAL_MUTANT_LOG) are the tutorial lines of the
// .loc in force at the instructions: the wait's and the arm's .loc of the excerpt, read here.
TEST(CheckTritonTutorialMutants, ThePlacesAreTheTutorialLinesOfTheLoc) {
  const std::string text = read(kAttention);
  // The .loc before each try_wait, and before the first arm (Q's), by regex over the text.
  std::set<int> waits;
  int arm = 0, loc = 0;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, std::regex(R"(^\s*\.loc\s+1\s+(\d+)\s)"))) loc = std::stoi(m[1]);
    if (l.find("mbarrier.try_wait.parity") != std::string::npos) waits.insert(loc);
    if (arm == 0 && l.find("mbarrier.arrive.expect_tx") != std::string::npos) arm = loc;
  }
  ASSERT_EQ(waits, (std::set<int>{69, 218}));  // the inner loop's K and V waits, Q's in the kernel body
  const fs::path log = fs::temp_directory_path() / ("tmakit-tutorial-places-" + std::to_string(::getpid()) + ".jsonl");
  fs::remove(log);
  const ScriptRun r = filter("attention-expect-short16", text, "TUTORIAL_MUTANT_LOG='" + log.string() + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(read(log));
  fs::remove(log);
  EXPECT_EQ(j["kernel"], "_attn_fwd");
  std::set<int> logged;
  for (const auto& p : j["places"]["waits"]) {
    EXPECT_EQ(p[0], "06-fused-attention.py");
    logged.insert(p[1].get<int>());
  }
  EXPECT_EQ(logged, waits);
  ASSERT_EQ(j["places"]["edited"].size(), 1u);
  EXPECT_EQ(j["places"]["edited"][0][1], arm);
  EXPECT_EQ(j["edits"].size(), 1u);
}

TEST(CheckTritonTutorialMutants, AModuleWithoutTheKernelPassesEveryMutantUnchanged) {
  const std::string ptx = read(fs::path(TMAKIT_SOURCE_DIR) / "tests/corpus/triton/tma_copy_host_desc.sm_90a.ptx");
  for (const char* name : {"tma-clean", "tma-expect-long16", "descriptor-tensormap-acquire-removed",
                           "attention-parity-flipped", "attention-store-fences-removed"}) {
    const ScriptRun r = filter(name, ptx);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, ptx) << name;
  }
  EXPECT_EQ(filter("tma-clean", read(kTma)).out, read(kTma));  // a clean mutant changes nothing
}

// The kernel without the place (the excerpt without its try_wait lines) is an error, never a
// silent clean run; an unknown mutant is a usage error.
TEST(CheckTritonTutorialMutants, AKernelWithoutThePlaceFailsLoudly) {
  const std::string ptx = std::regex_replace(read(kTma), std::regex(R"([^\n]*mbarrier\.try_wait[^\n]*\n)"), "");
  const ScriptRun r = filter("tma-parity-flipped", ptx);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("mutant tma-parity-flipped: mbarrier.try_wait.parity: 0 in kernel matmul_kernel_tma_persistent"),
            std::string::npos)
      << r.err;
  const ScriptRun unknown = filter("no-such-mutant", ptx);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no mutant 'no-such-mutant'"), std::string::npos) << unknown.err;
}

// The script's own check of every mutant on the three excerpts, and what each kernel offers:
// Triton 3.6 emits no fence.mbarrier_init in these kernels (it orders its inits with bar.sync
// alone), so that edit kind has nothing to remove in any of them.
TEST(CheckTritonTutorialMutants, SelftestPassesAndNoKernelHasAnInitFence) {
  const ScriptRun r = run_script(kScript, "selftest '" + kTma.string() + "' '" + kDescriptor.string() + "' '" +
                                              kAttention.string() + "'");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 failures"), std::string::npos) << r.out;
  EXPECT_EQ(count_matches(r.out, "^ok "), 7 + 3 + 6) << r.out;  // the mutants of the tma, descriptor, attention runs
  EXPECT_EQ(count_matches(r.out, R"(init-fences-removed \(none\))"), 3) << r.out;
  for (const fs::path* p : {&kTma, &kDescriptor, &kAttention}) EXPECT_EQ(count_matches(read(*p), "fence\\.mbarrier_init"), 0);
  const ScriptRun list = run_script(kScript, "list");
  EXPECT_EQ(list.status, 0);
  EXPECT_GE(count_matches(list.out, R"(expect \{'(timeout|always)')"), 15) << list.out;
}

}  // namespace
